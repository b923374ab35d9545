package master

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/test/rosenv"
)

// Interop tests against Debian's ROS 1 (ros_comm 1.15). They need:
//
//	apt-get install -y --no-install-recommends python3-rosmaster python3-roslaunch \
//	  python3-rospy python3-rosbag python3-rostopic python3-rosparam python3-rosnode \
//	  python3-std-msgs rosout
//
// and skip, saying so, where a tool is missing. Every process runs in its
// own process group, which the test kills by its ID.

const rospyPython = rosenv.Python

// rosTest is one test's ROS environment around its own master.
type rosTest struct {
	*rosenv.Env
	m *Master
}

func newROSTest(t *testing.T, tools ...string) *rosTest {
	t.Helper()
	return newROSTestConf(t, Conf{}, tools...)
}

func newROSTestConf(t *testing.T, conf Conf, tools ...string) *rosTest {
	t.Helper()
	m := newTestMaster(t, conf)
	return &rosTest{Env: rosenv.New(t, m.URI(), tools...), m: m}
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	rosenv.Eventually(t, timeout, what, cond)
}

func TestInteropRosparam(t *testing.T) {
	r := newROSTest(t)
	r.MustRun(20*time.Second, "rosparam", "set", "/tcs/a", "7")
	r.MustRun(20*time.Second, "rosparam", "set", "/tcs/dict", "{x: 1.5, s: 'a<b&c', l: [1, 2], enabled: true}")
	if out := r.MustRun(20*time.Second, "rosparam", "get", "/tcs/a"); strings.TrimSpace(out) != "7" {
		t.Errorf("rosparam get /tcs/a: %q", out)
	}
	out := r.MustRun(20*time.Second, "rosparam", "get", "/tcs/dict")
	for _, want := range []string{"x: 1.5", "s: a<b&c", "enabled: true", "- 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("rosparam get /tcs/dict: no %q in\n%s", want, out)
		}
	}
	out = r.MustRun(20*time.Second, "rosparam", "list")
	for _, want := range []string{"/tcs/a", "/tcs/dict/x", "/tcs/dict/s", "/tcs/dict/l", "/tcs/dict/enabled"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("rosparam list: no %s in\n%s", want, out)
		}
	}
	// The values as the master holds them: types kept.
	got := rpc(t, r.m.URI(), "getParam", "/t", "/tcs")
	want := []any{1, "Parameter [/tcs]", map[string]any{"a": 7, "dict": map[string]any{
		"x": 1.5, "s": "a<b&c", "l": []any{1, 2}, "enabled": true}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("getParam /tcs = %#v, want %#v", got, want)
	}
	r.MustRun(20*time.Second, "rosparam", "delete", "/tcs/a")
	if out, err := r.Run(20*time.Second, "rosparam", "get", "/tcs/a"); err == nil {
		t.Errorf("rosparam get of a deleted parameter succeeded: %s", out)
	}
}

