package dynamics

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// ErrUnknownModel is returned (wrapped) by New for a model name it does not know.
var ErrUnknownModel = errors.New("unknown dynamics model")

// ErrBadParam is returned (wrapped) by New and PendulumParams.Validate for
// an unknown or invalid parameter.
var ErrBadParam = errors.New("bad dynamics parameter")

// ErrNotBuilt is returned (wrapped) by New for a model this binary was
// built without (MuJoCo needs the build tag mujoco).
var ErrNotBuilt = errors.New("this tcs was built without MuJoCo (dynamics.model: mujoco); " +
	"install MuJoCo 2.2.2 (apt-get install libmujoco-dev) and build with: go build -tags mujoco ./cmd/tcs")

// Models lists the model names New accepts; "mujoco" only works in a
// binary built with the tag mujoco (MuJoCoBuilt), and the registered
// models (Register) follow the built-in ones.
func Models() []string {
	return append([]string{"mujoco", "pendulum", "remote", "ships"}, registeredNames()...)
}

// MaxBodies bounds the number of bodies New accepts.
const MaxBodies = 1 << 16

// MaxStep bounds the step New accepts (1 s of virtual time).
const MaxStep = int64(1e9)

// New builds the embedded model called model with the given number of bodies
// and step (ns), from parameters as a scenario file gives them (numbers as
// float64 or any integer type; missing parameters take their defaults).
// Errors name the model, the parameter and the valid names or range.
func New(model string, bodies int, step int64, params map[string]any) (World, error) {
	switch model {
	case "pendulum":
		p := DefaultPendulumParams()
		if err := p.set(params); err != nil {
			return nil, err
		}
		w, err := NewPendulum(bodies, step, p)
		if err != nil {
			return nil, err
		}
		return w, nil
	case "ships":
		p := DefaultShipsParams()
		if err := p.set(params); err != nil {
			return nil, err
		}
		w, err := NewShips(bodies, step, p)
		if err != nil {
			return nil, err
		}
		return w, nil
	case "mujoco":
		return newMuJoCo(bodies, step, params)
	case "remote":
		return newRemote(bodies, step, params)
	}
	if make, ok := registered(model); ok {
		return make(bodies, step, params)
	}
	if model == ModelSimulationInterfaces {
		return nil, fmt.Errorf("dynamics: %w", ErrNoROS2)
	}
	return nil, fmt.Errorf("dynamics: %w %q (valid: %s)", ErrUnknownModel, model, strings.Join(Models(), ", "))
}

// PendulumParams configures the pendulum model. Every field documents its
// default (DefaultPendulumParams).
type PendulumParams struct {
	// Mass of the point mass at the end of the rod, kg (> 0). Default 1.
	Mass float64 `yaml:"mass"`
	// Length of the massless rod, m (> 0). Default 1.
	Length float64 `yaml:"length"`
	// Damping is the viscous joint damping, N·m·s/rad (≥ 0). Default 0.05.
	Damping float64 `yaml:"damping"`
	// Gravity, m/s² (≥ 0). Default 9.81.
	Gravity float64 `yaml:"gravity"`
	// MaxTorque saturates the commanded torque to ±MaxTorque, N·m (≥ 0).
	// Default 5: less than m·g·l = 9.81, so a swing-up has to pump energy.
	MaxTorque float64 `yaml:"max_torque"`
	// InitialTheta is the initial angle, rad (0 hangs down, π is upright).
	// Default 0.05.
	InitialTheta float64 `yaml:"initial_theta"`
	// InitialThetaDot is the initial angular velocity, rad/s. Default 0.
	InitialThetaDot float64 `yaml:"initial_thetadot"`
}

// DefaultPendulumParams returns the documented defaults.
func DefaultPendulumParams() PendulumParams {
	return PendulumParams{
		Mass:         1,
		Length:       1,
		Damping:      0.05,
		Gravity:      9.81,
		MaxTorque:    5,
		InitialTheta: 0.05,
	}
}

// pendulumParam names one parameter for New, with its field and its check.
type pendulumParam struct {
	name  string
	field func(p *PendulumParams) *float64
	rule  string // human description of the valid range
	ok    func(v float64) bool
}

func positive(v float64) bool    { return v > 0 && !math.IsInf(v, 0) }
func nonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
func finite(v float64) bool      { return !math.IsNaN(v) && !math.IsInf(v, 0) }

