//go:build ros2

package ros2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/dynamics"
	"github.com/tcs-robotics/tcs/dynamics/sensor"
)

// TestMain serves a pendulum over ROS 2 instead of testing when
// TCS_TEST_SERVE_WORLD names its robots (serveWorld's simulator process).
func TestMain(m *testing.M) {
	if robots := os.Getenv("TCS_TEST_SERVE_WORLD"); robots != "" {
		os.Exit(serveWorldMain(strings.Split(robots, ",")))
	}
	os.Exit(m.Run())
}

func serveWorldMain(robots []string) int {
	const step = int64(time.Millisecond)
	w, err := dynamics.New("pendulum", len(robots), step, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv("TCS_TEST_SENSING") != "" {
		w = sensing{w}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err = ServeWorld(ctx, WorldServerConf{World: w, Model: "pendulum", Step: step, Robots: robots, Log: zerolog.New(os.Stderr)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// serveCount gives each simulator process of a test binary a domain of
// its own: a simulator that just ended may still be in the next one's
// discovery, and a request matched with it alone would be lost.
var serveCount int

// serveWorld starts a simulator process serving a pendulum per robot
// (1 ms steps) over ROS 2, as `tcs world pendulum --ros2` does, in a
// ROS_DOMAIN_ID of the test's own, until the test ends. It returns that
// domain.
func serveWorld(t *testing.T, robots []string, env ...string) int {
	t.Helper()
	serveCount++
	domain := 150 + (os.Getpid()+serveCount)%60
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "TCS_TEST_SERVE_WORLD="+strings.Join(robots, ","), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	cmd.Env = append(cmd.Env, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("the simulator process: %v\n%s", err, out.String())
		}
	})
	return domain
}

// A world stepped through simulation_interfaces (a pendulum served over
// ROS 2 in another domain) moves exactly as the same world embedded: the
// same commands, sent before the steps they act in, give bit-identical
// joint states, step after step; partial steps add up to whole ones. The
// cost per step of the external path is logged.
func TestSimWorldMatchesEmbedded(t *testing.T) {
	const step = int64(time.Millisecond)
	domain := serveWorld(t, []string{"plant", "other"})
	conf := SimWorldConf{Domain: domain, Bodies: []SimBody{
		{JointStates: "/plant/joint_states", Commands: "/plant/commands"},
		{JointStates: "/other/joint_states", Commands: "/other/commands"},
	}}
	ext, err := NewSimWorld(conf, step)
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	emb, err := dynamics.New("pendulum", 2, step, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ext.JointNames(0); len(got) != 1 || got[0] != "pendulum_joint" {
		t.Fatalf("joint names %q, want the pendulum's", got)
	}
	if ext.CommandLen(0) != 1 || ext.ObservationLen(1) != 2 {
		t.Fatalf("command length %d, observation length %d; want 1 and 2", ext.CommandLen(0), ext.ObservationLen(1))
	}
	var a, b [2]float64
	for k := 0; k < 500; k++ {
		// A torque that changes every 7 steps, and a partial step pair
		// (300 µs + 700 µs) every 5: the world steps whole steps only.
		if k%7 == 0 {
			u := []float64{float64(k%5) - 2}
			ext.SetCommand(0, u)
			emb.SetCommand(0, u)
			ext.SetCommand(1, []float64{-u[0] / 2})
			emb.SetCommand(1, []float64{-u[0] / 2})
		}
		if k%5 == 0 {
			ext.Step(300_000)
			ext.Step(700_000)
		} else {
			ext.Step(step)
		}
		emb.Step(step)
		if err := ext.Err(); err != nil {
			t.Fatalf("step %d: %v", k+1, err)
		}
		for body := 0; body < 2; body++ {
			na, nb := ext.Observe(body, a[:]), emb.Observe(body, b[:])
			if na != 2 || nb != 2 || a != b {
				t.Fatalf("step %d, body %d: external %v (%d values), embedded %v", k+1, body, a, na, b)
			}
		}
	}
	if ext.Now() != emb.Now() {
		t.Errorf("time: external %d, embedded %d", ext.Now(), emb.Now())
	}
	steps, wall := ext.Steps()
	if steps != 500 {
		t.Errorf("%d steps made, want 500", steps)
	}
	t.Logf("external path: %d steps, %.1f µs per step (command when it changed, StepSimulation, joint states)", steps, float64(wall)/float64(steps)/1e3)
	if n := testing.AllocsPerRun(50, func() { ext.SetCommand(0, []float64{0.5}); ext.Step(step) }); n != 0 {
		t.Errorf("%g allocations per step", n)
	}
}

// sensing is a pendulum world with an IMU (frame imu_link: its
// orientation about z is the angle, its angular velocity the rate, its
// acceleration gravity's part along the rod) and a range (frame front:
// 2 + cos θ, nothing in reach on the swing's negative side), as MuJoCo's sensors
// are laid out: after the joint's position and velocity.
type sensing struct{ dynamics.World }

func (s sensing) ObservationLen(int) int { return 13 }

func (s sensing) Observe(b int, dst []float64) int {
	var st [2]float64
	s.World.Observe(b, st[:])
	th, om := st[0], st[1]
	rng := 2 + math.Cos(th)
	if math.Sin(th) < 0 {
		rng = -1
	}
	v := [13]float64{th, om, math.Cos(th / 2), 0, 0, math.Sin(th / 2), 0, 0, om, 9.81 * math.Sin(th), 9.81 * math.Cos(th), 0, rng}
	return copy(dst, v[:])
}

func (s sensing) SensorGroups(int) []sensor.Sensor {
	return []sensor.Sensor{
		{Name: "imu", Frame: "imu_link", Kind: sensor.IMU, At: [3]int{2, 6, 9}},
		{Name: "range", Frame: "front", Kind: sensor.Range, At: [3]int{12, -1, -1}},
	}
}

// A simulator's sensors cross too: its IMU and range, published before
// each step's joint states, become the body's sensors (same names and
// frames) and follow the joints in its observation, equal to the
// embedded world's (the range to float32, its message's precision; out of
// reach stays out of reach).
func TestSimWorldSensors(t *testing.T) {
	const step = int64(time.Millisecond)
	domain := serveWorld(t, []string{"plant"}, "TCS_TEST_SENSING=1")
	ext, err := NewSimWorld(SimWorldConf{Domain: domain, Bodies: []SimBody{{JointStates: "/plant/joint_states", Commands: "/plant/commands",
		Sensors: []SimSensor{{Topic: "/plant/imu", Kind: sensor.IMU}, {Topic: "/plant/range", Kind: sensor.Range}}}}}, step)
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	p, err := dynamics.New("pendulum", 1, step, nil)
	if err != nil {
		t.Fatal(err)
	}
	emb := sensing{p}
	g := ext.SensorGroups(0)
	if len(g) != 2 || g[0].Name != "imu" || g[0].Frame != "imu_link" || g[0].At != [3]int{2, 6, 9} ||
		g[1].Name != "range" || g[1].Frame != "front" || g[1].At[0] != 12 || ext.ObservationLen(0) != 13 {
		t.Fatalf("sensors %+v, observation length %d", g, ext.ObservationLen(0))
	}
	var a, b [13]float64
	outOfReach := 0
	for k := 0; k < 3000; k++ {
		u := []float64{5}
		if (k/400)%2 == 1 {
			u[0] = -5
		}
		ext.SetCommand(0, u)
		emb.SetCommand(0, u)
		ext.Step(step)
		emb.Step(step)
		if err := ext.Err(); err != nil {
			t.Fatalf("step %d: %v", k+1, err)
		}
		na, nb := ext.Observe(0, a[:]), emb.Observe(0, b[:])
		b[12] = float64(float32(b[12]))
		if na != 13 || nb != 13 || a != b {
			t.Fatalf("step %d: external %v (%d values), embedded %v", k+1, a, na, b)
		}
		if a[12] == -1 {
			outOfReach++
		}
	}
	if outOfReach == 0 || outOfReach == 3000 {
		t.Errorf("the range was out of reach %d times of 3000: the swing should go both ways", outOfReach)
	}
	if n := testing.AllocsPerRun(50, func() { ext.Step(step) }); n != 0 {
		t.Errorf("%g allocations per step with sensors", n)
	}
}

// Errors name what is wrong: a simulator that is not there, a step that is
// not the simulator's, bodies that do not match the scenario.
func TestSimWorldErrors(t *testing.T) {
	const step = int64(time.Millisecond)
	if _, err := simWorldParams(2, map[string]any{"bodies": []any{map[string]any{"joint_states": "/j", "commands": "/c"}}}); err == nil ||
		!strings.Contains(err.Error(), "2 robots") {
		t.Errorf("one body for two robots: %v", err)
	}
	if _, err := simWorldParams(1, map[string]any{"bodies": []any{map[string]any{"joint_states": "j"}}}); err == nil ||
		!strings.Contains(err.Error(), "absolute topic") {
		t.Errorf("a relative topic: %v", err)
	}
	if _, err := simWorldParams(1, map[string]any{"domain": 300}); err == nil || !errors.Is(err, dynamics.ErrBadParam) {
		t.Errorf("domain 300: %v", err)
	}
	domain := serveWorld(t, []string{"plant"})
	one := []SimBody{{JointStates: "/plant/joint_states", Commands: "/plant/commands"}}
	if _, err := NewSimWorld(SimWorldConf{Domain: domain, Services: "/elsewhere", Bodies: one, Timeout: time.Second}, step); err == nil ||
		!strings.Contains(err.Error(), "/elsewhere/step_simulation") {
		t.Errorf("no simulator there: %v", err)
	}
	w, err := NewSimWorld(SimWorldConf{Domain: domain, Bodies: one, Timeout: 2 * time.Second}, 2*step)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Step(2 * step)
	if err := w.Err(); err == nil || !strings.Contains(err.Error(), "dynamics.step") {
		t.Errorf("a step twice the simulator's: %v", err)
	}
	if now := w.Now(); now != 2*step {
		t.Errorf("a failed world's time: %d, want it to go on (%d)", now, 2*step)
	}
}
