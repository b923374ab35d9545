//go:build ros2

package ros2

import (
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/dynamics"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

// Bridge is the ROS 2 side of one run: the bridge's participant and its
// gate. It implements driver.Bridge.
type Bridge struct {
	*Gate
	Node *Node
}

// StartBridge prepares the ROS 2 side of scenario sc before its clients
// start: the participant (bound to loopback), the clocks latched at 0, the
// sensor and actuator topics, ros_discovery_info.
func StartBridge(sc *config.Scenario, log zerolog.Logger) (b *Bridge, err error) {
	distro, err := rmsgs.ParseDistro(sc.ROS.Distro)
	if sc.ROS.Distro == "" {
		distro, err = rmsgs.Humble, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: ros.distro: %w", sc.File, err)
	}
	b = &Bridge{}
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()
	if b.Node, err = NewNode(NodeConf{Distro: distro}); err != nil {
		return nil, err
	}
	gc := GateConf{Node: b.Node, Log: log}
	w, err := dynamics.New(sc.Dynamics.Model, len(sc.Robots), sc.Dynamics.Step.Nanoseconds(), sc.Dynamics.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: dynamics: %w", sc.File, err)
	}
	for j, r := range sc.Robots {
		gr := GateRobot{Name: r.Name, Joints: []string{sc.Dynamics.Model + "_joint"}, Commands: w.CommandLen(j)}
		if jn, ok := w.(dynamics.JointNamer); ok {
			gr.Joints = jn.JointNames(j)
		}
		gc.Robots = append(gc.Robots, gr)
	}
	for j, r := range sc.Robots {
		for _, c := range r.Clients {
			gc.Clients = append(gc.Clients, GateClient{Name: c.Name, Robot: j, ROS: c.API == config.APIROS})
		}
	}
	for _, rl := range sc.ROS.Relay {
		from, ok := sc.FindClient(rl.From)
		if !ok {
			return nil, fmt.Errorf("ros.relay %s: no client %q", rl.Topic, rl.From)
		}
		gc.Relays = append(gc.Relays, GateRelay{Topic: rl.Topic, From: from.Index})
	}
	if b.Gate, err = NewGate(gc); err != nil {
		return nil, err
	}
	return b, nil
}

// Close ends the gate and the participant.
func (b *Bridge) Close() error {
	var errs []error
	if b.Gate != nil {
		b.Gate.Close()
	}
	if b.Node != nil {
		errs = append(errs, b.Node.Close())
	}
	return errors.Join(errs...)
}
