package dynamics

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// ShipsParams configures the Ships model (paper 000 §4: two "space ships",
// rigid bodies moving freely in SE(3) under forces, kept in a cube by a
// spring-like penalty force). Units are SI.
type ShipsParams struct {
	// Mass of each ship, kg. Default 1.
	Mass float64 `yaml:"mass"`
	// Inertia is each ship's (isotropic) moment of inertia, kg·m². Default 1.
	Inertia float64 `yaml:"inertia"`
	// HalfSize is half the cube's edge, m: the free region is
	// [-HalfSize, HalfSize]³. Default 10.
	HalfSize float64 `yaml:"half_size"`
	// Stiffness is the boundary's spring constant, N/m: a ship at distance
	// d outside the free region along an axis is pushed back by
	// Stiffness·d along it. Default 20.
	Stiffness float64 `yaml:"stiffness"`
	// Drag is a linear drag, N·s/m (and N·m·s on rotation). Default 0.
	Drag float64 `yaml:"drag"`
	// MaxForce and MaxTorque clamp each component of a command. Default 10.
	MaxForce  float64 `yaml:"max_force"`
	MaxTorque float64 `yaml:"max_torque"`
	// Separation is the initial distance, m, along x: body 0 starts at
	// (+Separation/2, 0, 0), body 1 at (−Separation/2, 0, 0), bodies past
	// the second on the y axis; all at rest. Default 10.
	Separation float64 `yaml:"separation"`
}

// DefaultShipsParams returns the defaults documented on ShipsParams.
func DefaultShipsParams() ShipsParams {
	return ShipsParams{Mass: 1, Inertia: 1, HalfSize: 10, Stiffness: 20, Drag: 0, MaxForce: 10, MaxTorque: 10, Separation: 10}
}

type shipsParam struct {
	name  string
	field func(p *ShipsParams) *float64
	rule  string
	ok    func(v float64) bool
}

var shipsParamTable = []shipsParam{
	{"mass", func(p *ShipsParams) *float64 { return &p.Mass }, "a finite number > 0", positive},
	{"inertia", func(p *ShipsParams) *float64 { return &p.Inertia }, "a finite number > 0", positive},
	{"half_size", func(p *ShipsParams) *float64 { return &p.HalfSize }, "a finite number > 0", positive},
	{"stiffness", func(p *ShipsParams) *float64 { return &p.Stiffness }, "a finite number ≥ 0", nonNegative},
	{"drag", func(p *ShipsParams) *float64 { return &p.Drag }, "a finite number ≥ 0", nonNegative},
	{"max_force", func(p *ShipsParams) *float64 { return &p.MaxForce }, "a finite number ≥ 0", nonNegative},
	{"max_torque", func(p *ShipsParams) *float64 { return &p.MaxTorque }, "a finite number ≥ 0", nonNegative},
	{"separation", func(p *ShipsParams) *float64 { return &p.Separation }, "a finite number ≥ 0", nonNegative},
}

func (p *ShipsParams) set(params map[string]any) error {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var d *shipsParam
		for i := range shipsParamTable {
			if shipsParamTable[i].name == k {
				d = &shipsParamTable[i]
				break
			}
		}
		if d == nil {
			names := make([]string, len(shipsParamTable))
			for i, t := range shipsParamTable {
				names[i] = t.name
			}
			sort.Strings(names)
			return fmt.Errorf("dynamics: ships: %w: unknown parameter %q (valid: %s)", ErrBadParam, k, strings.Join(names, ", "))
		}
		v, ok := number(params[k])
		if !ok {
			return fmt.Errorf("dynamics: ships: %w: parameter %q must be %s, got %T %v", ErrBadParam, k, d.rule, params[k], params[k])
		}
		*d.field(p) = v
	}
	return p.Validate()
}

// Validate checks every parameter against its range.
func (p ShipsParams) Validate() error {
	for i := range shipsParamTable {
		d := &shipsParamTable[i]
		if v := *d.field(&p); !d.ok(v) {
			return fmt.Errorf("dynamics: ships: %w: parameter %q must be %s, got %v", ErrBadParam, d.name, d.rule, v)
		}
	}
	return nil
}

// Layout of the Ships model's vectors.
const (
	// ShipCommandLen is a ship's command: force x, y, z (N) then torque x,
	// y, z (N·m), in the world frame.
	ShipCommandLen = 6
	// ShipJoints is the number of "joints" of a ship's observation: own
	// x, y, z, roll, pitch, yaw, then the other ship's (the next body,
	// cyclically) x, y, z, roll, pitch, yaw.
	ShipJoints = 12
	// ShipObservationLen is [positions (ShipJoints)..., velocities
	// (ShipJoints)...]: the velocities are own vx, vy, vz, ωx, ωy, ωz and
	// the other ship's, world frame.
	ShipObservationLen = 2 * ShipJoints
)

