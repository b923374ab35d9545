//go:build ros2

package test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// The bundled launch files (launch/ros2) under the real `ros2 launch`.

// launchRun runs `ros2 launch file args...` in env until it ends on its
// own (within 5 min) and returns the launch's output and the run's summary
// (in out). The launch must end when the run does: tcs's process shuts
// it down (on_exit=Shutdown); it may take a few seconds more to stop the
// other processes it started.
func launchRun(t *testing.T, env *rosenv.Env, out, file string, args ...string) (string, *report.Summary) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("../launch/ros2", file))
	if err != nil {
		t.Fatal(err)
	}
	launch := env.Start(ros2CLI(), append([]string{"launch", path}, args...)...)
	start := time.Now()
	launch.Wait(t, 5*time.Minute)
	ended := time.Now()
	lo := launch.Output()
	t.Logf("ros2 launch %s: %.1f s; last lines:\n%s%s", file, ended.Sub(start).Seconds(), lastLines(lo, 8), warnings(out))
	st, err := os.Stat(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatalf("the run wrote no summary: %v\n%s", err, lo)
	}
	// summary.json is written as tcs run ends.
	lag := ended.Sub(st.ModTime())
	if lag > 20*time.Second {
		t.Errorf("ros2 launch ended %.1f s after the run", lag.Seconds())
	}
	t.Logf("ros2 launch ended %.2f s after the run wrote its summary", lag.Seconds())
	s := readSummary(t, out)
	if s.Ended != report.EndCompleted {
		t.Fatalf("ended %q\nros2 launch:\n%s", s.Ended, lo)
	}
	return lo, s
}

// launch/ros2/tcs.launch.py starts `tcs run` (the tcs a user built, given
// as tcs:=, not on PATH) with a scenario whose client is an unmodified
// rclcpp node at 200 Hz, 3 s: the run completes every period (600
// activation instants, each an activation or lost at start-up, none by
// overrun), no deadline miss of the node's own, one tick per period in
// the node's ROS time, the pendulum balanced; and ros2 launch ends with
// the run.
func TestROS2LaunchBundled(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	const period = 5 * time.Millisecond
	scenario := ros2Scenario(t, "ros2-launch", "3s", period,
		[]string{rclcpp, "--ros-args", "-p", "rate:=200.0", "-p", "pattern:=timer"}, "")
	out := t.TempDir()
	_, s := launchRun(t, env, out, "tcs.launch.py", "scenario:="+scenario, "out:="+out, "tcs:="+tcs)
	c := client(t, s, "pd")
	checkPeriods(t, c, 601)
	checkNodeMisses(t, c)
	checkTicks(t, ticks(t, c.Log), int64(period), int64(s.VirtualS*1e9+0.5), false,
		missedPeriods(t, filepath.Join(out, "run.mcap"), "pd", int64(period)))
	checkBalanced(t, s, 0)
	t.Logf("pd: %d activations, %d misses (host %d), cpu %.3f s; Δ p99 %.1f µs; wall %.2f s",
		c.Activations, c.DeadlineMisses, c.DeadlineMissesHost, c.CPUS, s.DriftP99S*1e6, s.WallS)
}

// launch/ros2/attach.launch.py as its docstring says to use it: it starts
// `tcs run` (tcs on PATH, the default) and the node of package:= and
// executable:= with the prefix `tcs attach --name <client> --`; the node
// (rclcpp, 100 Hz, its default rate) joins the run as client pd (attach:
// true), completes its 300 periods, ticks once a period in its ROS time,
// and the launch ends with the run (it shuts down the attached node too).
func TestROS2LaunchAttachBundled(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	attachEnv(t, env, tcs, rclcpp)
	const period = 10 * time.Millisecond
	scenario := pendulumScenario(t, "ros2-attach-bundled", "3s", "wall_limit: 4m\nros:\n  transport: ros2\n  distro: jazzy\n", `      - name: pd
        attach: true
        api: ros
        class: periodic
        period: 10ms
        priority: 20
`)
	out := t.TempDir()
	lo, s := launchRun(t, env, out, "attach.launch.py", "scenario:="+scenario, "out:="+out,
		"package:=tcs_test_nodes", "executable:=rclcpp_pd", "client:=pd")
	c := client(t, s, "pd")
	checkPeriods(t, c, 301)
	checkNodeMisses(t, c)
	if c.CPUS <= 0 {
		t.Errorf("cpu_s = %g: the node's CPU was not accounted", c.CPUS)
	}
	// The node prints to the launch's screen (output='screen'): one
	// process's ticks.
	perProc := launchTicks(lo)
	if len(perProc) != 1 {
		t.Fatalf("want the ticks of one process in the launch's output, got %d\n%s", len(perProc), lastLines(lo, 40))
	}
	for proc, ts := range perProc {
		n := checkTicks(t, ts, int64(period), int64(s.VirtualS*1e9+0.5), false,
			missedPeriods(t, filepath.Join(out, "run.mcap"), c.Name, int64(period)))
		t.Logf("%s: %d ticks, one in each of %d periods checked", proc, len(ts), n)
	}
	checkBalanced(t, s, 0)
	t.Logf("pd: %d activations, %d misses (host %d), cpu %.3f s; Δ p99 %.1f µs; wall %.2f s",
		c.Activations, c.DeadlineMisses, c.DeadlineMissesHost, c.CPUS, s.DriftP99S*1e6, s.WallS)
}
