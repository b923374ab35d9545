package dynamics

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func mustPendulum(t *testing.T, bodies int, step int64, p PendulumParams) *Pendulum {
	t.Helper()
	w, err := NewPendulum(bodies, step, p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestEnergyConservedWithoutDampingOrTorque(t *testing.T) {
	p := DefaultPendulumParams()
	p.Damping = 0
	p.InitialTheta = 2.5 // a large swing: the nonlinear regime
	w := mustPendulum(t, 1, 1e6, p)
	e0 := w.Energy(0)
	maxErr := 0.0
	for range 10000 { // 10 s at 1 ms
		w.Step(1e6)
		maxErr = math.Max(maxErr, math.Abs(w.Energy(0)-e0))
	}
	if w.Now() != 10e9 {
		t.Fatalf("Now = %d, want 10e9", w.Now())
	}
	if rel := maxErr / math.Abs(e0); rel > 1e-8 {
		t.Fatalf("energy drift %.3g J (relative %.3g) over 10 s, want ≤ 1e-8 relative", maxErr, rel)
	}
}

func TestDampingDissipates(t *testing.T) {
	w := mustPendulum(t, 1, 1e6, DefaultPendulumParams())
	w.SetState(0, 1, 0)
	e0 := w.Energy(0)
	for range 5000 {
		w.Step(1e6)
	}
	if w.Energy(0) >= e0 {
		t.Fatalf("energy %v did not decrease from %v with damping", w.Energy(0), e0)
	}
}

func TestPartialStepsMatchFullStep(t *testing.T) {
	p := DefaultPendulumParams()
	p.InitialTheta, p.InitialThetaDot = 1.2, -0.7
	full := mustPendulum(t, 1, 1e6, p)
	split := mustPendulum(t, 1, 1e6, p)
	full.SetCommand(0, []float64{2})
	split.SetCommand(0, []float64{2})
	for range 1000 {
		full.Step(1e6)
		split.Step(337_123)
		split.Step(1e6 - 337_123)
	}
	if full.Now() != split.Now() {
		t.Fatalf("time differs: %d vs %d", full.Now(), split.Now())
	}
	a, ad := full.State(0)
	b, bd := split.State(0)
	if math.Abs(a-b) > 1e-9 || math.Abs(ad-bd) > 1e-9 {
		t.Fatalf("after 1 s: full (%v, %v) vs split (%v, %v)", a, ad, b, bd)
	}
}

func TestSmallPeriodMatchesLinearisedSolution(t *testing.T) {
	p := DefaultPendulumParams()
	p.Damping = 0
	p.InitialTheta = 1e-3
	w := mustPendulum(t, 1, 1e6, p)
	period := 2 * math.Pi * math.Sqrt(p.Length/p.Gravity)
	steps := int(math.Round(period * 1e3))
	for range steps {
		w.Step(1e6)
	}
	th, _ := w.State(0)
	if math.Abs(th-1e-3) > 2e-6 {
		t.Fatalf("after one small-angle period θ = %v, want ≈ 1e-3", th)
	}
}

func TestCommandSaturatesAndHolds(t *testing.T) {
	p := DefaultPendulumParams()
	p.Gravity, p.Damping, p.InitialTheta = 0, 0, 0
	w := mustPendulum(t, 2, 1e6, p)
	w.SetCommand(0, []float64{100, 7}) // saturated to 5, extra ignored
	w.SetCommand(1, nil)               // missing → 0
	w.SetCommand(5, []float64{1})      // out of range: ignored
	w.SetCommand(0, []float64{100})
	for range 1000 {
		w.Step(1e6)
	}
	var obs [3]float64
	if n := w.Observe(0, obs[:]); n != 2 {
		t.Fatalf("Observe wrote %d, want 2", n)
	}
	if math.Abs(obs[1]-5) > 1e-9 { // θ̇ = u/(ml²)·t = 5
		t.Fatalf("θ̇ = %v, want 5 (saturated torque)", obs[1])
	}
	if n := w.Observe(1, obs[:1]); n != 1 || obs[0] != 0 {
		t.Fatalf("body 1: n=%d θ=%v", n, obs[0])
	}
	w.SetCommand(0, []float64{math.NaN()})
	w.Step(1e6)
	if _, om := w.State(0); math.IsNaN(om) {
		t.Fatal("NaN command poisoned the state")
	}
	if w.Observe(-1, obs[:]) != 0 || w.Observe(2, obs[:]) != 0 {
		t.Fatal("out-of-range body wrote values")
	}
}

func TestNoAllocations(t *testing.T) {
	w := mustPendulum(t, 4, 1e6, DefaultPendulumParams())
	cmd := []float64{1}
	var obs [2]float64
	allocs := testing.AllocsPerRun(1000, func() {
		w.SetCommand(1, cmd)
		w.Step(400_000)
		w.Observe(1, obs[:])
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per step", allocs)
	}
}

func TestNew(t *testing.T) {
	w, err := New("pendulum", 3, 1e6, map[string]any{"mass": 2, "length": 0.5, "max_torque": float32(3), "initial_theta": int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	p := w.(*Pendulum).Params()
	if p.Mass != 2 || p.Length != 0.5 || p.MaxTorque != 3 || p.InitialTheta != 0 || p.Gravity != 9.81 || w.Bodies() != 3 {
		t.Fatalf("params %+v bodies %d", p, w.Bodies())
	}
	for _, tc := range []struct {
		model  string
		bodies int
		step   int64
		params map[string]any
		want   []string
		is     error
	}{
		{"cartpole", 1, 1e6, nil, []string{`"cartpole"`, "pendulum"}, ErrUnknownModel},
		{"pendulum", 1, 1e6, map[string]any{"mas": 1}, []string{`"mas"`, "mass, max_torque"}, ErrBadParam},
		{"pendulum", 1, 1e6, map[string]any{"mass": "heavy"}, []string{`"mass"`, "string heavy", "> 0"}, ErrBadParam},
		{"pendulum", 1, 1e6, map[string]any{"mass": -1}, []string{`"mass"`, "> 0", "-1"}, ErrBadParam},
		{"pendulum", 1, 1e6, map[string]any{"damping": math.NaN()}, []string{`"damping"`}, ErrBadParam},
		{"pendulum", 1, 1e6, map[string]any{"initial_theta": math.Inf(1)}, []string{`"initial_theta"`}, ErrBadParam},
		{"pendulum", 0, 1e6, nil, []string{"bodies"}, ErrBadParam},
		{"pendulum", 1, 0, nil, []string{"step"}, ErrBadParam},
		{"pendulum", 1, 2e9, nil, []string{"step"}, ErrBadParam},
	} {
		_, err := New(tc.model, tc.bodies, tc.step, tc.params)
		if err == nil {
			t.Errorf("New(%q, %d, %d, %v): no error", tc.model, tc.bodies, tc.step, tc.params)
			continue
		}
		if !errors.Is(err, tc.is) {
			t.Errorf("%v: not %v", err, tc.is)
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not mention %q", err, s)
			}
		}
	}
}

// FuzzNew: bad parameters never panic, and a world that New accepts steps,
// observes and takes commands without panicking.
func FuzzNew(f *testing.F) {
	f.Add("pendulum", 1, int64(1e6), "mass", 1.0, 0.5, int64(500_000))
	f.Add("pendulum", 2, int64(1), "length", 1e-300, 3.0, int64(1))
	f.Add("pendulum", 1, int64(1e9), "gravity", 1e308, -1e308, int64(-5))
	f.Add("x", -1, int64(-1), "nope", math.NaN(), math.Inf(1), int64(0))
	f.Fuzz(func(t *testing.T, model string, bodies int, step int64, key string, val, cmd float64, h int64) {
		if bodies > 64 {
			bodies %= 64 // keep memory bounded; the bound itself is tested in TestNew
		}
		w, err := New(model, bodies, step, map[string]any{key: val})
		if err != nil {
			return
		}
		w.SetCommand(0, []float64{cmd})
		if h > step || h > 1e8 {
			h = step % 1e8
		}
		w.Step(h)
		var obs [2]float64
		w.Observe(0, obs[:])
		_ = w.Now()
	})
}

// JointNames: a model's own names when it has them (ships: several joints
// per body), else "<model>_joint"; SplitState cuts [positions...,
// velocities...] by that count.
func TestJointNamesAndSplitState(t *testing.T) {
	p, err := New("pendulum", 1, 1_000_000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := JointNames(p, "pendulum", 0); len(got) != 1 || got[0] != "pendulum_joint" {
		t.Errorf("pendulum joints %v", got)
	}
	s, err := New("ships", 2, 10_000_000, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := JointNames(s, "ships", 1)
	if 2*len(names) != s.ObservationLen(1) {
		t.Errorf("ships: %d joints for an observation of %d values", len(names), s.ObservationLen(1))
	}
	obs := []float64{1, 2, 3, 4}
	if pos, vel := SplitState(obs, 2); len(pos) != 2 || len(vel) != 2 || pos[1] != 2 || vel[0] != 3 {
		t.Errorf("SplitState(2) = %v, %v", pos, vel)
	}
	if pos, vel := SplitState(obs[:3], 2); len(pos) != 2 || vel != nil {
		t.Errorf("short observation: %v, %v", pos, vel)
	}
}

func TestResetKeepsTime(t *testing.T) {
	p := DefaultPendulumParams()
	w, err := NewPendulum(2, 1_000_000, p)
	if err != nil {
		t.Fatal(err)
	}
	w.SetCommand(1, []float64{0.5})
	for range 100 {
		w.Step(1_000_000)
	}
	var obs [2]float64
	w.Observe(1, obs[:])
	if obs[0] == p.InitialTheta && obs[1] == p.InitialThetaDot {
		t.Fatalf("the pendulum did not move in 100 ms: %v", obs)
	}
	var r Resetter = w
	r.Reset()
	w.Observe(1, obs[:])
	if obs[0] != p.InitialTheta || obs[1] != p.InitialThetaDot {
		t.Fatalf("after Reset: %v, want (%v, %v)", obs, p.InitialTheta, p.InitialThetaDot)
	}
	if w.Now() != 100_000_000 {
		t.Fatalf("Reset moved time to %d", w.Now())
	}
}
