// Package layout is what a ROS bridge needs to know of a run, whatever
// its transport (bridge/ros1, bridge/ros2): each robot's namespace, the
// joints of its JointState and the length of its command, each client's
// robot and whether it is a ROS node, and the topics relayed between
// clients. Of builds it from a scenario.
package layout

import (
	"fmt"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// Robot is one robot as a bridge publishes it.
type Robot struct {
	// Name is the robot's namespace: its topics are /<Name>/joint_states
	// (sensor) and, unless Command names another, /<Name>/command
	// (actuator).
	Name string
	// Command is its actuator topic when the scenario names one (a
	// ros2_control forward command controller's /<controller>/commands):
	// then always a std_msgs/Float64MultiArray. Empty: CommandTopic(Name).
	Command string
	// Joints names the joints of its JointState; the observation a sample
	// carries is [positions..., velocities...].
	Joints []string
	// Commands is how many values its command carries: 1 (or 0) is a
	// std_msgs Float64, more a Float64MultiArray.
	Commands int
	// Sensors are the world's sensors of its body, published with each
	// sample on WorldSensorTopic(Name, s.Name) from the same observation
	// as its JointState.
	Sensors []sensor.Sensor
}

// CommandName is r's actuator topic.
func (r Robot) CommandName() string {
	if r.Command != "" {
		return r.Command
	}
	return CommandTopic(r.Name)
}

// SensorTopics lists the topics the world publishes for r: its joint
// states and its world sensors' topics. It allocates.
func (r Robot) SensorTopics() []string {
	out := []string{SensorTopic(r.Name)}
	for _, s := range r.Sensors {
		out = append(out, WorldSensorTopic(r.Name, s.Name))
	}
	return out
}

// MultiArray reports whether r's command is a std_msgs/Float64MultiArray
// (more than one value, or a controller's topic the scenario named), not a
// Float64.
func (r Robot) MultiArray() bool { return r.Commands > 1 || r.Command != "" }

// Client is one client of the run; a Layout's clients are indexed like
// the run's (robots in order, their clients in order).
type Client struct {
	// Name is the client's node name; it runs in its robot's namespace.
	Name  string
	Robot int
	// ROS is false for a client that is not a ROS node (a native one): it
	// gets no clock and is not waited for.
	ROS bool
	// ClockAtBegin: the client's private clock gets its first message when
	// virtual time begins, not latched before it starts. A best-effort node
	// (a planner) computes from its first clock on; had it got the clock
	// while the run was starting, ungated, that computation would not be
	// charged (a 0.2 s plan once showed 0.1 s of ROS time).
	ClockAtBegin bool
}

// Relay is a topic between clients (a planner's plans to a controller):
// the bridge takes what client From publishes on Topic and hands it to each
// other client that reads it when that client's progress reaches the
// publish time.
type Relay struct {
	Topic string
	From  int
}

// Layout is a run as a bridge sees it.
type Layout struct {
	Robots  []Robot
	Clients []Client
	Relays  []Relay
}

// Of builds the layout of sc, whose world is w (the run's: a world is made
// once per run, as one in another process or a simulator must not be
// started or stepped for a look). Joints and command lengths come from w
// (its JointNames when it has them, else one joint "<model>_joint"); a
// body taking more than maxCommand command values is an error naming the
// file.
func Of(sc *config.Scenario, w dynamics.World, maxCommand int) (Layout, error) {
	var l Layout
	if w == nil || w.Bodies() < len(sc.Robots) {
		return l, fmt.Errorf("%s: dynamics: no world of %d bodies for the layout", sc.File, len(sc.Robots))
	}
	for j, r := range sc.Robots {
		rb := Robot{Name: r.Name, Joints: dynamics.JointNames(w, sc.Dynamics.Model, j), Commands: w.CommandLen(j),
			Sensors: dynamics.Sensors(w, j)}
		if r.CommandTopic != "" {
			rb.Command = r.Command()
		}
		if err := checkSensors(rb); err != nil {
			return l, fmt.Errorf("%s: dynamics %s: robot %s: %w", sc.File, sc.Dynamics.Model, r.Name, err)
		}
		if rb.Commands > maxCommand {
			return l, fmt.Errorf("%s: dynamics %s: body %d takes %d command values, the ROS bridge at most %d",
				sc.File, sc.Dynamics.Model, j, rb.Commands, maxCommand)
		}
		l.Robots = append(l.Robots, rb)
		for _, c := range r.Clients {
			ros := c.API == config.APIROS
			l.Clients = append(l.Clients, Client{Name: c.Name, Robot: j, ROS: ros,
				ClockAtBegin: ros && c.Class == config.ClassBestEffort})
		}
	}
	for _, rl := range sc.ROS.Relay {
		from, ok := sc.FindClient(rl.From)
		if !ok {
			return l, fmt.Errorf("%s: ros.relay %s: no client %q", sc.File, rl.Topic, rl.From)
		}
		l.Relays = append(l.Relays, Relay{Topic: rl.Topic, From: from.Index})
	}
	return l, nil
}

// checkSensors refuses a world sensor whose name is no ROS topic name or
// whose topic is another of the robot's.
func checkSensors(r Robot) error {
	taken := map[string]string{SensorTopic(r.Name): "the robot's joint states", r.CommandName(): "the robot's command topic"}
	for _, s := range r.Sensors {
		ok := s.Name != ""
		for i, c := range s.Name {
			ok = ok && (c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9')
		}
		if !ok {
			return fmt.Errorf("sensor %q is not a ROS topic name (letters, digits and _, not first a digit): rename its site or sensor in the model", s.Name)
		}
		topic := WorldSensorTopic(r.Name, s.Name)
		if what, dup := taken[topic]; dup {
			return fmt.Errorf("sensor %q would publish on %s, which is %s: rename its site or sensor in the model", s.Name, topic, what)
		}
		taken[topic] = "sensor " + s.Name + "'s topic"
	}
	return nil
}

// Check reports what a gate cannot serve: a client of no robot, a robot
// taking more than maxCommand command values, a relay whose publisher is
// not a ROS client.
func Check(robots []Robot, clients []Client, relays []Relay, maxCommand int) error {
	for _, c := range clients {
		if c.Robot < 0 || c.Robot >= len(robots) {
			return fmt.Errorf("client %s: robot %d out of range", c.Name, c.Robot)
		}
	}
	for _, r := range robots {
		if r.Commands > maxCommand {
			return fmt.Errorf("robot %s: %d command values, at most %d", r.Name, r.Commands, maxCommand)
		}
	}
	for _, rl := range relays {
		if rl.From < 0 || rl.From >= len(clients) || !clients[rl.From].ROS {
			return fmt.Errorf("relay %s: publisher %d is not a ROS client", rl.Topic, rl.From)
		}
	}
	return nil
}
