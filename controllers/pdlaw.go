package controllers

import "math"

// PD is the pendulum swing-up and balance law of paper 004 §4: energy
// pumping far from the target, PD control near it. It is pure and does not
// allocate; the pd client calls it once per activation.
type PD struct {
	// Kp (N·m/rad) and Kd (N·m·s/rad) are the balance gains. Defaults 40, 8.
	Kp, Kd float64
	// Ke is the energy-pumping gain, N·m/J. Default 2.
	Ke float64
	// Catch is the angle from the target (rad) within which the PD law takes
	// over from energy pumping. Default 0.5.
	Catch float64
	// MaxTorque clips the output, N·m. Default 5 (the pendulum's default).
	MaxTorque float64
	// Mass (kg), Length (m) and Gravity (m/s²) are the model the energy is
	// computed with. Defaults 1, 1, 9.81 (the pendulum's defaults).
	Mass, Length, Gravity float64
}

// DefaultPD returns gains that swing up the default pendulum
// (dynamics.DefaultPendulumParams) from hanging and balance it, at 1 kHz.
func DefaultPD() PD {
	return PD{Kp: 40, Kd: 8, Ke: 2, Catch: 0.5, MaxTorque: 5, Mass: 1, Length: 1, Gravity: 9.81}
}

// WrapAngle maps a to (−π, π].
func WrapAngle(a float64) float64 {
	a = math.Mod(a+math.Pi, 2*math.Pi)
	if a <= 0 {
		a += 2 * math.Pi
	}
	return a - math.Pi
}

// Torque is the command for angle theta (0 hanging, π upright) and angular
// velocity thetadot, to hold the pendulum at angle target (π: upright).
func (c *PD) Torque(theta, thetadot, target float64) float64 {
	e := WrapAngle(theta - target)
	var u float64
	if math.Abs(e) < c.Catch {
		u = -c.Kp*e - c.Kd*thetadot
	} else {
		inertia := c.Mass * c.Length * c.Length
		mgl := c.Mass * c.Gravity * c.Length
		energy := 0.5*inertia*thetadot*thetadot - mgl*math.Cos(theta)
		want := -mgl * math.Cos(target)
		dir := 1.0 // pump along the motion; kick forward from rest
		if thetadot < 0 {
			dir = -1
		}
		u = c.Ke * (want - energy) * dir
	}
	if math.IsNaN(u) {
		return 0
	}
	return math.Max(-c.MaxTorque, math.Min(c.MaxTorque, u))
}
