//go:build ros2

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/msgs"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// A user's plain launch file (testdata/two_nodes.launch.py) whose Node
// actions carry prefix='tcs attach --name N --' runs two unmodified
// rclcpp nodes under tcs with the real `ros2 launch`: tcs run (started
// first, as from another shell) with testdata/two_nodes_attach.yaml, whose
// clients are attach: true; each node is gated, charged and completes its
// periods, and the launch ends when the run ends.
func TestROS2LaunchAttach(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	launchFile, err := filepath.Abs("testdata/two_nodes.launch.py")
	if err != nil {
		t.Fatal(err)
	}
	scenario, err := filepath.Abs("testdata/two_nodes_attach.yaml")
	if err != nil {
		t.Fatal(err)
	}
	attachEnv(t, env, tcs, rclcpp)

	out := t.TempDir()
	run := env.Start(tcs, "run", scenario, "--out", out, "--quiet", "--wait", "10m")
	launch := env.Start(ros2CLI(), "launch", launchFile)
	start := time.Now()
	run.Wait(t, 5*time.Minute)
	// The run ended its attached nodes; the launch ends with its last one.
	launch.Wait(t, time.Minute)
	t.Logf("tcs run (%.1f s with the launch)\n%s%s", time.Since(start).Seconds(), run.Output(), warnings(out))
	s := readSummary(t, out)
	if s.Ended != report.EndCompleted {
		t.Fatalf("ended %q\nros2 launch:\n%s", s.Ended, launch.Output())
	}
	for _, w := range []struct {
		name        string
		activations int64
	}{{"left_pd", 600}, {"right_pd", 300}} {
		c := client(t, s, w.name)
		if c.Activations != w.activations || c.ActivationsBegunLate != 0 {
			t.Errorf("%s: %d activations (want %d), %d begun late although it was idle at their instant",
				w.name, c.Activations, w.activations, c.ActivationsBegunLate)
		}
		checkNodeMisses(t, c)
		if c.CPUS <= 0 {
			t.Errorf("%s: cpu_s = %g: the node's CPU was not accounted", w.name, c.CPUS)
		}
		t.Logf("%s: %d activations, %d misses, cpu %.3f s, period_error %g", w.name, c.Activations, c.DeadlineMisses, c.CPUS, c.PeriodError)
	}
	checkBalanced(t, s, 0)
	// The nodes' own view, from the launch's output (one prefix per
	// process, "[tcs-1]", as the executable is tcs): in ROS time (tcs's
	// virtual time: use_sim_time and the private clock came from tcs
	// attach), one node ticked once in every 5 ms period, the other in
	// every 10 ms one.
	// A period without a tick is the node's where its activation missed
	// its deadline (rcl skips the periods a late timer call covers; the
	// misses are bounded by checkNodeMisses).
	lo := launch.Output()
	perProc := launchTicks(lo)
	end := int64(s.VirtualS*1e9 + 0.5)
	rec := filepath.Join(out, "run.mcap")
	missed := map[time.Duration]map[int64]bool{
		5 * time.Millisecond:  missedPeriods(t, rec, "left_pd", int64(5*time.Millisecond)),
		10 * time.Millisecond: missedPeriods(t, rec, "right_pd", int64(10*time.Millisecond)),
	}
	var found, not []string
	for proc, ts := range perProc {
		for _, p := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond} {
			skipped, doubled := tickPeriods(ts, int64(p), end)
			skipped = slices.DeleteFunc(skipped, func(k int64) bool { return missed[p][k] })
			if len(skipped) == 0 && len(doubled) == 0 {
				found = append(found, fmt.Sprintf("%s every %v (%d ticks)", proc, p, len(ts)))
				break
			}
			not = append(not, fmt.Sprintf("%s every %v: %d ticks; periods without one %d %v, with several %d %v",
				proc, p, len(ts), len(skipped), skipped[:min(len(skipped), 8)], len(doubled), doubled[:min(len(doubled), 8)]))
		}
	}
	slices.Sort(found)
	if len(found) != 2 || !strings.Contains(found[0]+found[1], "every 5ms") || !strings.Contains(found[0]+found[1], "every 10ms") {
		t.Errorf("want one node ticking once every 5 ms and one every 10 ms of ROS time; found %v; not %v\n%s", found, not, lastLines(lo, 40))
	}
	t.Logf("ros2 launch: %s; last lines:\n%s", strings.Join(found, ", "), lastLines(lo, 6))
}

// attachEnv makes env a user's shell for ros2 launch with tcs attach: tcs
// on PATH, a workspace whose package tcs_test_nodes holds rclcpp (the
// ament index marker and lib/<package>/<executable>) on AMENT_PREFIX_PATH,
// and an attach socket of the test's own.
func attachEnv(t *testing.T, env *rosenv.Env, tcs, rclcpp string) {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	for _, d := range []string{"share/ament_index/resource_index/packages", "lib/tcs_test_nodes"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "share/ament_index/resource_index/packages/tcs_test_nodes"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rclcpp, filepath.Join(ws, "lib/tcs_test_nodes/rclcpp_pd")); err != nil {
		t.Fatal(err)
	}
	for i, kv := range env.Vars {
		switch {
		case strings.HasPrefix(kv, "PATH="):
			env.Vars[i] = "PATH=" + filepath.Dir(tcs) + ":" + strings.TrimPrefix(kv, "PATH=")
		case strings.HasPrefix(kv, "AMENT_PREFIX_PATH="):
			env.Vars[i] = "AMENT_PREFIX_PATH=" + ws + ":" + strings.TrimPrefix(kv, "AMENT_PREFIX_PATH=")
		}
	}
	env.Vars = append(env.Vars, "TCS_ATTACH_SOCKET="+filepath.Join(t.TempDir(), "attach", "attach.sock"))
}

// launchTicks reads a ros2 launch's output: the "tick <ROS time ns>"
// lines of its processes, as virtual time, per process prefix ("[tcs-1]").
func launchTicks(out string) map[string][]int64 {
	perProc := map[string][]int64{}
	for _, l := range strings.Split(out, "\n") {
		var proc string
		var ns int64
		if _, err := fmt.Sscanf(l, "%s tick %d", &proc, &ns); err == nil {
			perProc[proc] = append(perProc[proc], ns-msgs.Epoch)
		}
	}
	return perProc
}
