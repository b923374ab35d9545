package dynamics

import (
	"errors"
	"math"
	"testing"
)

func mustShips(t *testing.T, bodies int, p ShipsParams) *Ships {
	t.Helper()
	w, err := NewShips(bodies, 10e6, p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestShipsStartAtRestSeparated(t *testing.T) {
	w := mustShips(t, 2, DefaultShipsParams())
	obs := make([]float64, ShipObservationLen)
	if n := w.Observe(0, obs); n != ShipObservationLen {
		t.Fatalf("Observe wrote %d values, want %d", n, ShipObservationLen)
	}
	d := math.Hypot(obs[0]-obs[6], math.Hypot(obs[1]-obs[7], obs[2]-obs[8]))
	if d != 10 {
		t.Fatalf("initial distance %v, want 10", d)
	}
	for _, v := range obs[ShipJoints:] {
		if v != 0 {
			t.Fatalf("a velocity is %v at rest: %v", v, obs)
		}
	}
	// Body 1 sees body 0 as "other".
	w.Observe(1, obs)
	if obs[0] != -5 || obs[6] != 5 {
		t.Fatalf("body 1 observation %v, want own x -5 and other x 5", obs[:12])
	}
}

func TestShipsMomentumConservedInFreeFlight(t *testing.T) {
	p := DefaultShipsParams()
	w := mustShips(t, 2, p)
	w.SetState(0, [3]float64{0, 0, 0}, [3]float64{1, -0.5, 0.25}, [3]float64{0.3, 0, -0.2})
	for range 500 { // 5 s, never reaching the wall
		w.Step(10e6)
	}
	pos, vel, om := w.State(0)
	if vel != [3]float64{1, -0.5, 0.25} || om != [3]float64{0.3, 0, -0.2} {
		t.Fatalf("free flight changed velocity %v or ω %v", vel, om)
	}
	want := [3]float64{5, -2.5, 1.25}
	for i := range 3 {
		if math.Abs(pos[i]-want[i]) > 1e-9 {
			t.Fatalf("position %v after 5 s, want %v", pos, want)
		}
	}
	if w.Now() != 5e9 {
		t.Fatalf("Now %d, want 5e9", w.Now())
	}
}

func TestShipsForceAccelerates(t *testing.T) {
	w := mustShips(t, 2, DefaultShipsParams())
	w.SetCommand(1, []float64{2, 0, 0, 0, 0, 1})
	for range 100 { // 1 s
		w.Step(10e6)
	}
	pos, vel, om := w.State(1)
	if math.Abs(vel[0]-2) > 1e-9 || math.Abs(pos[0]-(-5+1)) > 1e-9 || math.Abs(om[2]-1) > 1e-9 {
		t.Fatalf("after 1 s of 2 N and 1 N·m: pos %v vel %v ω %v, want x -4, vx 2, ωz 1", pos, vel, om)
	}
}

func TestShipsCommandClampedAndNaN(t *testing.T) {
	p := DefaultShipsParams()
	p.MaxForce = 1
	w := mustShips(t, 1, p)
	w.SetCommand(0, []float64{100, math.NaN()}) // missing values are 0
	w.Step(10e6)
	_, vel, _ := w.State(0)
	if math.Abs(vel[0]-0.01) > 1e-12 || vel[1] != 0 || vel[2] != 0 {
		t.Fatalf("velocity %v after 10 ms of a clamped 1 N, want [0.01 0 0]", vel)
	}
}

func TestBoundaryForce(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{{0, 0}, {10, 0}, {-10, 0}, {11, -20}, {-12.5, 50}} {
		if got := BoundaryForce(c.x, 10, 20); got != c.want {
			t.Errorf("BoundaryForce(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestShipsBounceConservesEnergy(t *testing.T) {
	w := mustShips(t, 1, DefaultShipsParams())
	w.SetState(0, [3]float64{9, 0, 0}, [3]float64{3, 1, -2}, [3]float64{1, 2, 3})
	e0 := w.Energy()
	maxErr, maxX := 0.0, 0.0
	for range 2000 { // 20 s, many bounces
		w.Step(10e6)
		maxErr = math.Max(maxErr, math.Abs(w.Energy()-e0))
		pos, _, _ := w.State(0)
		maxX = math.Max(maxX, pos[0])
	}
	if maxX <= 10 {
		t.Fatalf("the ship never left the free region (max x %v)", maxX)
	}
	if maxX > 10+3/math.Sqrt(20)+0.01 {
		t.Fatalf("max x %v: the spring let it go further than v/√(k/m)", maxX)
	}
	if rel := maxErr / e0; rel > 1e-3 {
		t.Fatalf("energy drift %.3g J (relative %.3g), want ≤ 1e-3", maxErr, rel)
	}
	pos, _, _ := w.State(0)
	for i := range 3 {
		if math.Abs(pos[i]) > 11 {
			t.Fatalf("the ship escaped the box: %v", pos)
		}
	}
}

func TestShipsDragDissipates(t *testing.T) {
	p := DefaultShipsParams()
	p.Drag = 0.5
	w := mustShips(t, 1, p)
	w.SetState(0, [3]float64{}, [3]float64{1, 0, 0}, [3]float64{0, 0, 1})
	e0 := w.Energy()
	for range 100 {
		w.Step(10e6)
	}
	if w.Energy() >= e0 {
		t.Fatalf("energy %v did not decrease from %v with drag", w.Energy(), e0)
	}
}

func TestShipsPartialStepsMatchFullStep(t *testing.T) {
	full := mustShips(t, 2, DefaultShipsParams())
	split := mustShips(t, 2, DefaultShipsParams())
	for _, w := range []*Ships{full, split} {
		w.SetCommand(0, []float64{1, -2, 0.5, 0.1, 0, 0})
	}
	for range 300 {
		full.Step(10e6)
		split.Step(3_337_123)
		split.Step(10e6 - 3_337_123)
	}
	a, b := make([]float64, ShipObservationLen), make([]float64, ShipObservationLen)
	full.Observe(0, a)
	split.Observe(0, b)
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-6 {
			t.Fatalf("value %d: full steps %v, split steps %v", i, a[i], b[i])
		}
	}
}

func TestShipsParams(t *testing.T) {
	w, err := New("ships", 2, 10e6, map[string]any{"half_size": 5, "drag": 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if p := w.(*Ships).Params(); p.HalfSize != 5 || p.Drag != 0.1 {
		t.Fatalf("params %+v", p)
	}
	for _, bad := range []map[string]any{{"mass": 0}, {"half_size": "big"}, {"wings": 2}, {"drag": math.Inf(1)}} {
		if _, err := New("ships", 2, 10e6, bad); !errors.Is(err, ErrBadParam) {
			t.Errorf("params %v: error %v, want ErrBadParam", bad, err)
		}
	}
	if _, err := NewShips(0, 10e6, DefaultShipsParams()); !errors.Is(err, ErrBadParam) {
		t.Errorf("0 bodies: %v", err)
	}
}

func TestShipsDoNotAllocate(t *testing.T) {
	w := mustShips(t, 2, DefaultShipsParams())
	obs := make([]float64, ShipObservationLen)
	cmd := []float64{1, 2, 3, 0.1, 0.2, 0.3}
	if n := testing.AllocsPerRun(100, func() {
		w.SetCommand(1, cmd)
		w.Step(10e6)
		w.Observe(0, obs)
	}); n != 0 {
		t.Fatalf("%v allocations per step", n)
	}
}

func TestShipsReset(t *testing.T) {
	w, err := NewShips(2, 1_000_000, DefaultShipsParams())
	if err != nil {
		t.Fatal(err)
	}
	var before, after [32]float64
	n := w.Observe(0, before[:])
	w.SetCommand(0, []float64{1, 0, 0, 0, 0, 1})
	for range 100 {
		w.Step(1_000_000)
	}
	w.Observe(0, after[:])
	if after == before {
		t.Fatal("the ship did not move in 100 ms")
	}
	w.Reset()
	w.Observe(0, after[:])
	if after != before {
		t.Fatalf("after Reset: %v, want %v", after[:n], before[:n])
	}
}
