// Package dynamics is the simulation plug-in interface of tcs and its
// embedded models.
//
// A World is stepped only by the coordinator, by at most its configured
// step, and never reads a clock: all time is virtual, in int64 nanoseconds.
// Commands take effect at the virtual instant they are applied; sensors are
// read as a snapshot of the state at the world's current time.
//
// Embedded models are built by name with New (the scenario's dynamics
// section): "pendulum" (Pendulum, PendulumParams), "ships" (Ships,
// ShipsParams: the pursuit experiment's rigid bodies in a box) and, in a
// binary built with the tag mujoco, "mujoco" (package dynamics/mujoco: an
// MJCF model, params {mjcf: path}). "remote" is a world another process
// serves (package dynamics/remote: params {cmd: [argv...]} or {socket:
// path}), stepped through the native world protocol. A transport adds
// models of its own with Register: bridge/ros2 adds
// "simulation_interfaces", a simulator stepped over ROS 2.
package dynamics

import "github.com/tcs-robotics/tcs/dynamics/sensor"

// World is a simulated world that the coordinator steps.
//
// Implementations must not allocate in Step, SetCommand or Observe: they are
// called from the dispatch loop.
type World interface {
	// Bodies is the number of controllable bodies; robot j of a scenario
	// controls body j.
	Bodies() int
	// CommandLen and ObservationLen give the length of body b's command and
	// observation vectors.
	CommandLen(b int) int
	ObservationLen(b int) int
	// SetCommand sets body b's actuator command; it holds until replaced.
	// Extra values are ignored, missing values are zero.
	SetCommand(b int, cmd []float64)
	// Step advances the world by h nanoseconds (0 < h ≤ the model's step;
	// the coordinator makes partial steps to apply commands at their exact
	// instant).
	Step(h int64)
	// Observe copies body b's observation into dst and returns the number of
	// values written.
	Observe(b int, dst []float64) int
	// Now is the world's virtual time.
	Now() int64
}

// Resetter is implemented by a World whose bodies can be put back in their
// initial state while its time goes on (simulation_interfaces'
// ResetSimulation, SCOPE_STATE). Commands are kept.
type Resetter interface {
	Reset()
}

// ResetAsker is implemented by a Resetter that can say it cannot reset (a
// world served by another process says so in its hello).
type ResetAsker interface {
	CanReset() bool
}

// CanReset reports whether w can put its bodies back: it is a Resetter
// and, when it is also a ResetAsker, it says it can.
func CanReset(w World) bool {
	if _, ok := w.(Resetter); !ok {
		return false
	}
	if c, ok := w.(ResetAsker); ok {
		return c.CanReset()
	}
	return true
}

// Process is implemented by a World that runs in a process of its own,
// whose steps the coordinator waits for (it counts only its own CPU in
// them as its cost): Pid is that process's id when tcs started it, else
// 0. The driver keeps a process it started off the simulation CPU.
type Process interface {
	Pid() int
}

// Failer is implemented by a World that can fail while it steps (a physics
// engine whose state became unstable): Err is nil until then, and the
// first failure from then on; a failed world keeps its time going but no
// longer moves. The coordinator ends the run with it.
type Failer interface {
	Err() error
}

// Closer is implemented by a World that holds resources outside Go's heap
// (a physics engine's model); the coordinator closes it after the run.
type Closer interface {
	Close()
}

// Close closes w when it is a Closer. A world made only to be asked
// something (its joints, whether it resets) is closed with it at once.
func Close(w World) {
	if c, ok := w.(Closer); ok {
		c.Close()
	}
}

// JointNamer is implemented by a World whose observation is more than one
// joint's position and velocity: body b's observation is
// [positions..., velocities...] of the joints JointNames(b) names. The ROS
// bridge publishes it as a sensor_msgs/JointState with these names.
type JointNamer interface {
	JointNames(b int) []string
}

// JointNames names body b's joints in w, a world of the named model: its
// JointNames when it has them, else the one joint "<model>_joint".
func JointNames(w World, model string, b int) []string {
	if jn, ok := w.(JointNamer); ok {
		return jn.JointNames(b)
	}
	return []string{model + "_joint"}
}

// SplitState splits an observation [positions..., velocities...] of n
// joints into its positions and velocities; either is nil when obs is too
// short for it. It does not allocate.
func SplitState(obs []float64, n int) (pos, vel []float64) {
	if len(obs) >= n {
		pos = obs[:n]
	}
	if len(obs) >= 2*n {
		vel = obs[n : 2*n]
	}
	return pos, vel
}

// Sensorer is implemented by a World whose observation carries sensor
// values after its joints' positions and velocities.
type Sensorer interface {
	// SensorGroups lists body b's sensors as a bridge publishes them;
	// the slice is shared.
	SensorGroups(b int) []sensor.Sensor
}

// Sensors lists body b's sensors in w: none unless w is a Sensorer.
func Sensors(w World, b int) []sensor.Sensor {
	if s, ok := w.(Sensorer); ok {
		return s.SensorGroups(b)
	}
	return nil
}
