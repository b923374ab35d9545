package test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/msgs/ros2"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

// worldScenario writes config/pendulum.yaml with its dynamics replaced by
// dyn (a YAML block at the dynamics: key's indentation) and the given mode
// and duration.
func worldScenario(t *testing.T, name, mode, duration, dyn string) string {
	t.Helper()
	b, err := os.ReadFile("../config/pendulum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []string
	skip := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "dynamics:"):
			out = append(out, strings.Split(strings.TrimRight(dyn, "\n"), "\n")...)
			skip = true
			continue
		case skip && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "#") || l == ""):
			continue
		case strings.HasPrefix(l, "mode:"):
			l = "mode: " + mode
		case strings.HasPrefix(l, "duration:"):
			l = "duration: " + duration
		case strings.HasPrefix(l, "name:"):
			l = "name: " + name
		}
		skip = false
		out = append(out, l)
	}
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// jointStates reads a recording's /arm/joint_states: per sample, its log
// time and [position, velocity].
func jointStates(t *testing.T, path string) (times []uint64, states [][2]float64) {
	t.Helper()
	_, err := record.Read(path, func(ch *record.ReadChannel, m *mcap.Message) error {
		if ch.Topic != "/arm/joint_states" {
			return nil
		}
		js, err := ros2.DecodeJointState(m.Data)
		if err != nil {
			return err
		}
		times = append(times, m.LogTime)
		states = append(states, [2]float64{js.Position[0], js.Velocity[0]})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return times, states
}

// The pendulum served by another process through the native world
// protocol (tcs world pendulum): in lockstep, where a run's trajectory
// does not depend on the machine, the recording's joint states equal the
// embedded pendulum's bit for bit; in consistent mode the PD balances it,
// and the world's cost per step is reported (dynamics_s).
func TestRemoteWorld(t *testing.T) {
	needRT(t)
	const params = "  params: {mass: 1.0, length: 1.0, max_torque: 5.0}\n"
	embedded := "dynamics:\n  model: pendulum\n  step: 1ms\n" + params
	remote := "dynamics:\n  model: remote\n  step: 1ms\n  params: {cmd: [tcs, world, pendulum, mass=1.0, length=1.0, max_torque=5.0]}\n"
	run := func(name, mode, dyn string) result {
		r := runTCS(t, 3*time.Minute, worldScenario(t, name, mode, "3s", dyn))
		if r.code != 0 || r.sum.Ended != report.EndCompleted {
			t.Fatalf("%s: exit %d, ended %q\n%s", name, r.code, r.sum.Ended, lastLines(r.out, 20))
		}
		return r
	}
	a := run("embedded", "lockstep", embedded)
	b := run("remote", "lockstep", remote)
	ta, sa := jointStates(t, filepath.Join(a.outDir, "run.mcap"))
	tb, sb := jointStates(t, filepath.Join(b.outDir, "run.mcap"))
	if len(sa) < 3000 || len(sa) != len(sb) {
		t.Fatalf("lockstep: %d joint states embedded, %d remote; want the same, one per step", len(sa), len(sb))
	}
	for k := range sa {
		if ta[k] != tb[k] || sa[k] != sb[k] {
			t.Fatalf("lockstep: joint state %d: embedded %v at %d ns, remote %v at %d ns", k, sa[k], ta[k], sb[k], tb[k])
		}
	}

	c := run("remote-consistent", "consistent", remote)
	checkBalanced(t, c.sum, 0)
	e := run("embedded-consistent", "consistent", embedded)
	perStep := func(s *report.Summary) float64 { return s.Overhead.DynamicsS / math.Max(1, float64(s.DynamicsSteps)) }
	t.Logf("world cost per step (dynamics_s / dynamics_steps): remote %.1f µs, embedded %.2f µs (%d and %d steps)",
		perStep(c.sum)*1e6, perStep(e.sum)*1e6, c.sum.DynamicsSteps, e.sum.DynamicsSteps)
	if c.sum.Overhead.DynamicsS <= 0 {
		t.Errorf("remote world: dynamics_s %g", c.sum.Overhead.DynamicsS)
	}
}
