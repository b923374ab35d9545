//go:build ros2

package ros2

import (
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/layout"
	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/dynamics"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
)

// Bridge is the ROS 2 side of one run: the bridge's participant and its
// gate. It implements driver.Bridge.
type Bridge struct {
	*Gate
	Node   *Node
	sim    *SimServer
	status *liveStatus // /tcs/status
	log    zerolog.Logger
}

// StartBridge prepares the ROS 2 side of scenario sc before its clients
// start: the participant (bound to loopback), the clocks latched at 0, the
// sensor and actuator topics of world w (the run's), the live status,
// ros_discovery_info.
func StartBridge(sc *config.Scenario, w dynamics.World, log zerolog.Logger) (b *Bridge, err error) {
	distro, err := rmsgs.ParseDistro(sc.ROS.Distro)
	if sc.ROS.Distro == "" {
		distro, err = rmsgs.Iron, nil // Jazzy, the ROS 2 release tcs is tested with
	}
	if err != nil {
		return nil, fmt.Errorf("%s: ros.distro: %w", sc.File, err)
	}
	b = &Bridge{log: log}
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()
	if b.Node, err = NewNode(NodeConf{Distro: distro}); err != nil {
		return nil, err
	}
	l, err := layout.Of(sc, w, MaxCommand)
	if err != nil {
		return nil, err
	}
	gc := GateConf{Node: b.Node, Log: log, Robots: l.Robots, Clients: l.Clients, Relays: l.Relays}
	if b.Gate, err = NewGate(gc); err != nil {
		return nil, err
	}
	if b.status, err = newLiveStatus(b.Node); err != nil {
		return nil, err
	}
	if err := b.Node.Announce(); err != nil {
		return nil, err
	}
	return b, nil
}

// ServeSimulation serves simulation_interfaces under /tcs on the bridge's
// participant (SimServer), carrying the requests to ctl; resettable says
// whether the world can be put back in its initial state
// (ResetSimulation SCOPE_STATE). A request that takes effect publishes
// /tcs/status at once with the run's new state. Close stops serving.
func (b *Bridge) ServeSimulation(ctl *simcontrol.Controller, resettable bool) error {
	if b.sim != nil {
		return errors.New("ros2: the simulation services are served already")
	}
	conf := SimConf{Node: b.Node, Control: ctl, Resettable: resettable, Log: b.log}
	if b.status != nil {
		conf.Changed = func(rep simcontrol.Reply) { b.status.SetState(rep.State, rep.Time) }
	}
	s, err := NewSimServer(conf)
	if err != nil {
		return fmt.Errorf("ros2: simulation services: %w", err)
	}
	b.sim = s
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

// Close ends the simulation services, the gate and the participant, and
// reports publications of the live status that failed.
func (b *Bridge) Close() error {
	var errs []error
	if b.sim != nil {
		b.sim.Close()
	}
	if s := b.status; s != nil {
		if n := s.failed.Load(); n > 0 {
			b.log.Warn().Int64("failed", n).Err(*s.err.Load()).Msg("ros2: publications of " + TopicStatus + " failed")
		}
	}
	if b.Gate != nil {
		b.Gate.Close()
	}
	if b.Node != nil {
		errs = append(errs, b.Node.Close())
	}
	return errors.Join(errs...)
}
