//go:build ros2

package test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/ros2"
	"github.com/tcs-robotics/tcs/msgs"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
)

// These tests need the ros2 build tag and Debian's cyclonedds-dev,
// libfastrtps-dev, libfastcdr-dev and g++:
//
//	go test -tags ros2 ./test -run ROS2

var (
	ros2Once sync.Once
	ros2Dir  string
	ros2Err  error
)

// ros2Build builds, once, tcs with the ros2 tag and the Fast DDS test
// programs of controllers/ros2; it returns their folder.
func ros2Build(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ missing: apt-get install g++ libfastrtps-dev libfastcdr-dev")
	}
	ros2Once.Do(func() {
		ros2Dir, ros2Err = os.MkdirTemp("", "tcs-ros2-")
		if ros2Err != nil {
			return
		}
		steps := [][]string{
			{"go", "build", "-tags", "ros2", "-o", filepath.Join(ros2Dir, "tcs"), "../cmd/tcs"},
			{"g++", "-O2", "-std=c++17", "-I", "../bench/c", "controllers/ros2/fastdds_pd.cpp", "-o", filepath.Join(ros2Dir, "fastdds_pd"), "-lfastrtps", "-lfastcdr"},
			{"g++", "-O2", "-std=c++17", "-I", "../bench/c", "controllers/ros2/fastdds_probe.cpp", "-o", filepath.Join(ros2Dir, "fastdds_probe"), "-lfastrtps", "-lfastcdr"},
		}
		var wg sync.WaitGroup
		errs := make([]error, len(steps))
		for i, s := range steps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
					errs[i] = fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil && ros2Err == nil {
				ros2Err = err
			}
		}
	})
	if ros2Err != nil {
		t.Fatalf("build the ROS 2 test programs (apt-get install cyclonedds-dev libfastrtps-dev libfastcdr-dev g++): %v", ros2Err)
	}
	return ros2Dir
}

// The Fast DDS PD controller (rmw_fastrtps's configuration, ClockQoS
// clock, reliable JointState reader, Float64 writer) at 100 Hz on the
// pendulum through the ROS 2 bridge, consistent mode, 10 s virtual: the
// same acceptance as TestROS1Controllers.
func TestROS2FastDDSController(t *testing.T) {
	needRT(t)
	dir := ros2Build(t)
	old := tcsBin
	tcsBin = filepath.Join(dir, "tcs")
	defer func() { tcsBin = old }()
	path := pendulumScenario(t, "ros2-pd", "10s", "wall_limit: 3m\nros:\n  transport: ros2\n", fmt.Sprintf(`      - name: pd
        cmd: [%q, --ros-args, -p, "rate:=100"]
        api: ros
        class: periodic
        period: 10ms
`, filepath.Join(dir, "fastdds_pd")))
	s := runCompleted(t, 5*time.Minute, path)
	c := client(t, s, "pd")
	if c.Activations != 1000 {
		t.Errorf("activations = %d, want 1000 (10 ms .. 10 s)", c.Activations)
	}
	if c.PeriodError > 0.005 {
		t.Errorf("period_error = %g, want ≤ 0.005", c.PeriodError)
	}
	if own := c.DeadlineMisses - c.DeadlineMissesHost; own != 0 {
		t.Errorf("deadline_misses = %d (%d after a host-delayed timer), want 0 of the node's own", c.DeadlineMisses, c.DeadlineMissesHost)
	}
	if bound := s.QuantumS + 0.0002; s.DriftP99S > bound {
		t.Errorf("drift_p99_s = %g, want ≤ %g", s.DriftP99S, bound)
	}
	t.Logf("period_error %g, misses %d, drift_p99_s %g, drift_max_s %g, coordinator %.1f µs/activation",
		c.PeriodError, c.DeadlineMisses, s.DriftP99S, s.DriftMaxS, s.CoordinatorPerActivationUS)
}

