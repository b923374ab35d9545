//go:build ros2

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/msgs"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// clockOf reads `ros2 topic echo --once /clock` as virtual time (ns).
func clockOf(t *testing.T, out string) int64 {
	t.Helper()
	m := regexp.MustCompile(`sec: (\d+)\s+nanosec: (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no clock in\n%s", out)
	}
	var sec, nsec int64
	fmt.Sscan(m[1], &sec)
	fmt.Sscan(m[2], &nsec)
	return sec*1e9 + nsec - msgs.Epoch
}

// A run started paused (tcs run --paused) with an rclcpp node, driven from
// another shell by the Jazzy CLI through tcs's simulation_interfaces
// services: step_simulation {steps: 10} advances the world exactly 10
// steps (its /clock), the SimulateSteps action 5 more with 5 feedbacks and
// a result OK, an rclpy client 100 single steps (the per-call latency), and
// set_simulation_state STOPPED ends the run there. The node's timer ticks
// once per period of the ROS time it was stepped through, past its
// start-up.
func TestROS2PausedRunServices(t *testing.T) {
	env, tcs, rclcpp := ros2Real(t)
	const period = 5 * time.Millisecond
	path := ros2Scenario(t, "ros2-paused", "60s", period,
		[]string{rclcpp, "--ros-args", "-p", "rate:=200.0", "-p", "pattern:=timer"}, "")
	out := t.TempDir()
	run := env.Start(tcs, "run", path, "--paused", "--out", out, "--quiet", "--wait", "2m")
	var export string
	rosenv.Eventually(t, 2*time.Minute, "tcs says what to export", func() (bool, string) {
		o := run.Output()
		for _, l := range strings.Split(o, "\n") {
			if s := strings.TrimSpace(l); strings.HasPrefix(s, "export ") {
				export = s
			}
		}
		return export != "" || strings.Contains(o, "tcs run:"), o
	})
	if export == "" {
		t.Fatalf("tcs failed:\n%s", run.Output())
	}
	shell := func(cmd string) string {
		t.Helper()
		start := time.Now()
		o, err := env.Run(90*time.Second, "/bin/bash", "-c", export+"; "+cmd)
		if err != nil {
			t.Errorf("%s: %v\n%s", cmd, err, o)
		}
		t.Logf("%s (%.1f s):\n%s", cmd, time.Since(start).Seconds(), o)
		return o
	}
	want := func(o string, subs ...string) {
		t.Helper()
		for _, s := range subs {
			if !strings.Contains(o, s) {
				t.Errorf("no %q in\n%s", s, o)
			}
		}
	}
	clock := func() int64 {
		t.Helper()
		return clockOf(t, shell("ros2 topic echo --no-daemon --once /clock rosgraph_msgs/msg/Clock"))
	}
	const step = int64(time.Millisecond)

	want(shell("ros2 service call /tcs/get_simulation_state "+rmsgs.GetSimulationState), "SimulationState(state=2)")
	if c := clock(); c != 0 {
		t.Errorf("a paused run's clock is at %d ns, want 0", c)
	}
	want(shell("ros2 service call /tcs/get_simulator_features "+rmsgs.GetSimulatorFeatures), "20, 22") // the pendulum can be reset
	want(shell("ros2 service call /tcs/step_simulation "+rmsgs.StepSimulation+" '{steps: 10}'"), "Result(result=1")
	if c := clock(); c != 10*step {
		t.Errorf("after step_simulation {steps: 10}: clock at %d ns, want %d", c, 10*step)
	}
	o := shell("ros2 action send_goal /tcs/simulate_steps " + rmsgs.SimulateSteps + " '{steps: 5}' --feedback")
	want(o, "Goal accepted", "result: 1", "Goal finished with status: SUCCEEDED")
	if n := strings.Count(o, "completed_steps:"); n != 5 {
		t.Errorf("ros2 action send_goal --feedback: %d feedbacks, want 5", n)
	}
	if c := clock(); c != 15*step {
		t.Errorf("after SimulateSteps {steps: 5}: clock at %d ns, want %d", c, 15*step)
	}
	o = shell(rosenv.Python + " " + rclpyScript(t, "sim_client.py") + " --ros-args -p calls:=100 -p steps:=1")
	if m := regexp.MustCompile(`latency_us median (\d+) p90 (\d+) max (\d+) calls 100`).FindStringSubmatch(o); m == nil {
		t.Errorf("sim_client:\n%s", o)
	} else {
		t.Logf("step_simulation {steps: 1} through rclpy beside a paused run with an rclcpp node: median %s µs, p90 %s µs, max %s µs (100 calls)", m[1], m[2], m[3])
	}
	if n := strings.Count(o, "result 1 state 2"); n != 100 {
		t.Errorf("sim_client: %d of 100 steps OK and paused after", n)
	}
	if c := clock(); c != 115*step {
		t.Errorf("after 100 more single steps: clock at %d ns, want %d", c, 115*step)
	}
	want(shell("ros2 service call /tcs/set_simulation_state "+rmsgs.SetSimulationState+" '{state: {state: 0}}'"), "Result(result=1", "run ends")
	rosenv.Eventually(t, time.Minute, "the run ends after the stop", func() (bool, string) {
		_, err := os.Stat(filepath.Join(out, "summary.json"))
		return err == nil, run.Output()
	})
	run.Wait(t, time.Minute)
	sum := readSummary(t, out)
	if sum.Ended != report.EndStopped {
		t.Errorf("ended %q, want %q", sum.Ended, report.EndStopped)
	}
	if sum.VirtualS != 0.115 {
		t.Errorf("virtual_s %g, want 0.115: the world moved only when stepped", sum.VirtualS)
	}
	// One tick per period of the ROS time the node was stepped through
	// (period 1 left out, as in TestROS2RealNodes), and no deadline miss
	// of its own: the node starts while the world is paused at 0, and what
	// it does on the wall clock while paused (DDS discovery, the service
	// calls' traffic) runs uncharged, so its first activations are not
	// late.
	c := sum.Clients[0]
	if own := c.DeadlineMisses - c.DeadlineMissesHost; own != 0 {
		t.Errorf("pd: %d deadline misses of its own (%d the host's), want 0", own, c.DeadlineMissesHost)
	}
	per := map[int64]int{}
	for _, v := range ticks(t, c.Log) {
		per[v/int64(period)]++
	}
	for k := int64(2); k < 115*step/int64(period); k++ {
		if per[k] != 1 {
			t.Errorf("period %d of %v: %d ticks, want 1", k, period, per[k])
		}
	}
	t.Logf("summary: virtual %g s, wall %.1f s, paused %.1f s; pd: %d activations, %d misses",
		sum.VirtualS, sum.WallS, sum.PausedS, c.Activations, c.DeadlineMisses)
	if t.Failed() {
		t.Logf("tcs:\n%s%s\nlog of pd:\n%s", run.Output(), warnings(out), tail(c.Log, 40))
	}
}
