package layout

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// worldOf makes the world of scenario sc, closed with the test.
func worldOf(t *testing.T, sc *config.Scenario) dynamics.World {
	t.Helper()
	w, err := dynamics.New(sc.Dynamics.Model, len(sc.Robots), sc.Dynamics.Step.Nanoseconds(), sc.Dynamics.Params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dynamics.Close(w) })
	return w
}

const pursuit = `
name: t
duration: 1s
dynamics: {model: ships, step: 10ms}
ros:
  relay: [{topic: /predator/plan, from: planner}]
robots:
  - name: prey
    clients:
      - {name: prey, cmd: [x], api: ros, class: periodic, period: 10ms}
  - name: predator
    clients:
      - {name: controller, cmd: [x], api: ros, class: periodic, period: 10ms, priority: 20}
      - {name: planner, cmd: [x], api: ros, class: best-effort}
      - {name: logger, cmd: [x], api: native, class: periodic, period: 10ms, priority: 5}
`

// The layout of a two-robot scenario: robots from the dynamics model,
// clients indexed as in the run, relays by publishing client.
func TestOfPursuit(t *testing.T) {
	sc, err := config.Parse([]byte(pursuit), "pursuit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := worldOf(t, sc)
	l, err := Of(sc, w, 64)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Robots) != 2 || l.Robots[1].Name != "predator" || l.Robots[1].Commands != 6 || len(l.Robots[1].Joints) == 0 {
		t.Errorf("robots %+v", l.Robots)
	}
	want := []Client{{"prey", 0, true, false}, {"controller", 1, true, false}, {"planner", 1, true, true}, {"logger", 1, false, false}}
	if !reflect.DeepEqual(l.Clients, want) {
		t.Errorf("clients %+v, want %+v", l.Clients, want)
	}
	if !reflect.DeepEqual(l.Relays, []Relay{{"/predator/plan", 2}}) {
		t.Errorf("relays %+v", l.Relays)
	}
	// A bridge that carries fewer command values than the body takes
	// refuses the scenario, naming the file.
	if _, err := Of(sc, w, 1); err == nil || !strings.Contains(err.Error(), "pursuit.yaml") {
		t.Errorf("maxCommand 1: err %v", err)
	}
}

// A robot's command_topic names its actuator topic, always a
// Float64MultiArray (a ros2_control forward command controller's); without
// one, /<robot>/command, a Float64 for one value.
func TestCommandTopic(t *testing.T) {
	src := strings.Replace(pursuit, "  - name: prey\n", "  - name: prey\n    command_topic: forward_effort_controller/commands\n", 1)
	sc, err := config.Parse([]byte(src), "pursuit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Of(sc, worldOf(t, sc), 64)
	if err != nil {
		t.Fatal(err)
	}
	prey, pred := l.Robots[0], l.Robots[1]
	if prey.CommandName() != "/prey/forward_effort_controller/commands" || !prey.MultiArray() {
		t.Errorf("prey: %s, multi-array %v", prey.CommandName(), prey.MultiArray())
	}
	if pred.CommandName() != "/predator/command" || !pred.MultiArray() {
		t.Errorf("predator (6 values): %s, multi-array %v", pred.CommandName(), pred.MultiArray())
	}
	if one := (Robot{Name: "arm", Commands: 1}); one.CommandName() != "/arm/command" || one.MultiArray() {
		t.Errorf("one value: %s, multi-array %v", one.CommandName(), one.MultiArray())
	}
}

func TestCheck(t *testing.T) {
	robots := []Robot{{Name: "r", Commands: 3}}
	clients := []Client{{Name: "a", Robot: 0, ROS: true}, {Name: "n", Robot: 0}}
	if err := Check(robots, clients, []Relay{{Topic: "/p", From: 0}}, 3); err != nil {
		t.Fatalf("a valid layout: %v", err)
	}
	for _, c := range []struct {
		name    string
		robots  []Robot
		clients []Client
		relays  []Relay
		want    string
	}{
		{"client of no robot", robots, []Client{{Name: "a", Robot: 1}}, nil, "client a: robot 1 out of range"},
		{"too many commands", []Robot{{Name: "r", Commands: 4}}, clients, nil, "robot r: 4 command values, at most 3"},
		{"relay from a native client", robots, clients, []Relay{{Topic: "/p", From: 1}}, "relay /p: publisher 1 is not a ROS client"},
		{"relay from nobody", robots, clients, []Relay{{Topic: "/p", From: 5}}, "relay /p: publisher 5 is not a ROS client"},
	} {
		err := Check(c.robots, c.clients, c.relays, 3)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// The topic names are part of tcs's interface: clients' remaps, recorders
// and the README name them.
func TestTopics(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ClockTopic("pd"), "/tcs/pd/clock"},
		{SensorTopic("arm"), "/arm/joint_states"},
		{CommandTopic("arm"), "/arm/command"},
		{RelayTopic("/arm/plan"), "/tcs/relay/arm/plan"},
		{ClientRelayTopic("pd", "/arm/plan"), "/tcs/pd/relay/arm/plan"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestCheckSensors(t *testing.T) {
	imu := sensor.Sensor{Name: "imu", Kind: sensor.IMU}
	for _, c := range []struct {
		r    Robot
		want string
	}{
		{Robot{Name: "base", Sensors: []sensor.Sensor{imu, {Name: "front_range2", Kind: sensor.Range}}}, ""},
		{Robot{Name: "base", Sensors: []sensor.Sensor{{Name: "joint_states"}}}, "/base/joint_states, which is the robot's joint states"},
		{Robot{Name: "base", Sensors: []sensor.Sensor{{Name: "command"}}}, "/base/command, which is the robot's command topic"},
		{Robot{Name: "base", Command: "/base/imu", Sensors: []sensor.Sensor{imu}}, "which is the robot's command topic"},
		{Robot{Name: "base", Sensors: []sensor.Sensor{imu, imu}}, "which is sensor imu's topic"},
		{Robot{Name: "base", Sensors: []sensor.Sensor{{Name: "front-range"}}}, `"front-range" is not a ROS topic name`},
		{Robot{Name: "base", Sensors: []sensor.Sensor{{Name: "2d"}}}, `"2d" is not a ROS topic name`},
	} {
		err := checkSensors(c.r)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
}

func TestSensorTopics(t *testing.T) {
	r := Robot{Name: "base", Sensors: []sensor.Sensor{{Name: "imu"}, {Name: "front_range"}}}
	if got, want := r.SensorTopics(), []string{"/base/joint_states", "/base/imu", "/base/front_range"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}
