//go:build ros2

package ros2

import (
	"sync/atomic"

	"github.com/tcs-robotics/tcs/bridge/livestatus"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

// TopicStatus is the run's live status on the ROS 2 graph (DDS topic
// rt/tcs/status): diagnostic_msgs/msg/DiagnosticStatus, RELIABLE +
// TRANSIENT_LOCAL + KEEP_LAST 1 (Latched, as the ROS 1 topic is latched), so
// that `ros2 topic echo /tcs/status` shows the last status at once, also
// while the run is paused. What it says and how often is
// bridge/livestatus's, the same as on ROS 1.
const TopicStatus = livestatus.Topic

// liveStatus publishes /tcs/status: livestatus decides and builds the
// status as a ROS 1 frame, which is transcoded to CDR and written. The
// write runs on the dispatch thread (or a control request's goroutine)
// under livestatus's lock; with a KEEP_LAST writer it does not block
// (Writer.Write) and it does not allocate. A failure is counted and
// reported when the bridge closes: the dispatch thread does not log.
type liveStatus struct {
	*livestatus.Publisher
	w      *Writer
	buf    []byte // the CDR sample, under livestatus's lock
	failed atomic.Int64
	err    atomic.Pointer[error] // the first failure
}

func newLiveStatus(n *Node) (*liveStatus, error) {
	w, err := n.Writer(TopicStatus, rmsgs.DiagnosticStatus, Latched)
	if err != nil {
		return nil, err
	}
	s := &liveStatus{w: w, buf: make([]byte, 0, 1024)}
	s.Publisher = livestatus.New(s.write)
	return s, nil
}

func (s *liveStatus) write(frame []byte) {
	var err error
	if s.buf, err = rmsgs.AppendDiagnosticStatusFromROS1(s.buf[:0], frame); err == nil {
		err = s.w.Write(s.buf)
	}
	if err != nil {
		first := err // on the heap, on this path only
		s.failed.Add(1)
		s.err.CompareAndSwap(nil, &first)
	}
}
