package ros1

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/simcontrol"
	"github.com/tcs-robotics/tcs/simcontrol/simcontroltest"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// Debian's rosservice calls the control services through the master (the
// embedded one: lookupService) and parses the bridge's handshake and
// responses with rospy: a wrong MD5, type, framing or ok byte fails here.
func TestInteropRosserviceControl(t *testing.T) {
	m, n, l := controlGraph(t)
	env := rosenv.New(t, m.URI(), "rosservice")
	list := env.MustRun(30*time.Second, "rosservice", "list")
	for _, s := range []string{ServicePause, ServiceUnpause, ServiceStep} {
		if !strings.Contains(list, s+"\n") {
			t.Errorf("rosservice list lacks %s:\n%s", s, list)
		}
	}
	if typ := strings.TrimSpace(env.MustRun(30*time.Second, "rosservice", "type", ServiceStep)); typ != "std_srvs/Trigger" {
		t.Errorf("rosservice type %s: %q", ServiceStep, typ)
	}
	if uri := strings.TrimSpace(env.MustRun(30*time.Second, "rosservice", "uri", ServicePause)); uri != n.ServiceURI() {
		t.Errorf("rosservice uri %s: %q, want %s", ServicePause, uri, n.ServiceURI())
	}

	env.MustRun(30*time.Second, "rosservice", "call", ServicePause)
	for k := 1; k <= 3; k++ {
		out := env.MustRun(30*time.Second, "rosservice", "call", ServiceStep)
		want := "success: True\nmessage: \"" + virtualTimeText(int64(k)*simcontroltest.StepNs) + "\""
		if strings.TrimSpace(out) != want {
			t.Fatalf("rosservice call %s #%d:\n%s\nwant:\n%s", ServiceStep, k, out, want)
		}
	}
	env.MustRun(30*time.Second, "rosservice", "call", ServiceUnpause)
	out := env.MustRun(30*time.Second, "rosservice", "call", ServiceStep)
	if !strings.Contains(out, "success: False") || !strings.Contains(out, "not paused") {
		t.Errorf("step of a playing run:\n%s", out)
	}
	l.Refuse("the run has ended")
	out, err := env.Run(30*time.Second, "rosservice", "call", ServicePause)
	if err == nil || !strings.Contains(out, "responded with an error") || !strings.Contains(out, "the run has ended") {
		t.Errorf("refused pause: err %v, output:\n%s", err, out)
	}
	ops, st, tm, steps := l.Ops(), l.State(), l.Time(), l.Steps()
	want := []simcontrol.Op{simcontrol.Pause, simcontrol.Step, simcontrol.Step, simcontrol.Step, simcontrol.Play, simcontrol.Step, simcontrol.Pause}
	if strings.Join(opNames(ops), " ") != strings.Join(opNames(want), " ") || st != simcontrol.Playing || steps != 3 || tm != 3*simcontroltest.StepNs {
		t.Fatalf("loop saw %v, ends %v at %d ns after %d steps; want %v, playing, 3 steps", ops, st, tm, steps, want)
	}
}

func opNames(ops []simcontrol.Op) []string {
	var s []string
	for _, o := range ops {
		s = append(s, o.String())
	}
	return s
}

// A rospy script steps N times on a persistent connection, the way the
// package documents stepping by a count; it prints the wall time a call
// takes (the bridge's round trip, the fake loop answering at once).
const rospySteps = `import sys, time, rospy
from std_srvs.srv import Trigger
rospy.init_node('stepper')
rospy.wait_for_service('/tcs/step', timeout=20)
step = rospy.ServiceProxy('/tcs/step', Trigger, persistent=True)
n = int(sys.argv[1])
t0 = time.monotonic()
for _ in range(n):
    r = step()
    assert r.success, r.message
t1 = time.monotonic()
print('last', r.message)
print('per_call_us', int((t1 - t0) / n * 1e6))
`

func TestInteropRospyStepsPersistent(t *testing.T) {
	m, _, l := controlGraph(t)
	env := rosenv.New(t, m.URI())
	script := filepath.Join(env.Dir, "stepper.py")
	if err := os.WriteFile(script, []byte(rospySteps), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 500
	out := env.MustRun(60*time.Second, rosenv.Python, script, strconv.Itoa(n))
	if !strings.Contains(out, "last "+virtualTimeText(n*simcontroltest.StepNs)+"\n") {
		t.Fatalf("stepper output:\n%s", out)
	}
	if steps, tm := l.Steps(), l.Time(); steps != n || tm != n*simcontroltest.StepNs {
		t.Fatalf("loop made %d steps to %d ns, want %d", steps, tm, n)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "per_call_us "); ok {
			t.Logf("rospy persistent /tcs/step call: %s µs each (%d calls, fake loop)", v, n)
		}
	}
}

// Debian's rostopic echoes the live status with its standard type, the
// latched last one at once; a pause through rosservice shows in it.
func TestInteropRostopicEchoStatus(t *testing.T) {
	m, n, _ := graph(t)
	ctl := simcontrol.New()
	simcontroltest.Start(t, ctl)
	b := &Bridge{Node: n}
	var err error
	if b.status, err = newLiveStatus(n); err != nil {
		t.Fatal(err)
	}
	if err := b.ServeControl(ctl); err != nil {
		t.Fatal(err)
	}
	b.PublishStatus(&simcontrol.Status{State: simcontrol.Playing, TimeNs: 3e9, WallNs: 2e9, DriftNs: 150e3,
		DriftMaxRunNs: 1e6, CoordinatorNs: 1, ClientsNs: 8, DynamicsNs: 1, Dispatches: 42})
	env := rosenv.New(t, m.URI(), "rosservice")
	out := env.MustRun(30*time.Second, "rostopic", "echo", "-n", "1", TopicStatus)
	for _, want := range []string{"level: 0", `name: "tcs"`, `message: "playing"`,
		"key: \"virtual_s\"\n    value: \"3\"", "key: \"real_time_factor\"\n    value: \"1.5\"",
		"key: \"drift_s\"\n    value: \"0.00015\"", "key: \"overhead_fraction\"\n    value: \"0.1\"",
		"key: \"dispatches\"\n    value: \"42\""} {
		if !strings.Contains(out, want) {
			t.Errorf("rostopic echo %s lacks %q:\n%s", TopicStatus, want, out)
		}
	}
	if typ := strings.TrimSpace(env.MustRun(30*time.Second, "rostopic", "type", TopicStatus)); typ != "diagnostic_msgs/DiagnosticStatus" {
		t.Errorf("rostopic type %s: %q", TopicStatus, typ)
	}
	env.MustRun(30*time.Second, "rosservice", "call", ServiceUnpause)
	env.MustRun(30*time.Second, "rosservice", "call", ServicePause)
	out = env.MustRun(30*time.Second, "rostopic", "echo", "-n", "1", TopicStatus)
	if !strings.Contains(out, `message: "paused"`) || !strings.Contains(out, "key: \"virtual_s\"\n    value: \"3\"") {
		t.Errorf("after /tcs/pause:\n%s", out)
	}
}
