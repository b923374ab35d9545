package rosnode

import (
	"math"
	"math/rand/v2"
)

// The pursuit experiment (paper 000 §4): the models the prey, the
// predator's planner and its controller share. They see the ships'
// translation only (the "ships" dynamics model's positions and velocities);
// rotation is damped by the controllers and ignored by the planner.

// Vec3 is a vector in the world frame.
type Vec3 [3]float64

func (a Vec3) add(b Vec3) Vec3      { return Vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a Vec3) sub(b Vec3) Vec3      { return Vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a Vec3) scale(k float64) Vec3 { return Vec3{k * a[0], k * a[1], k * a[2]} }
func (a Vec3) norm() float64        { return math.Sqrt(a[0]*a[0] + a[1]*a[1] + a[2]*a[2]) }
func (a Vec3) clampNorm(m float64) Vec3 {
	if n := a.norm(); n > m && n > 0 {
		return a.scale(m / n)
	}
	return a
}

// Body is a ship's translational state.
type Body struct {
	Pos, Vel Vec3
}

// World is what the pursuit nodes know of the ships world (the "ships"
// dynamics model's parameters they need).
type World struct {
	Mass, HalfSize, Stiffness, Drag float64
}

// DefaultWorld matches dynamics.DefaultShipsParams.
func DefaultWorld() World { return World{Mass: 1, HalfSize: 10, Stiffness: 20} }

// accel is a ship's acceleration under force f (boundary springs, drag).
func (w World) accel(b Body, f Vec3) Vec3 {
	var a Vec3
	for i := range 3 {
		x := b.Pos[i]
		spring := 0.0
		switch {
		case x > w.HalfSize:
			spring = -w.Stiffness * (x - w.HalfSize)
		case x < -w.HalfSize:
			spring = -w.Stiffness * (x + w.HalfSize)
		}
		a[i] = (f[i] + spring - w.Drag*b.Vel[i]) / w.Mass
	}
	return a
}

// Step integrates b under force f for dt seconds (semi-implicit Euler: the
// planner's model, cheaper than the world's RK4 and close at 10 ms).
func (w World) Step(b Body, f Vec3, dt float64) Body {
	a := w.accel(b, f)
	b.Vel = b.Vel.add(a.scale(dt))
	b.Pos = b.Pos.add(b.Vel.scale(dt))
	return b
}

// Prey is the prey's policy: a seeded random walk, or flight straight away
// from the predator with limited force when it is nearer than FleeDist.
type Prey struct {
	// Seed makes the walk reproducible across trials and modes.
	Seed uint64
	// FleeDist is the distance (m) under which the prey flees. Default 5.
	FleeDist float64
	// FleeForce is the force (N) it flees with. Default 1.
	FleeForce float64
	// WalkSpeed (m/s) and WalkForce (N): the walk steers toward a random
	// velocity of WalkSpeed, drawn anew every WalkPeriod (s), with at most
	// WalkForce. Defaults 1, 0.5, 1.
	WalkSpeed, WalkForce, WalkPeriod float64
	// Gain is the walk's velocity gain, N·s/m. Default 2.
	Gain float64
}

// DefaultPrey is the experiment's prey with seed.
func DefaultPrey(seed uint64) Prey {
	return Prey{Seed: seed, FleeDist: 5, FleeForce: 1, WalkSpeed: 1, WalkForce: 0.5, WalkPeriod: 1, Gain: 2}
}

// Fleeing reports whether the prey at own flees from a predator at other.
func (p Prey) Fleeing(own, other Body) bool { return own.Pos.sub(other.Pos).norm() < p.FleeDist }

// FleeForce is the force of flight from other: FleeForce straight away.
func (p Prey) flee(own, other Body) Vec3 {
	d := own.Pos.sub(other.Pos)
	n := d.norm()
	if n == 0 {
		return Vec3{p.FleeForce, 0, 0}
	}
	return d.scale(p.FleeForce / n)
}