// A Fast DDS reader joining late gets the first clock (latched before any
// client) and decodes the bridge's ros_discovery_info, in both Gid layouts.
func TestROS2LateJoiner(t *testing.T) {
	dir := ros2Build(t)
	for _, d := range []rmsgs.Distro{rmsgs.Humble, rmsgs.Iron} {
		t.Run(d.String(), func(t *testing.T) {
			node, err := ros2.NewNode(ros2.NodeConf{Distro: d})
			if err != nil {
				t.Fatal(err)
			}
			defer node.Close()
			g, err := ros2.NewGate(ros2.GateConf{Node: node, Robots: []ros2.GateRobot{{Name: "arm", Joints: []string{"j"}}}, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			g.Clock(0)              // the run's first clock, as the driver publishes it before any client starts
			time.Sleep(time.Second) // the reader joins late
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// Like every ROS 2 node meeting the loopback-bound bridge:
			// ROS_LOCALHOST_ONLY=1 (what the gate gives its clients).
			probe := exec.CommandContext(ctx, filepath.Join(dir, "fastdds_probe"), "latejoin", fmt.Sprint(d.GidLen()))
			probe.Env = append(os.Environ(), "ROS_LOCALHOST_ONLY=1")
			out, err := probe.CombinedOutput()
			t.Logf("%s", out)
			if err != nil {
				t.Fatalf("probe: %v", err)
			}
			if want := fmt.Sprintf("clock %d\n", msgs.Epoch); !bytes.Contains(out, []byte(want)) {
				t.Errorf("no %q", want)
			}
			// tcs's node: readers = the command reader; writers = /clock,
			// /diagnostics, /arm/joint_states; nothing left over.
			if want := "node / tcs readers 1 writers 3 rest 0\n"; !bytes.Contains(out, []byte(want)) {
				t.Errorf("no %q", want)
			}
		})
	}
}

// A message of a type tcs does not know (tcs_test/msg/Plan) relayed
// between two Fast DDS programs through the gate: the planner publishes
// /arm/plan, the controller reads it from its relay topic, remapped by the
// gate's arguments.
func TestROS2OpaqueRelay(t *testing.T) {
	dir := ros2Build(t)
	node, err := ros2.NewNode(ros2.NodeConf{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	g, err := ros2.NewGate(ros2.GateConf{Node: node, Robots: []ros2.GateRobot{{Name: "arm", Joints: []string{"j"}}},
		Clients: []ros2.GateClient{{Name: "planner", ROS: true}, {Name: "ctrl", ROS: true}},
		Relays:  []ros2.GateRelay{{Topic: "/arm/plan", From: 0}}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const n = 5
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := func(i int, mode string) (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.CommandContext(ctx, filepath.Join(dir, "fastdds_probe"), append([]string{mode, fmt.Sprint(n)}, g.Args(i)...)...)
		cmd.Env = append(os.Environ(), g.Env(i)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, bufio.NewScanner(out)
	}
	pub, _ := start(0, "relay-pub")
	defer func() { _ = pub.Process.Kill(); _ = pub.Wait() }()
	sub, lines := start(1, "relay-sub")
	defer func() { _ = sub.Process.Kill(); _ = sub.Wait() }()
	got := make(chan string, 2*n)
	go func() {
		for lines.Scan() {
			got <- lines.Text()
		}
		close(got)
	}()
	for {
		miss, _, err := g.Waiting()
		if err != nil {
			t.Fatal(err)
		}
		if miss[0] == "" && miss[1] == "" && g.RelayReceivers(0) == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("not ready: %q", miss)
		}
		time.Sleep(20 * time.Millisecond)
	}
	relayed := 0
	var recv []string
	for len(recv) < n && ctx.Err() == nil {
		g.Drain(func(int, int, []float64) {}, func(k, i int, body []byte) {
			if k != 0 || i != 0 {
				t.Errorf("relay %d from client %d", k, i)
			}
			frame, off := msgs.BeginFrame(nil)
			if !g.RelayTo(0, 1, msgs.EndFrame(append(frame, body...), off)) {
				t.Error("RelayTo did not reach the controller")
			}
			relayed++
		})
		select {
		case l, ok := <-got:
			if !ok {
				t.Fatal("relay-sub ended")
			}
			if strings.HasPrefix(l, "got ") {
				recv = append(recv, l)
			}
		case <-time.After(5 * time.Millisecond):
		}
	}
	for i := range n {
		if want := fmt.Sprintf("got %d plan-%d %g", i, i, float64(i)*0.5); i >= len(recv) || recv[i] != want {
			t.Errorf("message %d: got %q, want %q", i, recv, want)
			break
		}
	}
	t.Logf("relayed %d, received %q", relayed, recv)
}
