package ros1

import (
	"github.com/tcs-robotics/tcs/bridge/livestatus"
	"github.com/tcs-robotics/tcs/msgs"
)

// TopicStatus is the run's live status on the ROS graph:
// diagnostic_msgs/DiagnosticStatus, latched, so that `rostopic echo
// /tcs/status` works with nothing to install and shows the last status at
// once, also while the run is paused. What it says and how often is
// bridge/livestatus's, shared with the ROS 2 transport.
const TopicStatus = livestatus.Topic

// liveStatus publishes /tcs/status: livestatus decides and builds, the
// latched publisher sends (non-blocking sends: a subscriber whose socket is
// full is dropped, never waited for).
type liveStatus struct {
	*livestatus.Publisher
	pub *Publisher
}

func newLiveStatus(n *Node) (*liveStatus, error) {
	p, err := n.Advertise(TopicStatus, msgs.DiagnosticStatus, true)
	if err != nil {
		return nil, err
	}
	return &liveStatus{Publisher: livestatus.New(func(frame []byte) { p.Write(frame) }), pub: p}, nil
}