func TestInteropTopics(t *testing.T) {
	r := newROSTest(t)
	// rostopic echo waits for a publisher before it subscribes (the
	// publisherUpdate path is exercised by the rospy and roscpp tests).
	pub := r.Start("rostopic", "pub", "-r", "10", "/chatter", "std_msgs/String", "hi")
	echo := r.Start("rostopic", "echo", "-n", "3", "/chatter")
	echo.Wait(t, 30*time.Second)
	if n := strings.Count(echo.Output(), `data: "hi"`); n != 3 {
		t.Errorf("rostopic echo -n 3 printed %d messages:\n%s", n, echo.Output())
	}
	// Another one.
	if out := r.MustRun(30*time.Second, "rostopic", "echo", "-n", "1", "/chatter"); !strings.Contains(out, `data: "hi"`) {
		t.Errorf("second rostopic echo: %s", out)
	}
	nodes := r.MustRun(20*time.Second, "rosnode", "list")
	var node string
	for _, l := range strings.Split(nodes, "\n") {
		if strings.HasPrefix(l, "/rostopic_") {
			node = l
		}
	}
	if node == "" {
		t.Fatalf("rosnode list does not list the publisher:\n%s", nodes)
	}
	if out := r.MustRun(20*time.Second, "rostopic", "list"); !strings.Contains(out, "/chatter\n") {
		t.Errorf("rostopic list:\n%s", out)
	}
	if out := r.MustRun(20*time.Second, "rostopic", "type", "/chatter"); strings.TrimSpace(out) != "std_msgs/String" {
		t.Errorf("rostopic type: %q", out)
	}
	// rosnode info talks to the node through the URI lookupNode gives.
	if info := r.MustRun(20*time.Second, "rosnode", "info", node); !strings.Contains(info, "/chatter [std_msgs/String]") {
		t.Errorf("rosnode info %s:\n%s", node, info)
	}
	// The publisher unregisters when stopped.
	pub.Stop()
	eventually(t, 10*time.Second, "publisher unregistered", func() (bool, string) {
		out, _ := r.Run(20*time.Second, "rosnode", "list")
		return !strings.Contains(out, "/rostopic_"), out
	})
}

// probeNode is a rospy node: it reads its private parameter, follows a
// cached (subscribed) parameter and the last message on ping, logs and
// publishes them at 10 Hz.
const probeNode = `#!/usr/bin/python3
import faulthandler, signal
faulthandler.register(signal.SIGUSR1, all_threads=True)
import rospy
from std_msgs.msg import String
rospy.init_node('tcs_probe')
greeting = rospy.get_param('~greeting', 'none')
last = ['none']
def on_ping(msg):
    last[0] = msg.data
rospy.Subscriber('/ping', String, on_ping)
pub = rospy.Publisher('probe', String, queue_size=10)
rate = rospy.Rate(10)
while not rospy.is_shutdown():
    value = rospy.get_param_cached('/shared/value', 'unset')
    rospy.loginfo('probe %s %s', greeting, value)
    pub.publish(String('%s %s ping=%s' % (greeting, value, last[0])))
    try:
        rate.sleep()
    except rospy.ROSInterruptException:
        break
`

func (r *rosTest) writeProbe(dir string) string {
	r.T.Helper()
	path := filepath.Join(dir, "probe.py")
	if err := os.WriteFile(path, []byte(probeNode), 0o755); err != nil {
		r.T.Fatal(err)
	}
	return path
}