// Force is the prey's command at time t (s) in state own with the predator
// at other. The walk's direction depends only on Seed and t, so the same
// seed gives the same walk in every mode.
func (p Prey) Force(t float64, own, other Body) Vec3 {
	if p.Fleeing(own, other) {
		return p.flee(own, other)
	}
	k := uint64(0)
	if t > 0 && p.WalkPeriod > 0 {
		k = uint64(t / p.WalkPeriod)
	}
	r := rand.New(rand.NewPCG(p.Seed, k))
	// A direction uniform on the sphere.
	z := 2*r.Float64() - 1
	phi := 2 * math.Pi * r.Float64()
	s := math.Sqrt(1 - z*z)
	dir := Vec3{s * math.Cos(phi), s * math.Sin(phi), z}
	return dir.scale(p.WalkSpeed).sub(own.Vel).scale(p.Gain).clampNorm(p.WalkForce)
}

// PreyModel is the planner's model of the prey: its deterministic flight,
// and otherwise coasting (the walk's seed is the prey's secret).
func (p Prey) PreyModel(own, other Body) Vec3 {
	if p.Fleeing(own, other) {
		return p.flee(own, other)
	}
	return Vec3{}
}

// PlanStep is one step of a plan: the predator's expected state at the
// step's start and the feed-forward force over the step.
type PlanStep struct {
	Pos, Vel, Force Vec3
}

// Planner is the predator's kinodynamic planner: random shooting with
// local refinement. A candidate is two forces, one held over the plan
// (Steps·Dt seconds, what the controller executes) and one over the rest
// of the horizon; the planner integrates its models of predator and prey
// forward with step Dt and keeps the candidate whose predator stays
// nearest the prey (mean distance over the horizon plus the final one).
type Planner struct {
	World World
	Prey  Prey
	// MaxForce is the predator's force limit, N. Default 2.
	MaxForce float64
	// Dt is the plan step, s. Default 0.01.
	Dt float64
	// Steps is the plan's length in steps (the controller never executes
	// more). Default 10 (0.1 s).
	Steps int
	// Horizon is how far ahead candidates are evaluated, s. Default 1.
	Horizon float64
}

// DefaultPlanner is the experiment's planner.
func DefaultPlanner(w World, prey Prey) Planner {
	return Planner{World: w, Prey: prey, MaxForce: 2, Dt: 0.01, Steps: 10, Horizon: 1}
}

// candidate is a plan's two forces.
type candidate struct{ u1, u2 Vec3 }

// cost integrates the candidate from predator pred and prey prey.
func (pl *Planner) cost(c candidate, pred, prey Body) float64 {
	n := int(math.Round(pl.Horizon / pl.Dt))
	sum := 0.0
	d := 0.0
	for k := range n {
		u := c.u2
		if k < pl.Steps {
			u = c.u1
		}
		fp := pl.Prey.PreyModel(prey, pred)
		pred = pl.World.Step(pred, u, pl.Dt)
		prey = pl.World.Step(prey, fp, pl.Dt)
		d = pred.Pos.sub(prey.Pos).norm()
		sum += d
	}
	return sum/float64(max(n, 1)) + d
}

// randomForce is a force uniform in the ball of radius MaxForce.
func (pl *Planner) randomForce(r *rand.Rand) Vec3 {
	for {
		v := Vec3{2*r.Float64() - 1, 2*r.Float64() - 1, 2*r.Float64() - 1}
		if v.norm() <= 1 {
			return v.scale(pl.MaxForce)
		}
	}
}