var pendulumParamTable = []pendulumParam{
	{"mass", func(p *PendulumParams) *float64 { return &p.Mass }, "a finite number > 0", positive},
	{"length", func(p *PendulumParams) *float64 { return &p.Length }, "a finite number > 0", positive},
	{"damping", func(p *PendulumParams) *float64 { return &p.Damping }, "a finite number ≥ 0", nonNegative},
	{"gravity", func(p *PendulumParams) *float64 { return &p.Gravity }, "a finite number ≥ 0", nonNegative},
	{"max_torque", func(p *PendulumParams) *float64 { return &p.MaxTorque }, "a finite number ≥ 0", nonNegative},
	{"initial_theta", func(p *PendulumParams) *float64 { return &p.InitialTheta }, "a finite number", finite},
	{"initial_thetadot", func(p *PendulumParams) *float64 { return &p.InitialThetaDot }, "a finite number", finite},
}

func pendulumParamNames() string {
	names := make([]string, len(pendulumParamTable))
	for i, d := range pendulumParamTable {
		names[i] = d.name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// set applies params (by their yaml names) onto p and validates the result.
func (p *PendulumParams) set(params map[string]any) error {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic: the first bad key in order is reported
	for _, k := range keys {
		var d *pendulumParam
		for i := range pendulumParamTable {
			if pendulumParamTable[i].name == k {
				d = &pendulumParamTable[i]
				break
			}
		}
		if d == nil {
			return fmt.Errorf("dynamics: pendulum: %w: unknown parameter %q (valid: %s)", ErrBadParam, k, pendulumParamNames())
		}
		v, ok := number(params[k])
		if !ok {
			return fmt.Errorf("dynamics: pendulum: %w: parameter %q must be %s, got %T %v", ErrBadParam, k, d.rule, params[k], params[k])
		}
		*d.field(p) = v
	}
	return p.Validate()
}

// number converts the numeric types a YAML or JSON decoder produces.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// Validate checks every parameter's range; the error names the first bad
// parameter by its yaml name.
func (p PendulumParams) Validate() error {
	for i := range pendulumParamTable {
		d := &pendulumParamTable[i]
		if v := *d.field(&p); !d.ok(v) {
			return fmt.Errorf("dynamics: pendulum: %w: parameter %q must be %s, got %v", ErrBadParam, d.name, d.rule, v)
		}
	}
	return nil
}

// maxSubstep is the longest RK4 substep the pendulum takes (1 ms).
const maxSubstep = int64(1e6)

// Pendulum is N independent pendulums, one per body: a point mass m on a
// rigid massless rod of length l, with viscous damping b, gravity g and a
// torque u at the joint (command[0], saturated at ±MaxTorque):
//
//	m l² θ̈ = −m g l sin θ − b θ̇ + u
//
// θ = 0 hangs down, θ = π is upright. The observation is [θ, θ̇]; θ is the
// continuous joint angle (not wrapped: upright is any π + 2kπ).
//
// Step(h) integrates with classical Runge–Kutta (RK4) in equal substeps of
// at most 1 ms, so a partial step of any h > 0 is integrated exactly to h;
// the command is held constant over a step. Time is kept exactly in ns.
type Pendulum struct {
	p       PendulumParams
	step    int64
	now     int64
	inertia float64 // m l²
	mgl     float64 // m g l
	theta   []float64
	omega   []float64
	torque  []float64
}

// NewPendulum builds bodies pendulums with the given step (ns, 0 < step ≤
// MaxStep) and parameters.
func NewPendulum(bodies int, step int64, p PendulumParams) (*Pendulum, error) {
	if bodies < 1 || bodies > MaxBodies {
		return nil, fmt.Errorf("dynamics: pendulum: %w: bodies must be in [1, %d], got %d", ErrBadParam, MaxBodies, bodies)
	}
	if step <= 0 || step > MaxStep {
		return nil, fmt.Errorf("dynamics: pendulum: %w: step must be in (0, %d] ns, got %d", ErrBadParam, MaxStep, step)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	w := &Pendulum{
		p:       p,
		step:    step,
		inertia: p.Mass * p.Length * p.Length,
		mgl:     p.Mass * p.Gravity * p.Length,
		theta:   make([]float64, bodies),
		omega:   make([]float64, bodies),
		torque:  make([]float64, bodies),
	}
	if math.IsInf(w.inertia, 0) || w.inertia == 0 || math.IsInf(w.mgl, 0) {
		return nil, fmt.Errorf("dynamics: pendulum: %w: mass·length² = %v and mass·gravity·length = %v must be finite and nonzero", ErrBadParam, w.inertia, w.mgl)
	}
	w.Reset()
	return w, nil
}

// Reset implements Resetter: every pendulum back at its initial angle and
// rate.
func (w *Pendulum) Reset() {
	for b := range w.theta {
		w.theta[b] = w.p.InitialTheta
		w.omega[b] = w.p.InitialThetaDot
	}
}

// Params returns the parameters the pendulum was built with.
func (w *Pendulum) Params() PendulumParams { return w.p }

// StepSize is the configured step (ns).
func (w *Pendulum) StepSize() int64 { return w.step }

// Bodies implements World.
func (w *Pendulum) Bodies() int { return len(w.theta) }

// CommandLen implements World: [torque].
func (w *Pendulum) CommandLen(b int) int { return 1 }

// ObservationLen implements World: [θ, θ̇].
func (w *Pendulum) ObservationLen(b int) int { return 2 }

// pendulumJoint names a pendulum's joint.
var pendulumJoint = []string{"pendulum_joint"}

// JointNames implements JointNamer: every body's joint is pendulum_joint
// (also when the world is served to tcs by another process).
func (w *Pendulum) JointNames(b int) []string { return pendulumJoint }

// SetCommand implements World: torque = cmd[0], saturated at ±MaxTorque; a
// NaN command is taken as 0. An out-of-range b is ignored.
func (w *Pendulum) SetCommand(b int, cmd []float64) {
	if b < 0 || b >= len(w.torque) {
		return
	}
	u := 0.0
	if len(cmd) > 0 && !math.IsNaN(cmd[0]) {
		u = math.Max(-w.p.MaxTorque, math.Min(w.p.MaxTorque, cmd[0]))
	}
	w.torque[b] = u
}

// Observe implements World: dst[0] = θ, dst[1] = θ̇ (as many as fit). An
// out-of-range b writes nothing.
func (w *Pendulum) Observe(b int, dst []float64) int {
	if b < 0 || b >= len(w.theta) {
		return 0
	}
	n := 0
	if len(dst) > 0 {
		dst[0] = w.theta[b]
		n++
	}
	if len(dst) > 1 {
		dst[1] = w.omega[b]
		n++
	}
	return n
}

// Now implements World.
func (w *Pendulum) Now() int64 { return w.now }

// Step implements World. h ≤ 0 does nothing; h larger than the step is
// integrated all the same (in substeps of at most 1 ms).
func (w *Pendulum) Step(h int64) {
	if h <= 0 {
		return
	}
	n := (h + maxSubstep - 1) / maxSubstep
	dt := float64(h) / float64(n) * 1e-9
	for b := range w.theta {
		th, om := w.theta[b], w.omega[b]
		for range n {
			th, om = w.rk4(th, om, w.torque[b], dt)
		}
		w.theta[b], w.omega[b] = th, om
	}
	w.now += h
}

// accel is θ̈ for the state (θ, ω) under torque u.
func (w *Pendulum) accel(th, om, u float64) float64 {
	return (-w.mgl*math.Sin(th) - w.p.Damping*om + u) / w.inertia
}

func (w *Pendulum) rk4(th, om, u, dt float64) (float64, float64) {
	k1t, k1o := om, w.accel(th, om, u)
	k2t, k2o := om+0.5*dt*k1o, w.accel(th+0.5*dt*k1t, om+0.5*dt*k1o, u)
	k3t, k3o := om+0.5*dt*k2o, w.accel(th+0.5*dt*k2t, om+0.5*dt*k2o, u)
	k4t, k4o := om+dt*k3o, w.accel(th+dt*k3t, om+dt*k3o, u)
	return th + dt/6*(k1t+2*k2t+2*k3t+k4t), om + dt/6*(k1o+2*k2o+2*k3o+k4o)
}

// State returns body b's angle and angular velocity.
func (w *Pendulum) State(b int) (theta, thetadot float64) { return w.theta[b], w.omega[b] }

// SetState sets body b's angle and angular velocity (tests, resets).
func (w *Pendulum) SetState(b int, theta, thetadot float64) {
	w.theta[b], w.omega[b] = theta, thetadot
}

// Energy is body b's mechanical energy, J: ½ m l² θ̇² − m g l cos θ
// (−m g l hanging at rest, +m g l upright at rest).
func (w *Pendulum) Energy(b int) float64 {
	return 0.5*w.inertia*w.omega[b]*w.omega[b] - w.mgl*math.Cos(w.theta[b])
}

var _ World = (*Pendulum)(nil)
