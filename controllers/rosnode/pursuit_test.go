package rosnode

import (
	"math"
	"math/rand/v2"
	"testing"
)

func budget(n int) func() bool {
	return func() bool { n--; return n > 0 }
}

func TestPlannerClosesIn(t *testing.T) {
	pl := DefaultPlanner(DefaultWorld(), DefaultPrey(0))
	pred := Body{Pos: Vec3{-5, 0, 0}}
	prey := Body{Pos: Vec3{5, 0, 0}, Vel: Vec3{0, 0.5, 0}}
	plan, evals := pl.Plan(pred, prey, rand.New(rand.NewPCG(1, 2)), budget(2000))
	if evals != 2000 || len(plan) != 10 {
		t.Fatalf("evals %d, plan of %d steps", evals, len(plan))
	}
	if plan[0].Pos != pred.Pos {
		t.Fatalf("plan starts at %v, want the predator's %v", plan[0].Pos, pred.Pos)
	}
	if plan[0].Force.norm() > pl.MaxForce+1e-9 {
		t.Fatalf("force %v over the limit", plan[0].Force)
	}
	if plan[0].Force[0] < 1 {
		t.Fatalf("force %v does not head for the prey at +x", plan[0].Force)
	}
	// Deterministic for a given seed and budget.
	again, _ := pl.Plan(pred, prey, rand.New(rand.NewPCG(1, 2)), budget(2000))
	if again[9] != plan[9] {
		t.Fatalf("two plans with the same seed differ: %v vs %v", again[9], plan[9])
	}
}

func TestPlannerMoreSearchIsNoWorse(t *testing.T) {
	pl := DefaultPlanner(DefaultWorld(), DefaultPrey(0))
	pred := Body{Pos: Vec3{0, 0, 0}, Vel: Vec3{0, 1, 0}}
	prey := Body{Pos: Vec3{3, 0, 0}, Vel: Vec3{0.5, 0, 0}}
	cost := func(n int) float64 {
		plan, _ := pl.Plan(pred, prey, rand.New(rand.NewPCG(7, 7)), budget(n))
		return pl.cost(candidate{plan[0].Force, plan[0].Force}, pred, prey)
	}
	_ = cost
	c1 := pl.cost(candidate{}, pred, prey)
	plan, _ := pl.Plan(pred, prey, rand.New(rand.NewPCG(7, 7)), budget(5000))
	if plan[0].Force.norm() == 0 {
		t.Fatal("no force planned")
	}
	if c := cost(5000); !(c <= c1) {
		t.Fatalf("planned cost %v worse than doing nothing %v", c, c1)
	}
}

func TestPlanRoundTrip(t *testing.T) {
	plan := []PlanStep{{Pos: Vec3{1, 2, 3}, Vel: Vec3{4, 5, 6}, Force: Vec3{7, 8, 9}}, {}}
	stamp, dt, back, ok := DecodePlan(EncodePlan(1.5, 0.01, plan))
	if !ok || stamp != 1.5 || dt != 0.01 || len(back) != 2 || back[0] != plan[0] {
		t.Fatalf("round trip: %v %v %v %v", stamp, dt, back, ok)
	}
	for _, bad := range [][]float64{nil, {0, 0.01, 1}, {0, 0.01, 1.5}, {0, 0, 0}, {0, 0.01, -1}} {
		if _, _, _, ok := DecodePlan(bad); ok {
			t.Errorf("DecodePlan(%v) accepted", bad)
		}
	}
}

func TestTracker(t *testing.T) {
	tr := DefaultTracker()
	plan := []PlanStep{{Pos: Vec3{0, 0, 0}, Force: Vec3{1, 0, 0}}, {Pos: Vec3{0.1, 0, 0}, Force: Vec3{1, 0, 0}}}
	if f := tr.Force(plan, 0.01, 0, Body{}); f != (Vec3{1, 0, 0}) {
		t.Fatalf("on the plan: %v, want the feed-forward", f)
	}
	if f := tr.Force(plan, 0.01, 0.015, Body{}); math.Abs(f[0]-1.4) > 1e-9 {
		t.Fatalf("behind the plan: %v, want feed-forward + Kp·0.1", f)
	}
	if f := tr.Force(plan, 0.01, 0.02, Body{}); f != (Vec3{}) {
		t.Fatalf("past the plan: %v, want no-op", f)
	}
	if f := tr.Force(nil, 0.01, 0, Body{}); f != (Vec3{}) {
		t.Fatalf("no plan: %v", f)
	}
	if f := tr.Force(plan, 0.01, 0, Body{Pos: Vec3{-100, 0, 0}}); math.Abs(f.norm()-tr.MaxForce) > 1e-9 {
		t.Fatalf("far off: %v, want |f| = %v", f, tr.MaxForce)
	}
}

func TestPreyWalkIsSeededAndFleeIsLimited(t *testing.T) {
	p := DefaultPrey(3)
	own, far := Body{}, Body{Pos: Vec3{10, 0, 0}}
	a, b := p.Force(2.3, own, far), p.Force(2.7, own, far)
	if a != b {
		t.Fatalf("the walk changed within a period: %v vs %v", a, b)
	}
	if c := DefaultPrey(4).Force(2.3, own, far); c == a {
		t.Fatal("two seeds give the same walk")
	}
	if a.norm() > p.WalkForce+1e-12 {
		t.Fatalf("walk force %v over %v", a, p.WalkForce)
	}
	near := Body{Pos: Vec3{3, 0, 0}}
	if f := p.Force(2.3, own, near); f != (Vec3{-p.FleeForce, 0, 0}) {
		t.Fatalf("flee force %v, want straight away with %v N", f, p.FleeForce)
	}
}

func TestProcessCPU(t *testing.T) {
	a := processCPU()
	x := 0.0
	for i := range 3_000_000 {
		x += math.Sqrt(float64(i))
	}
	if b := processCPU(); a <= 0 || b <= a {
		t.Fatalf("process CPU %d then %d (%v)", a, b, x)
	}
}
