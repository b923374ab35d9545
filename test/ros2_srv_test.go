//go:build ros2

package test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/bridge/ros2"
	rmsgs "github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/simcontrol"
	"github.com/tcs-robotics/tcs/simcontrol/simcontroltest"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// The simulation_interfaces services and the SimulateSteps action served
// on tcs's own participant, called by the real Jazzy CLI (ros2 service
// call, ros2 action send_goal --feedback) and by an rclpy client; a fake
// dispatch loop answers for the run.
func TestROS2SimulationServices(t *testing.T) {
	env := rosenv.NewROS2(t)
	const domain = 42 // away from runs on domain 0
	node, err := ros2.NewNode(ros2.NodeConf{Distro: rmsgs.Iron, Domain: domain})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	ctl := simcontrol.New()
	loop := simcontroltest.Start(t, ctl)
	srv, err := ros2.NewSimServer(ros2.SimConf{Node: node, Control: ctl, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli := &rosenv.Env{T: t, Dir: env.Dir, Vars: append(slices.Clone(env.Vars), ros2.ClientEnv(domain, true, false)...)}
	run := func(args ...string) string {
		t.Helper()
		start := time.Now()
		// The ros2 script is on the environment's PATH, not the test's.
		out, err := cli.Run(60*time.Second, "/bin/bash", append([]string{"-c", `exec ros2 "$@"`, "ros2"}, args...)...)
		if err != nil {
			t.Errorf("%v\n%s", err, out)
		}
		t.Logf("ros2 %s (%.1f s):\n%s", strings.Join(args, " "), time.Since(start).Seconds(), out)
		return out
	}
	want := func(out string, subs ...string) {
		t.Helper()
		for _, s := range subs {
			if !strings.Contains(out, s) {
				t.Errorf("no %q in\n%s", s, out)
			}
		}
	}

	out := run("service", "call", "/tcs/get_simulator_features", rmsgs.GetSimulatorFeatures)
	want(out, "24, 25, 26, 31, 32, 33", "ends the run")
	out = run("service", "call", "/tcs/get_simulation_state", rmsgs.GetSimulationState)
	want(out, "SimulationState(state=2)", "Result(result=1")
	out = run("service", "call", "/tcs/step_simulation", rmsgs.StepSimulation, "{steps: 10}")
	want(out, "Result(result=1")
	if n := loop.Steps(); n != 10 {
		t.Errorf("step_simulation {steps: 10}: the loop made %d steps", n)
	}
	out = run("service", "call", "/tcs/reset_simulation", rmsgs.ResetSimulation, "{scope: 1}")
	want(out, "Result(result=0", "SCOPE_TIME")
	out = run("action", "send_goal", "/tcs/simulate_steps", rmsgs.SimulateSteps, "{steps: 5}", "--feedback")
	want(out, "Goal accepted", "SUCCEEDED", "result: 1")
	if n := strings.Count(out, "completed_steps:"); n != 5 {
		t.Errorf("ros2 action send_goal --feedback: %d feedbacks, want 5", n)
	}
	for k := 1; k <= 5; k++ {
		want(out, fmt.Sprintf("completed_steps: %d\nremaining_steps: %d", k, 5-k))
	}
	if n := loop.Steps(); n != 15 {
		t.Errorf("after the action: the loop made %d steps, want 15", n)
	}

	// Per-call latency of step_simulation through rclpy (one step each,
	// the fake loop answers at once): the wire's own cost.
	out = cli.MustRun(2*time.Minute, "/usr/bin/python3", rclpyScript(t, "sim_client.py"), "--ros-args", "-p", "calls:=100", "-p", "steps:=1")
	m := regexp.MustCompile(`latency_us median (\d+) p90 (\d+) max (\d+) calls 100`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("sim_client:\n%s", out)
	} else {
		t.Logf("step_simulation through rclpy, fake loop: median %s µs, p90 %s µs, max %s µs (100 calls)", m[1], m[2], m[3])
	}
	if n := loop.Steps(); n != 115 {
		t.Errorf("after sim_client: the loop made %d steps, want 115", n)
	}

	out = run("service", "call", "/tcs/set_simulation_state", rmsgs.SetSimulationState, "{state: {state: 1}}")
	want(out, "Result(result=1")
	out = run("service", "call", "/tcs/step_simulation", rmsgs.StepSimulation, "{steps: 1}")
	want(out, "Result(result=4", "not paused")
	out = run("service", "call", "/tcs/set_simulation_state", rmsgs.SetSimulationState, "{state: {state: 0}}")
	want(out, "Result(result=1", "ends the run")
	t.Logf("the loop saw: %v", loop.Ops())
}
