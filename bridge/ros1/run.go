package ros1

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/layout"
	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// Bridge is the ROS 1 side of one run: the master (the one that answers at
// the scenario's ros.master or ROS_MASTER_URI, or an embedded one on
// loopback), the bridge's node and its gate.
type Bridge struct {
	*Gate
	Node   *Node
	Master *master.Master // nil when an outside master is used
	status *liveStatus    // /tcs/status
}

// StartBridge prepares the ROS side of scenario sc before its clients
// start: master, /use_sim_time, clocks latched at 0, sensor and actuator
// topics, those of world w (the run's).
func StartBridge(sc *config.Scenario, w dynamics.World, log zerolog.Logger) (b *Bridge, err error) {
	uri := sc.ROS.Master
	if uri == "" {
		uri = os.Getenv("ROS_MASTER_URI")
	}
	if uri == "" {
		uri = DefaultMasterURI
	}
	b = &Bridge{}
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()
	b.Master, _, err = EnsureMaster(uri, time.Second, log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.File, err)
	}
	if b.Master != nil {
		uri = b.Master.URI()
	}
	b.Node, err = NewNode(NodeConf{Name: "/tcs", MasterURI: uri, Log: log})
	if err != nil {
		return nil, err
	}
	l, err := layout.Of(sc, w, MaxCommand)
	if err != nil {
		return nil, err
	}
	gc := GateConf{Node: b.Node, Log: log, Robots: l.Robots, Clients: l.Clients, Relays: l.Relays}
	// ROS nodes read /use_sim_time once, as they start.
	if err := b.Node.SetParamBool("/use_sim_time", true); err != nil {
		return nil, err
	}
	if b.Gate, err = NewGate(gc); err != nil {
		return nil, err
	}
	if b.status, err = newLiveStatus(b.Node); err != nil {
		return nil, err
	}
	if b.Master != nil {
		b.Master.GuardPublishers(b.Gate.Refuse)
		b.Master.WatchUnsubscribes(b.Gate.Unsubscribed)
	}
	return b, nil
}

// ServeControl offers the run's control services on the bridge's node
// (/tcs/pause, /tcs/unpause, /tcs/step: control.go), each call answered by
// ctl's dispatch loop. They are unregistered when the bridge closes.
// A request that takes effect publishes /tcs/status at once with the
// run's new state.
func (b *Bridge) ServeControl(ctl *simcontrol.Controller) error {
	var done func(simcontrol.Reply)
	if b.status != nil {
		done = func(rep simcontrol.Reply) { b.status.SetState(rep.State, rep.Time) }
	}
	if err := serveControl(b.Node, ctl, done); err != nil {
		return fmt.Errorf("ros1: control services: %w", err)
	}
	return nil
}

// PublishStatus takes the dispatch loop's live status (the driver's
// StatusPublisher) and publishes it on /tcs/status when due
// (bridge/livestatus). It does not allocate once its buffers have grown.
func (b *Bridge) PublishStatus(st *simcontrol.Status) {
	if b.status != nil {
		b.status.Update(st)
	}
}

// MasterBusy reports whether the embedded master has a call to answer
// (master.Master.Busy, look: also a connection not accepted yet); false
// with a master tcs did not start.
func (b *Bridge) MasterBusy(look bool) bool { return b.Master != nil && b.Master.Busy(look) }

// MasterFd returns the embedded master's listening socket
// (master.Master.ListenerFd), -1 with a master tcs did not start.
func (b *Bridge) MasterFd() int {
	if b.Master == nil {
		return -1
	}
	return b.Master.ListenerFd()
}

// Close ends the gate, the node and the embedded master.
func (b *Bridge) Close() error {
	var errs []error
	if b.Gate != nil {
		b.Gate.Close()
	}
	if b.Node != nil {
		errs = append(errs, b.Node.Close())
	}
	if b.Master != nil {
		errs = append(errs, b.Master.Close())
	}
	return errors.Join(errs...)
}
