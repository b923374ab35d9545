//go:build ros2

package test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

var (
	mujocoOnce sync.Once
	mujocoBin  string
	mujocoErr  error
)

// ros2MuJoCo returns the ROS 2 environment and tcs built with the tags ros2
// and mujoco (once).
func ros2MuJoCo(t *testing.T) (*rosenv.Env, string) {
	t.Helper()
	env, _, _ := ros2Real(t)
	mujocoOnce.Do(func() {
		mujocoBin = filepath.Join(ros2Build(t), "tcs-mujoco")
		if out, err := exec.Command("go", "build", "-tags", "ros2 mujoco", "-o", mujocoBin, "../cmd/tcs").CombinedOutput(); err != nil {
			mujocoErr = fmt.Errorf("go build -tags 'ros2 mujoco' ../cmd/tcs (apt-get install libmujoco-dev): %v\n%s", err, out)
		}
	})
	if mujocoErr != nil {
		t.Fatal(mujocoErr)
	}
	return env, mujocoBin
}

// An unmodified rclpy node drives the MuJoCo differential-drive base
// toward its wall and reads its IMU and rangefinder as sensor_msgs/Imu and
// Range (see checkDiffDriveSensors).
func TestROS2MuJoCoSensors(t *testing.T) {
	env, tcs := ros2MuJoCo(t)
	path := diffDriveScenario(t, "ros:\n  transport: ros2\n  distro: jazzy\n", []string{rosenv.Python, rclpyScript(t, "rclpy_sensors.py")})
	old := tcsBin
	tcsBin = tcs
	defer func() { tcsBin = old }()
	r := runTCSEnv(t, env.Vars, 5*time.Minute, path)
	checkDiffDriveSensors(t, r)
}

