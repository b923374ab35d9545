package controllers_test

// The three ordinary ROS 1 PD controllers (rospy, roscpp, goroslib) against
// Debian's rosmaster, on sim time from a private clock that the test steps:
// each must publish the PD law's torque and run exactly one period per
// clock step. Needs Debian's ROS 1 (and g++ with libroscpp-dev for roscpp):
//
//	apt-get install -y --no-install-recommends python3-rosmaster python3-rospy \
//	  python3-rostopic python3-rosparam python3-rosnode python3-std-msgs \
//	  python3-sensor-msgs rosout libroscpp-dev libstd-msgs-dev libsensor-msgs-dev

import (
	"context"
	"fmt"
	"math"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bluenviron/goroslib/v2"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/rosgraph_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/sensor_msgs"
	"github.com/bluenviron/goroslib/v2/pkg/msgs/std_msgs"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/controllers"
	"github.com/tcs-robotics/tcs/controllers/rosnode"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

const (
	// privateClock is the clock the nodes are remapped to.
	privateClock = "/tcs/pd/clock"
	// nodeName is the nodes' resolved name with __ns:=/arm.
	nodeName = "/arm/pd"
	// step is one period of a node at _rate:=100.
	step = 10 * time.Millisecond
	// procLifetime bounds every process a test starts.
	procLifetime = 3 * time.Minute
	// grace is how long (wall time) the test waits for a second command
	// after a clock step's first one.
	grace = 30 * time.Millisecond
	// measured is the number of clock steps checked one by one after the
	// warm-up.
	measured = 25
)

// nodeArgs is the command line every node runs with (the Go node's clock
// aside, when in-process).
var nodeArgs = []string{"__ns:=/arm", "_rate:=100", "/clock:=" + privateClock}

func TestRospyPD(t *testing.T) {
	r := newRig(t, privateClock)
	script, err := filepath.Abs("rospy/pd.py")
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, r.env, rosenv.Python, append([]string{script}, nodeArgs...)...)
	r.check(t, p.output)
}

func TestRoscppPD(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skipf("g++ missing (%v): apt-get install g++", err)
	}
	if err := exec.Command("pkg-config", "--exists", "roscpp", "std_msgs", "sensor_msgs").Run(); err != nil {
		t.Skipf("pkg-config finds no roscpp, std_msgs or sensor_msgs (%v): apt-get install libroscpp-dev libstd-msgs-dev libsensor-msgs-dev", err)
	}
	bin := filepath.Join(t.TempDir(), "pd")
	src, err := filepath.Abs("roscpp/pd.cpp")
	if err != nil {
		t.Fatal(err)
	}
	build(t, "sh", "-c", `g++ -O2 -std=c++17 "$1" -o "$2" $(pkg-config --cflags --libs roscpp std_msgs sensor_msgs)`,
		"sh", src, bin)
	r := newRig(t, privateClock)
	p := start(t, r.env, bin, nodeArgs...)
	r.check(t, p.output)
}

// TestGoroslibPD runs the Go node as its own process (test/controllers/
// gonode), so goroslib sees the /clock remap in os.Args; then it stops the
// master, and the node must end with an error.
func TestGoroslibPD(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("the go command is missing: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "gonode")
	build(t, "go", "build", "-o", bin, "./gonode")
	r := newRig(t, privateClock)
	p := start(t, r.env, bin, nodeArgs...)
	r.check(t, p.output)

	r.master.stop()
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the node still runs 15 s after the master stopped:\n%s", p.output())
	}
	if p.err == nil || !strings.Contains(p.output(), "went away") {
		t.Errorf("after the master stopped: exit %v, want an error saying it went away; output:\n%s", p.err, p.output())
	}
}

// TestGoroslibPDInProcess runs RunPD in the test process, whose os.Args
// remaps nothing: the node must follow /clock, and return nil when its
// context ends.
func TestGoroslibPDInProcess(t *testing.T) {
	r := newRig(t, "/clock")
	ctx, cancel := context.WithTimeout(context.Background(), procLifetime)
	defer cancel()
	logs := &rosenv.Buffer{}
	done := make(chan error, 1)
	// The test process has no ROS_MASTER_URI: the command line names the
	// master.
	args := []string{"__ns:=/arm", "_rate:=100", "__master:=" + r.uri}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		err := rosnode.RunPD(ctx, args, logs)
		fmt.Fprintf(logs, "RunPD returned %v\n", err)
		done <- err
	}()
	t.Cleanup(func() { // before the master stops, even when the test fails
		cancel()
		<-finished
	})
	r.check(t, logs.String)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunPD after cancel: %v\n%s", err, logs)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("RunPD did not return 10 s after its context ended\n%s", logs)
	}
}