func TestInteropRospyNode(t *testing.T) {
	var calls rosenv.Buffer
	log := zerolog.New(&calls).Level(zerolog.DebugLevel)
	r := newROSTestConf(t, Conf{Log: &log})
	r.MustRun(20*time.Second, "rosparam", "set", "/shared/value", "1")
	node := r.Start(rospyPython, r.writeProbe(r.Dir), "_greeting:=hello")
	node.StackSignal = syscall.SIGUSR1
	out := r.MustRun(30*time.Second, "rostopic", "echo", "-n", "1", "/probe")
	if !strings.Contains(out, `data: "hello 1 ping=none"`) {
		t.Fatalf("rostopic echo /probe:\n%s\nnode:\n%s", out, node.Output())
	}
	got := rpc(t, r.m.URI(), "lookupNode", "/t", "/tcs_probe")
	if code := got.([]any)[0]; code != 1 {
		t.Errorf("lookupNode /tcs_probe: %v", got)
	}
	// rospy registers its logger services.
	got = rpc(t, r.m.URI(), "lookupService", "/t", "/tcs_probe/get_loggers")
	if uri, _ := got.([]any)[2].(string); !strings.HasPrefix(uri, "rosrpc://") {
		t.Errorf("lookupService: %v", got)
	}
	// The cached parameter follows the change: paramUpdate reached the node.
	r.MustRun(20*time.Second, "rosparam", "set", "/shared/value", "2")
	eventually(t, 20*time.Second, "the node sees the new value", func() (bool, string) {
		out, _ := r.Run(20*time.Second, "rostopic", "echo", "-n", "1", "/probe")
		return strings.Contains(out, `data: "hello 2 `), out
	})
	// A publisher that comes after the subscriber: the node hears of it
	// through publisherUpdate.
	ping := r.Start("rostopic", "pub", "-r", "10", "/ping", "std_msgs/String", "pong")
	eventually(t, 20*time.Second, "the node hears /ping", func() (bool, string) {
		out, _ := r.Run(20*time.Second, "rostopic", "echo", "-n", "1", "/probe")
		return strings.Contains(out, `ping=pong"`), out
	})
	ping.Stop()
	if out := r.MustRun(20*time.Second, "rosnode", "list"); !strings.Contains(out, "/tcs_probe\n") {
		t.Errorf("rosnode list:\n%s", out)
	}
	// Its parameters came from the cache after the first read: each of
	// its log lines read /rosout_disable_topics_generation, which the
	// master sets (unset, rospy asks the master at every line).
	lines := strings.Count(node.Output(), "probe hello")
	subs := 0
	for _, l := range strings.Split(calls.String(), "\n") {
		if strings.Contains(l, `"method":"subscribeParam"`) && strings.Contains(l, `"caller":"/tcs_probe"`) {
			subs++
		}
	}
	t.Logf("the node logged %d lines, called subscribeParam %d times", lines, subs)
	if lines < 10 || subs > 4 {
		t.Errorf("the node logged %d lines and called subscribeParam %d times: want ≥ 10 lines, ≤ 4 calls (its 2 parameters, each at most twice)", lines, subs)
	}
	// Stopped, it unregisters its topics and services (not its parameter
	// subscriptions: rospy never ends those, with rosmaster too).
	if node.Stop() {
		t.Fatalf("the rospy node did not exit within 15 s of SIGTERM, so it could not unregister; its output:\n%s", node.Output())
	}
	eventually(t, 10*time.Second, "node unregistered", func() (bool, string) {
		got := fmt.Sprint(rpc(t, r.m.URI(), "getSystemState", "/t"))
		return !strings.Contains(got, "/tcs_probe"), got + "\nnode output:\n" + node.Output()
	})
}

// rosout is a roscpp node (XmlRpc++): it subscribes to /rosout and
// republishes to /rosout_agg what rospy nodes log.
func TestInteropRoscppRosout(t *testing.T) {
	const rosout = "/usr/lib/rosout/rosout"
	if _, err := os.Stat(rosout); err != nil {
		t.Skipf("roscpp's rosout is not installed (apt-get install rosout): %v", err)
	}
	r := newROSTest(t)
	agg := r.Start(rosout)
	eventually(t, 20*time.Second, "rosout registers", func() (bool, string) {
		got := rpc(t, r.m.URI(), "lookupNode", "/t", "/rosout")
		return got.([]any)[0] == 1, fmt.Sprint(got, agg.Output())
	})
	probe := r.Start(rospyPython, r.writeProbe(r.Dir), "_greeting:=cpp")
	out, err := r.Run(30*time.Second, "rostopic", "echo", "-n", "1", "/rosout_agg")
	if err != nil {
		// What each node saw, and what the master has registered, to tell
		// which link of probe → /rosout → rosout → /rosout_agg → echo failed.
		// The probe logs at 10 Hz: its last lines are enough.
		logged := probe.Output()
		if n := len(logged); n > 1500 {
			logged = "…" + logged[n-1500:]
		}
		t.Fatalf("rostopic echo /rosout_agg: %v\n%s\nrosout:\n%s\nprobe:\n%s\nthe master's system state: %v",
			err, out, agg.Output(), logged, rpc(t, r.m.URI(), "getSystemState", "/t"))
	}
	if !strings.Contains(out, `name: "/tcs_probe"`) || !strings.Contains(out, "probe cpp") {
		t.Errorf("rostopic echo /rosout_agg:\n%s\nrosout:\n%s", out, agg.Output())
	}
	// roscpp reads parameters through the master too.
	if out := r.MustRun(20*time.Second, "rosnode", "info", "/rosout"); !strings.Contains(out, "/rosout_agg") {
		t.Errorf("rosnode info /rosout:\n%s", out)
	}
}