// Plan plans from predator pred and prey prey. It evaluates candidates
// until more returns false (called before each one, after a first
// pursuit-straight-at-the-prey candidate), and returns the best plan and
// the number of candidates evaluated. r drives the sampling.
func (pl *Planner) Plan(pred, prey Body, r *rand.Rand, more func() bool) ([]PlanStep, int) {
	// First candidate: full force toward where the prey will be.
	lead := prey.Pos.add(prey.Vel.scale(pl.Horizon / 2)).sub(pred.Pos.add(pred.Vel.scale(pl.Horizon / 2)))
	toward := Vec3{}
	if n := lead.norm(); n > 0 {
		toward = lead.scale(pl.MaxForce / n)
	}
	best := candidate{toward, toward}
	bestCost := pl.cost(best, pred, prey)
	evals := 1
	for more() {
		var c candidate
		if evals%2 == 0 {
			c = candidate{pl.randomForce(r), pl.randomForce(r)}
		} else {
			// Refine the best: a perturbation shrinking as the search goes.
			s := 0.5 * pl.MaxForce / math.Sqrt(float64(evals))
			c = best
			for i := range 3 {
				c.u1[i] += s * r.NormFloat64()
				c.u2[i] += s * r.NormFloat64()
			}
			c.u1, c.u2 = c.u1.clampNorm(pl.MaxForce), c.u2.clampNorm(pl.MaxForce)
		}
		if k := pl.cost(c, pred, prey); k < bestCost {
			best, bestCost = c, k
		}
		evals++
	}
	plan := make([]PlanStep, pl.Steps)
	b := pred
	for k := range plan {
		plan[k] = PlanStep{Pos: b.Pos, Vel: b.Vel, Force: best.u1}
		b = pl.World.Step(b, best.u1, pl.Dt)
	}
	return plan, evals
}

// Plan message layout (std_msgs/Float64MultiArray data): stamp (s, the ROS
// time of the state planned from), dt (s), steps, then per step pos(3),
// vel(3), force(3).
const planHeader, planStride = 3, 9

// EncodePlan lays a plan out as a Float64MultiArray's data.
func EncodePlan(stamp, dt float64, plan []PlanStep) []float64 {
	out := make([]float64, 0, planHeader+planStride*len(plan))
	out = append(out, stamp, dt, float64(len(plan)))
	for _, s := range plan {
		out = append(out, s.Pos[:]...)
		out = append(out, s.Vel[:]...)
		out = append(out, s.Force[:]...)
	}
	return out
}

// DecodePlan reads a plan from a Float64MultiArray's data; ok is false
// when the data is not one.
func DecodePlan(data []float64) (stamp, dt float64, plan []PlanStep, ok bool) {
	if len(data) < planHeader {
		return 0, 0, nil, false
	}
	n := int(data[2])
	if data[2] != float64(n) || n < 0 || len(data) != planHeader+planStride*n || !(data[1] > 0) {
		return 0, 0, nil, false
	}
	plan = make([]PlanStep, n)
	for k := range plan {
		v := data[planHeader+planStride*k:]
		copy(plan[k].Pos[:], v[0:3])
		copy(plan[k].Vel[:], v[3:6])
		copy(plan[k].Force[:], v[6:9])
	}
	return data[0], data[1], plan, true
}

// Tracker is the predator's controller law: the plan's force fed forward
// plus a PD on the error to the plan's state, limited to MaxForce; no-op
// (zero force) without a plan or past its end.
type Tracker struct {
	Kp, Kd, MaxForce float64
}

// DefaultTracker is the experiment's controller law.
func DefaultTracker() Tracker { return Tracker{Kp: 4, Kd: 4, MaxForce: 2} }

// Force is the command at elapsed seconds since the plan began executing.
func (t Tracker) Force(plan []PlanStep, dt, elapsed float64, own Body) Vec3 {
	if len(plan) == 0 || elapsed < 0 || dt <= 0 {
		return Vec3{}
	}
	k := int(elapsed / dt)
	if k >= len(plan) {
		return Vec3{}
	}
	s := plan[k]
	u := s.Force.add(s.Pos.sub(own.Pos).scale(t.Kp)).add(s.Vel.sub(own.Vel).scale(t.Kd))
	return u.clampNorm(t.MaxForce)
}