// The MuJoCo arm under an unmodified rclcpp controller at 500 Hz (paced
// like ros2_control_node, commands as a forward command controller's
// Float64MultiArray), 10 s of virtual time. Consistent mode: 5,000
// activations, each period of the node's clock seen once and no deadline
// missed once its start-up is done, Δ p99 ≤ q + 0.2 ms, every command applied at the instant it was published (after
// its activation began, before the next; a partial step each), MuJoCo's
// CPU reported, the arm at its target. Lockstep: Δ exceeds that bound.
func TestROS2MuJoCoArm(t *testing.T) {
	env, tcs := ros2MuJoCo(t)
	_, _, rclcpp := ros2Real(t)
	arm := filepath.Join(filepath.Dir(rclcpp), "rclcpp_arm")
	model, err := filepath.Abs("../dynamics/mujoco/models/arm.xml")
	if err != nil {
		t.Fatal(err)
	}
	const (
		period = int64(2 * time.Millisecond)
		q      = int64(time.Millisecond)
		topic  = "/arm_controller/commands"
	)
	old := tcsBin
	tcsBin = tcs
	defer func() { tcsBin = old }()
	run := func(mode string) (result, string) {
		y := fmt.Sprintf(`name: ros2-mujoco-arm
duration: 10s
quantum: 1ms
mode: %s
wall_limit: 4m
ros:
  transport: ros2
  distro: jazzy
dynamics:
  model: mujoco
  step: 1ms
  params: {mjcf: %q}
robots:
  - name: arm
    command_topic: %s
    clients:
      - name: arm_controller
        cmd: [%q, --ros-args, -p, "rate:=500.0", -r, "commands:=%s"]
        api: ros
        class: periodic
        period: 2ms
        priority: 20
`, mode, model, topic, arm, topic)
		path := filepath.Join(t.TempDir(), mode+".yaml")
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runTCSEnv(t, env.Vars, 5*time.Minute, path)
		if r.code != 0 || r.sum.Ended != report.EndCompleted {
			if c := r.sum.Clients; len(c) > 0 {
				t.Logf("log of arm_controller:\n%s", tail(c[0].Log, 30))
			}
			t.Fatalf("%s: exit %d, ended %q\n%s", mode, r.code, r.sum.Ended, lastLines(r.out, 20))
		}
		return r, client(t, r.sum, "arm_controller").Log
	}

	r, log := run("consistent")
	c := client(t, r.sum, "arm_controller")
	if c.Activations != 5000 {
		t.Errorf("consistent: %d activations, want 5000", c.Activations)
	}
	// The node's first iterations do its start-up work (first publish,
	// first messages, page faults), charged: at 500 Hz it may miss the
	// first periods. From startUp on, every period has one activation and
	// none misses its deadline, except where the host held the CPU: a
	// slice the host stretched (tcs charges no more than LateCap of it)
	// may make an activation miss, and rcl's timer, called back more than
	// a period late, skips the period it is late for.
	const startUp = 20 * int64(time.Millisecond)
	misses := recordedMisses(t, filepath.Join(r.outDir, "run.mcap"), "arm_controller")
	hostMissed := map[int64]bool{}
	var own []int64
	for _, m := range misses {
		if m.host {
			hostMissed[m.due/period] = true
		} else if m.due >= startUp {
			own = append(own, m.due)
		}
	}
	if len(own) > 0 {
		t.Errorf("deadlines missed after the start-up (%d ns), not after the host held the CPU, due at %v; all misses %+v", startUp, own, misses)
	}
	per := map[int64]int{}
	for _, v := range ticks(t, log) {
		per[v/period]++
	}
	for k := startUp / period; k <= int64(10e9)/period; k++ {
		if per[k] == 0 && hostMissed[k] {
			t.Logf("period %d (%d ms) has no activation of the node's clock after the host's miss", k, k*period/1e6)
			continue
		}
		if per[k] != 1 {
			t.Errorf("period %d (%d ms) has %d activations of the node's clock, want 1", k, k*period/1e6, per[k])
		}
	}
	if bound := float64(q)/1e9 + 0.2e-3; r.sum.DriftP99S > bound {
		t.Errorf("consistent: Δ p99 %.6f s, want ≤ q + 0.2 ms = %.6f s", r.sum.DriftP99S, bound)
	}
	if r.sum.Overhead.DynamicsS <= 0 {
		t.Errorf("MuJoCo's CPU not reported: dynamics_s %g", r.sum.Overhead.DynamicsS)
	}
	if len(r.sum.World) == 0 || len(r.sum.World[0].Obs) < 3 {
		t.Fatal("no final state of the arm in the summary")
	}
	for i, want := range []float64{0.5, 0.5, 0.8} {
		if got := r.sum.World[0].Obs[i]; math.Abs(got-want) > 0.1 {
			t.Errorf("joint %d ends at %.3f rad, target %.1f: the controller did not control the arm", i, got, want)
		}
	}
	// Each command at its instant: after the activation that computed it
	// began (k·P), before the next; one partial step per instant between
	// two steps.
	offGrid := map[uint64]bool{}
	var cmds int
	_, err = record.Read(filepath.Join(r.outDir, "run.mcap"), func(ch *record.ReadChannel, m *mcap.Message) error {
		if ch.Topic != topic {
			return nil
		}
		cmds++
		at := int64(m.LogTime)
		if at%period == 0 {
			return fmt.Errorf("a command applied at %d ns, the instant its activation began: computing it took no time", at)
		}
		if at%int64(time.Millisecond) != 0 {
			offGrid[m.LogTime] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cmds < 5000 {
		t.Errorf("%d commands recorded, want one per activation at least (5000)", cmds)
	}
	if int64(len(misses)) != c.DeadlineMisses {
		t.Errorf("%d misses recorded, %d in the summary", len(misses), c.DeadlineMisses)
	}
	if r.sum.DynamicsSteps < 10000+int64(len(offGrid)) {
		t.Errorf("%d dynamics steps for 10,000 whole steps and %d commands between steps: commands were not applied at their instants",
			r.sum.DynamicsSteps, len(offGrid))
	}
	t.Logf("consistent: Δ p99 %.1f µs, max %.1f µs; dynamics %.3f s (%d steps), clients %.3f s, coordinator %.3f s; %d commands, %d between steps",
		r.sum.DriftP99S*1e6, r.sum.DriftMaxS*1e6, r.sum.Overhead.DynamicsS, r.sum.DynamicsSteps, r.sum.Overhead.ClientsS,
		r.sum.Overhead.CoordinatorS, cmds, len(offGrid))

	r, _ = run("lockstep")
	if bound := float64(q)/1e9 + 0.2e-3; r.sum.DriftMaxS <= bound {
		t.Errorf("lockstep: Δ max %.6f s within consistent's bound %.6f s: lockstep's drift should grow with the CPU used", r.sum.DriftMaxS, bound)
	}
	t.Logf("lockstep: Δ p99 %.1f µs, max %.1f µs", r.sum.DriftP99S*1e6, r.sum.DriftMaxS*1e6)
}