const probeLaunch = `<launch>
  <param name="robot_description" textfile="$(find tcs_probe)/package.xml"/>
  <rosparam ns="cfg">{gains: {p: 1.5, d: 0.1}, names: [a, b]}</rosparam>
  <node pkg="tcs_probe" type="probe.py" name="talker" ns="ns1">
    <param name="greeting" value="launched"/>
  </node>
</launch>
`

const probePackage = `<?xml version="1.0"?>
<package format="2">
  <name>tcs_probe</name>
  <version>0.0.1</version>
  <description>tcs master interop probe</description>
  <maintainer email="tcs@example.com">tcs</maintainer>
  <license>MIT</license>
  <buildtool_depend>catkin</buildtool_depend>
</package>
`

func TestInteropRoslaunch(t *testing.T) {
	r := newROSTest(t, "roslaunch")
	pkg := filepath.Join(r.Dir, "pkgs", "tcs_probe")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"package.xml": probePackage, "probe.launch": probeLaunch} {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.writeProbe(pkg)
	r.Vars = append(r.Vars, "ROS_PACKAGE_PATH="+filepath.Join(r.Dir, "pkgs"))
	launch := r.Start("roslaunch", "tcs_probe", "probe.launch")
	out, err := r.Run(40*time.Second, "rostopic", "echo", "-n", "1", "/ns1/probe")
	if err != nil || !strings.Contains(out, `data: "launched unset ping=none"`) {
		t.Fatalf("echo the launched node: %v\n%s\nroslaunch:\n%s", err, out, launch.Output())
	}
	// roslaunch sets parameters with system.multicall.
	got := rpc(t, r.m.URI(), "getParam", "/t", "/cfg")
	want := []any{1, "Parameter [/cfg]", map[string]any{
		"gains": map[string]any{"p": 1.5, "d": 0.1}, "names": []any{"a", "b"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("getParam /cfg = %#v, want %#v", got, want)
	}
	got = rpc(t, r.m.URI(), "getParam", "/t", "/robot_description")
	if !reflect.DeepEqual(got, []any{1, "Parameter [/robot_description]", probePackage}) {
		t.Errorf("robot_description: %#v", got)
	}
	if out := r.MustRun(20*time.Second, "rosparam", "get", "/ns1/talker/greeting"); strings.TrimSpace(out) != "launched" {
		t.Errorf("private parameter: %q", out)
	}
	launch.Stop()
	if !strings.Contains(launch.Output(), "started with pid") {
		t.Errorf("roslaunch output:\n%s", launch.Output())
	}
}

func TestInteropRosbag(t *testing.T) {
	r := newROSTest(t, "rosbag")
	r.Start("rostopic", "pub", "-r", "20", "/chatter", "std_msgs/String", "bagged")
	eventually(t, 20*time.Second, "publisher registered", func() (bool, string) {
		got := rpc(t, r.m.URI(), "getPublishedTopics", "/t", "")
		return strings.Contains(fmt.Sprint(got), "/chatter"), fmt.Sprint(got)
	})
	bag := filepath.Join(r.Dir, "chatter.bag")
	r.MustRun(40*time.Second, "rosbag", "record", "--duration=2", "-O", bag, "/chatter")
	out := r.MustRun(20*time.Second, "rosbag", "info", bag)
	if !strings.Contains(out, "std_msgs/String") || !strings.Contains(out, "/chatter") || strings.Contains(out, "messages:    0") {
		t.Errorf("rosbag info:\n%s", out)
	}
	if _, err := os.Stat(bag); errors.Is(err, os.ErrNotExist) {
		t.Errorf("no bag written")
	}
}
