//go:build ros2

package test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/report"
)

// runTCSBin is runTCS with the tcs binary bin (one built with other tags).
func runTCSBin(t *testing.T, bin string, timeout time.Duration, args ...string) result {
	t.Helper()
	return runTCSWith(t, bin, nil, timeout, args...)
}

// startSimulator starts `tcs world pendulum --ros2` serving one pendulum,
// robot plant, in ROS_DOMAIN_ID domain: the simulator a run's world
// simulation_interfaces steps (a stand-in for Gazebo). As a user should,
// it runs off the simulation CPU (the last one: taskset). It ends with
// the test.
func startSimulator(t *testing.T, tcs string, domain int, params ...string) {
	t.Helper()
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset missing (apt-get install util-linux)")
	}
	args := append([]string{"-c", fmt.Sprintf("0-%d", max(runtime.NumCPU()-2, 0)), tcs, "world", "pendulum", "--ros2", "--robots", "plant", "--step", "1ms"}, params...)
	cmd := exec.Command(taskset, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("tcs world pendulum --ros2: %v\n%s", err, out.String())
		}
	})
}

// A run whose world is another process, a pendulum simulator stepped
// through simulation_interfaces over ROS 2 (tcs world pendulum --ros2, in
// a domain of its own), gives the trajectory of the same pendulum
// embedded: in lockstep, where it does not depend on the machine, the
// recorded joint states are equal bit for bit (actuation: hold in both,
// as the simulator makes whole steps only). In consistent mode the PD
// balances it, and the external path's cost per step is reported
// (dynamics_s / dynamics_steps).
func TestROS2ExternalWorld(t *testing.T) {
	needRT(t)
	tcs := filepath.Join(ros2Build(t), "tcs")
	const params = "mass=1.0 length=1.0 max_torque=5.0"
	pendulum := "actuation: hold\ndynamics:\n  model: pendulum\n  step: 1ms\n  params: {mass: 1.0, length: 1.0, max_torque: 5.0}\n"
	domain := 100 + os.Getpid()%50
	external := func(d int) string {
		return fmt.Sprintf("actuation: hold\ndynamics:\n  model: simulation_interfaces\n  step: 1ms\n"+
			"  params: {domain: %d, bodies: [{joint_states: /plant/joint_states, commands: /plant/commands}]}\n", d)
	}
	run := func(name, mode, dyn string) result {
		r := runTCSBin(t, tcs, 3*time.Minute, worldScenario(t, name, mode, "3s", dyn))
		if r.code != 0 || r.sum.Ended != report.EndCompleted {
			t.Fatalf("%s: exit %d, ended %q\n%s", name, r.code, r.sum.Ended, lastLines(r.out, 20))
		}
		return r
	}
	a := run("embedded", "lockstep", pendulum)
	startSimulator(t, tcs, domain, "mass=1.0", "length=1.0", "max_torque=5.0")
	b := run("external", "lockstep", external(domain))
	ta, sa := jointStates(t, filepath.Join(a.outDir, "run.mcap"))
	tb, sb := jointStates(t, filepath.Join(b.outDir, "run.mcap"))
	if len(sa) < 3000 || len(sa) != len(sb) {
		t.Fatalf("lockstep: %d joint states embedded, %d external; want the same, one per step", len(sa), len(sb))
	}
	for k := range sa {
		if ta[k] != tb[k] || sa[k] != sb[k] {
			t.Fatalf("lockstep: joint state %d: embedded %v at %d ns, external %v at %d ns", k, sa[k], ta[k], sb[k], tb[k])
		}
	}
	t.Logf("lockstep: %d joint states equal, embedded and external (%s)", len(sa), params)

	startSimulator(t, tcs, domain+1, "mass=1.0", "length=1.0", "max_torque=5.0")
	c := run("external-consistent", "consistent", external(domain+1))
	checkBalanced(t, c.sum, 0)
	perStep := c.sum.Overhead.DynamicsS / math.Max(1, float64(c.sum.DynamicsSteps))
	t.Logf("external world, consistent: %d steps, %.1f µs per step (dynamics_s / dynamics_steps), rtf %.2f",
		c.sum.DynamicsSteps, perStep*1e6, c.sum.RTF)
	if c.sum.Overhead.DynamicsS <= 0 {
		t.Errorf("external world: dynamics_s %g", c.sum.Overhead.DynamicsS)
	}
}
