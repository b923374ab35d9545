// Package mujoco is a tcs world (dynamics.World) made of a MuJoCo model:
// an MJCF file loaded into MuJoCo 2.2.2 (Debian's libmujoco-dev) through
// cgo, stepped by the coordinator like the built-in pendulum. The scenario
// selects it with
//
//	dynamics:
//	  model: mujoco
//	  step: 1ms        # a whole multiple of the model's <option timestep>
//	  params: {mjcf: dynamics/mujoco/models/arm.xml}
//
// It is behind the build tag mujoco, so that the default build stays free
// of C libraries:
//
//	apt-get install libmujoco-dev
//	go build -tags mujoco ./cmd/tcs
//
// Without the tag the package holds only this documentation and
// dynamics.New refuses the model with dynamics.ErrNotBuilt.
//
// # Robots
//
// The whole model is one body, body 0, controlled by the scenario's only
// robot; a scenario with more robots is refused (ErrConf). A scenario's
// robot is an onboard computer, and MJCF says nothing about which joints
// and actuators a computer drives: the natural unit is the whole model, as
// ros2_control's one controller manager per robot sees all of the robot's
// joints in one joint_states and drives all of its actuators. Several
// robots in one model would need a convention to split it (a name prefix
// per robot, say); none is guessed.
//
// # Observation: joints
//
// The observation is [positions..., velocities...] of the model's hinge
// and slide joints, in model order, named by JointNames (the MJCF name, or
// joint<id> for an unnamed joint): what a sensor_msgs/JointState carries.
// Free and ball joints are left out: their positions are quaternions, not
// one number per name, and a free joint is a base's pose, which ROS
// carries as odometry or a transform, not as a joint. A model measures
// them with sensors (framepos, framequat, ballquat; see below).
//
// # Commands: actuators
//
// A command is one value per actuator, in actuator order (mjData.ctrl):
// Actuators lists them with the joint each drives and what its control
// means (effort, position, velocity). This is the layout a
// std_msgs/Float64MultiArray on <controller>/commands carries for
// ros2_control's forward command controllers: data[i] is actuator i's
// control, for a controller whose joints are listed in actuator order and
// whose interface matches the actuators' kind. Missing and non-finite
// values are 0; MuJoCo clamps a control to its ctrlrange when the actuator
// is ctrllimited.
//
// # Sensors
//
// Sensors lists the model's MuJoCo sensors by name and type with the
// object each is attached to, and ReadSensor copies one's values: the
// accelerometer, gyro and framequat of one site make an IMU, force and
// torque on one site a wrench, rangefinder a range, touch a contact force.
// MuJoCo evaluates sensors inside a step from the state before it, so the
// first read after a Step evaluates the model at the current state
// (mj_forward) once; this changes no trajectory.
//
// # Time
//
// Step(h) advances by exactly h ns: whole steps of the model's timestep,
// then, for a remainder r (a command applied between two steps, DESIGN
// §2's partial step), one MuJoCo step with the timestep set to r and
// restored after. Whole steps are MuJoCo's own mj_step, bit for bit.
// mjData.time is set from the world's integer time after each Step.
//
// # What it must not do
//
// Like every world it never reads a clock: its only time is the virtual
// time Step is given. Step, SetCommand, Observe and ReadSensor do not
// allocate (they run in the coordinator's dispatch loop); they make one cgo
// call at most. It never prints and never writes MuJoCo's log file:
// MuJoCo's warnings are counted (Warnings). It never exits the process:
// a MuJoCo error inside a step is caught (its default handler would exit),
// freezes the physics and is reported by Err; a missing or invalid MJCF
// file is an error of New that names the file and carries MuJoCo's
// message.
package mujoco