// rig is a master with /use_sim_time true and the test's goroslib node,
// which latches the joint state on /arm/joint_states, steps a clock and
// reads /arm/command.
type rig struct {
	env     *rosenv.Env
	uri     string // the master's
	master  *proc
	node    *goroslib.Node
	clock   *goroslib.Publisher
	js      *goroslib.Publisher
	cmds    chan float64
	dropped atomic.Int64  // commands that found cmds full
	now     time.Duration // the clock's time
	topic   string        // the clock's topic
}

func newRig(t *testing.T, clockTopic string) *rig {
	t.Helper()
	port := freePort(t)
	uri := "http://127.0.0.1:" + strconv.Itoa(port)
	r := &rig{env: rosenv.New(t, uri, "rosmaster"), uri: uri, cmds: make(chan float64, 4096), topic: clockTopic}
	r.master = start(t, r.env, "rosmaster", "--core", "-p", strconv.Itoa(port))

	// The test's node must not run on sim time (it would follow /clock):
	// goroslib reads /use_sim_time once, in NewNode, so the node comes
	// first and the parameter after it.
	var logs rosenv.Buffer
	rosenv.Eventually(t, 20*time.Second, "the master answers", func() (bool, string) {
		n, err := goroslib.NewNode(goroslib.NodeConf{
			MasterAddress:   "127.0.0.1:" + strconv.Itoa(port),
			Host:            "127.0.0.1",
			Name:            "controllers_test",
			LogDestinations: goroslib.LogDestinationCallback,
			OnLog:           func(_ goroslib.LogLevel, s string) { fmt.Fprintln(&logs, s) },
		})
		if err != nil {
			return false, err.Error() + "\n" + r.master.output()
		}
		r.node = n
		return true, ""
	})
	t.Cleanup(r.node.Close)
	if err := r.node.ParamSetBool("/use_sim_time", true); err != nil {
		t.Fatalf("set /use_sim_time: %v", err)
	}

	var err error
	if r.js, err = goroslib.NewPublisher(goroslib.PublisherConf{
		Node: r.node, Topic: "/arm/joint_states", Msg: &sensor_msgs.JointState{}, Latch: true,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.js.Close)
	r.setState(3.0, 0)
	if r.clock, err = goroslib.NewPublisher(goroslib.PublisherConf{
		Node: r.node, Topic: clockTopic, Msg: &rosgraph_msgs.Clock{}, Latch: true,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.clock.Close)
	// Time 0 means "no clock yet" to rospy and roscpp: start at 1 s,
	// latched, so a node gets it when it connects.
	r.now = time.Second
	r.clock.Write(&rosgraph_msgs.Clock{Clock: time.Unix(0, int64(r.now))})
	sub, err := goroslib.NewSubscriber(goroslib.SubscriberConf{
		Node: r.node, Topic: "/arm/command",
		Callback: func(m *std_msgs.Float64) {
			select {
			case r.cmds <- m.Data:
			default:
				r.dropped.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return r
}

// setState latches the joint state (θ, θ̇).
func (r *rig) setState(theta, thetadot float64) {
	r.js.Write(&sensor_msgs.JointState{
		Name: []string{"pivot"}, Position: []float64{theta}, Velocity: []float64{thetadot}, Effort: []float64{0},
	})
}

// stepClock advances the clock by d and returns the commands that follow:
// the first within wait, then any more within grace.
func (r *rig) stepClock(d, wait time.Duration) []float64 {
	r.now += d
	r.clock.Write(&rosgraph_msgs.Clock{Clock: time.Unix(0, int64(r.now))})
	var got []float64
	select {
	case u := <-r.cmds:
		got = append(got, u)
	case <-time.After(wait):
		return nil
	}
	deadline := time.After(grace)
	for {
		select {
		case u := <-r.cmds:
			got = append(got, u)
		case <-deadline:
			return got
		}
	}
}

// check runs the scenario against the node named /arm/pd; output returns
// the node's output for failure messages.
func (r *rig) check(t *testing.T, output func() string) {
	t.Helper()
	rosenv.Eventually(t, 30*time.Second, "the node registers as "+nodeName, func() (bool, string) {
		nodes, err := r.node.MasterGetNodes()
		if err != nil {
			return false, err.Error()
		}
		info, ok := nodes[nodeName]
		if !ok {
			return false, fmt.Sprintf("nodes %v\n%s", keys(nodes), output())
		}
		_, js := info.SubscribedTopics["/arm/joint_states"]
		_, clk := info.SubscribedTopics[r.topic]
		_, cmd := info.PublishedTopics["/arm/command"]
		return js && clk && cmd, fmt.Sprintf("subscribes %v, publishes %v\n%s",
			keys(info.SubscribedTopics), keys(info.PublishedTopics), output())
	})

	law := controllers.DefaultPD()
	want := law.Torque(3.0, 0, math.Pi)
	near := func(u, v float64) bool { return math.Abs(u-v) <= 1e-9 }

	// Warm-up: the node's Rate starts before its first clock message
	// (time 0 to rospy and roscpp), and its subscriptions connect in their
	// own time. Step until three steps in a row each give exactly one
	// command, with the torque of the joint state.
	var counts []int
	for inPhase := 0; inPhase < 3; {
		if len(counts) == 300 {
			t.Fatalf("not in phase after %d clock steps; commands per step %v\n%s", len(counts), counts, output())
		}
		got := r.stepClock(step, 500*time.Millisecond)
		counts = append(counts, len(got))
		if len(got) == 1 && near(got[0], want) {
			inPhase++
		} else {
			inPhase = 0
		}
	}
	t.Logf("warm-up: commands per clock step %v", counts)

	// In phase: every step gives exactly one command, the PD law's torque.
	for k := 1; k <= measured; k++ {
		got := r.stepClock(step, 5*time.Second)
		if len(got) != 1 || !near(got[0], want) {
			t.Fatalf("clock step %d of %d (t = %v): commands %v, want exactly one, %v\n%s",
				k, measured, r.now, got, want, output())
		}
	}

	// Half-period steps: a command every other step. (A goroslib node at
	// the wrong rate passes the test above: its TimeRate releases one
	// period per clock message whenever it is behind.)
	for k := 1; k <= 2*measured; k++ {
		want, wait := 0, 100*time.Millisecond // to see that no command comes
		if k%2 == 0 {
			want, wait = 1, 5*time.Second
		}
		got := r.stepClock(step/2, wait)
		if len(got) != want {
			t.Fatalf("half-period clock step %d (t = %v): commands %v, want one every other step\n%s",
				k, r.now, got, output())
		}
	}

	// θ = 3.0 at rest saturates (the law asks 5.66 N·m, the limit is 5):
	// check the law unsaturated too, near the target (PD) and far from it
	// (energy pumping, moving backwards).
	for _, s := range [][2]float64{{3.0, 0.5}, {2.6, -0.5}} {
		want := law.Torque(s[0], s[1], math.Pi)
		if math.Abs(want) >= law.MaxTorque {
			t.Fatalf("state %v: torque %v saturates, pick another", s, want)
		}
		r.setState(s[0], s[1])
		for k := 1; ; k++ {
			got := r.stepClock(step, 5*time.Second)
			if len(got) != 1 {
				t.Fatalf("state %v, clock step %d: commands %v, want exactly one\n%s", s, k, got, output())
			}
			if near(got[0], want) {
				break
			}
			if k == 50 {
				t.Fatalf("state %v: torque %v after %d clock steps, want %v\n%s", s, got[0], k, want, output())
			}
		}
	}
	if n := r.dropped.Load(); n > 0 {
		t.Errorf("%d commands dropped unread", n)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// freePort returns a TCP port that was free a moment ago, below the
// ephemeral range (master.FreeURI).
func freePort(t *testing.T) int {
	t.Helper()
	uri, err := master.FreeURI()
	if err != nil {
		t.Fatal(err)
	}
	hp, err := master.ParseURI(uri)
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(hp)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// build runs a build command within 3 minutes.
func build(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// proc is a background process, in its own process group, that lives at
// most procLifetime, dies with the test process (SIGKILL) and is stopped
// by the test's cleanup.
type proc struct {
	cmd  *exec.Cmd
	out  rosenv.Buffer
	done chan struct{}
	err  error // valid once done is closed
}

func start(t *testing.T, env *rosenv.Env, name string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procLifetime)
	p := &proc{cmd: exec.CommandContext(ctx, name, args...), done: make(chan struct{})}
	p.cmd.Env = env.Vars
	p.cmd.Dir = env.Dir
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.cmd.Cancel = func() error { return syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
	p.cmd.WaitDelay = time.Second
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		cancel()
	})
	return p
}

func (p *proc) output() string { return p.out.String() }

// stop sends SIGTERM to the process's group, SIGKILL after 5 s, and waits
// for the process.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM) //nolint:errcheck // it may have just ended
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck
		<-p.done
	}
}