// ShipJointNames names the joints of a ship's observation, in order.
var ShipJointNames = []string{
	"x", "y", "z", "roll", "pitch", "yaw",
	"other_x", "other_y", "other_z", "other_roll", "other_pitch", "other_yaw",
}

// ship is one rigid body's state, world frame.
type ship struct {
	pos, vel, omega [3]float64
	q               [4]float64 // orientation quaternion w, x, y, z
	force, torque   [3]float64
}

// Ships is the pursuit world: free rigid bodies in a cube (see
// ShipsParams). Body b's observation is its own pose and velocity followed
// by body (b+1) mod n's.
type Ships struct {
	p     ShipsParams
	step  int64
	now   int64
	ships []ship
}

// NewShips builds the model with bodies ships and integration step step
// (ns).
func NewShips(bodies int, step int64, p ShipsParams) (*Ships, error) {
	if bodies < 1 || bodies > MaxBodies {
		return nil, fmt.Errorf("dynamics: ships: %w: bodies must be in [1, %d], got %d", ErrBadParam, MaxBodies, bodies)
	}
	if step <= 0 || step > MaxStep {
		return nil, fmt.Errorf("dynamics: ships: %w: step must be in (0, %d] ns, got %d", ErrBadParam, MaxStep, step)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	w := &Ships{p: p, step: step, ships: make([]ship, bodies)}
	w.Reset()
	return w, nil
}

// Reset implements Resetter: every ship at rest at its starting place
// (forces and torques, the commands, are kept).
func (w *Ships) Reset() {
	for b := range w.ships {
		s := &w.ships[b]
		s.pos, s.vel, s.omega = [3]float64{}, [3]float64{}, [3]float64{}
		s.q = [4]float64{1, 0, 0, 0}
		switch b {
		case 0:
			s.pos[0] = w.p.Separation / 2
		case 1:
			s.pos[0] = -w.p.Separation / 2
		default:
			s.pos[1] = float64(b-1) * w.p.Separation / 2
		}
	}
}

// Params returns the model's parameters.
func (w *Ships) Params() ShipsParams { return w.p }

// Bodies implements World.
func (w *Ships) Bodies() int { return len(w.ships) }

// CommandLen implements World: ShipCommandLen.
func (w *Ships) CommandLen(int) int { return ShipCommandLen }

// ObservationLen implements World: ShipObservationLen.
func (w *Ships) ObservationLen(int) int { return ShipObservationLen }

// JointNames names the joints of body b's observation (ShipJointNames).
func (w *Ships) JointNames(int) []string { return ShipJointNames }

// SetCommand implements World: force then torque, each component clamped
// to ±MaxForce / ±MaxTorque; NaN counts as 0.
func (w *Ships) SetCommand(b int, cmd []float64) {
	if b < 0 || b >= len(w.ships) {
		return
	}
	s := &w.ships[b]
	for i := range 3 {
		s.force[i] = clampCmd(cmd, i, w.p.MaxForce)
		s.torque[i] = clampCmd(cmd, 3+i, w.p.MaxTorque)
	}
}

func clampCmd(cmd []float64, i int, lim float64) float64 {
	if i >= len(cmd) || math.IsNaN(cmd[i]) {
		return 0
	}
	return math.Max(-lim, math.Min(lim, cmd[i]))
}

// Observe implements World (see ShipObservationLen).
func (w *Ships) Observe(b int, dst []float64) int {
	if b < 0 || b >= len(w.ships) {
		return 0
	}
	var buf [ShipObservationLen]float64
	own, other := &w.ships[b], &w.ships[(b+1)%len(w.ships)]
	own.fill(buf[0:6], buf[ShipJoints:ShipJoints+6])
	other.fill(buf[6:12], buf[ShipJoints+6:ShipJoints+12])
	return copy(dst, buf[:])
}

// fill writes pos, roll-pitch-yaw into p and vel, ω into v.
func (s *ship) fill(p, v []float64) {
	copy(p[0:3], s.pos[:])
	p[3], p[4], p[5] = rpy(s.q)
	copy(v[0:3], s.vel[:])
	copy(v[3:6], s.omega[:])
}

// rpy is the ZYX Euler angles of quaternion q.
func rpy(q [4]float64) (roll, pitch, yaw float64) {
	w, x, y, z := q[0], q[1], q[2], q[3]
	roll = math.Atan2(2*(w*x+y*z), 1-2*(x*x+y*y))
	pitch = math.Asin(math.Max(-1, math.Min(1, 2*(w*y-z*x))))
	yaw = math.Atan2(2*(w*z+x*y), 1-2*(y*y+z*z))
	return
}

// Now implements World.
func (w *Ships) Now() int64 { return w.now }

// Step implements World: RK4 on the translation (boundary springs, drag,
// force), exact integration of the rotation for a constant torque over
// each substep of at most 1 ms. h ≤ 0 does nothing.
func (w *Ships) Step(h int64) {
	if h <= 0 {
		return
	}
	n := (h + maxSubstep - 1) / maxSubstep
	dt := float64(h) / float64(n) * 1e-9
	for b := range w.ships {
		s := &w.ships[b]
		for range n {
			w.substep(s, dt)
		}
	}
	w.now += h
}

func (w *Ships) substep(s *ship, dt float64) {
	for i := range 3 {
		x, v, f := s.pos[i], s.vel[i], s.force[i]
		k1x, k1v := v, w.accel(x, v, f)
		k2x, k2v := v+0.5*dt*k1v, w.accel(x+0.5*dt*k1x, v+0.5*dt*k1v, f)
		k3x, k3v := v+0.5*dt*k2v, w.accel(x+0.5*dt*k2x, v+0.5*dt*k2v, f)
		k4x, k4v := v+dt*k3v, w.accel(x+dt*k3x, v+dt*k3v, f)
		s.pos[i] = x + dt/6*(k1x+2*k2x+2*k3x+k4x)
		s.vel[i] = v + dt/6*(k1v+2*k2v+2*k3v+k4v)
	}
	// Rotation: ω̇ = (τ − drag ω)/I, then the orientation turns by the
	// mean ω over the substep.
	var mean [3]float64
	for i := range 3 {
		old := s.omega[i]
		s.omega[i] += dt * (s.torque[i] - w.p.Drag*old) / w.p.Inertia
		mean[i] = 0.5 * (old + s.omega[i])
	}
	s.q = rotate(s.q, mean, dt)
}

// accel is the acceleration along one axis at position x, velocity v
// under force f.
func (w *Ships) accel(x, v, f float64) float64 {
	return (f + BoundaryForce(x, w.p.HalfSize, w.p.Stiffness) - w.p.Drag*v) / w.p.Mass
}

// BoundaryForce is the penalty force along one axis on a ship at x: 0
// inside [−half, half], −stiffness·(x − half) beyond half, and
// −stiffness·(x + half) below −half.
func BoundaryForce(x, half, stiffness float64) float64 {
	switch {
	case x > half:
		return -stiffness * (x - half)
	case x < -half:
		return -stiffness * (x + half)
	}
	return 0
}

// rotate turns quaternion q by angular velocity ω (world frame) over dt.
func rotate(q [4]float64, om [3]float64, dt float64) [4]float64 {
	a := math.Sqrt(om[0]*om[0]+om[1]*om[1]+om[2]*om[2]) * dt
	if a == 0 {
		return q
	}
	s := math.Sin(a/2) / (a / dt)
	d := [4]float64{math.Cos(a / 2), om[0] * s, om[1] * s, om[2] * s}
	// d ⊗ q: a world-frame rotation applied after q.
	r := [4]float64{
		d[0]*q[0] - d[1]*q[1] - d[2]*q[2] - d[3]*q[3],
		d[0]*q[1] + d[1]*q[0] + d[2]*q[3] - d[3]*q[2],
		d[0]*q[2] - d[1]*q[3] + d[2]*q[0] + d[3]*q[1],
		d[0]*q[3] + d[1]*q[2] - d[2]*q[1] + d[3]*q[0],
	}
	nrm := math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2] + r[3]*r[3])
	for i := range r {
		r[i] /= nrm
	}
	return r
}

// State returns body b's position, velocity and angular velocity.
func (w *Ships) State(b int) (pos, vel, omega [3]float64) {
	s := &w.ships[b]
	return s.pos, s.vel, s.omega
}

// SetState sets body b's position, velocity and angular velocity (tests).
func (w *Ships) SetState(b int, pos, vel, omega [3]float64) {
	s := &w.ships[b]
	s.pos, s.vel, s.omega = pos, vel, omega
}

// Energy is the kinetic energy of every ship plus the boundary springs'
// potential energy, J.
func (w *Ships) Energy() float64 {
	e := 0.0
	h, k := w.p.HalfSize, w.p.Stiffness
	for b := range w.ships {
		s := &w.ships[b]
		for i := range 3 {
			e += 0.5*w.p.Mass*s.vel[i]*s.vel[i] + 0.5*w.p.Inertia*s.omega[i]*s.omega[i]
			if d := math.Abs(s.pos[i]) - h; d > 0 {
				e += 0.5 * k * d * d
			}
		}
	}
	return e
}

var _ World = (*Ships)(nil)
