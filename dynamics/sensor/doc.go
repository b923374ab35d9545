// Package sensor says what a world's sensor values are as ROS messages:
// which values of a body's observation make an IMU, a wrench, a range or
// a contact force, under which name and frame. Worlds (dynamics/mujoco)
// describe their sensors with it; the ROS bridges and the recorder publish
// them.
//
// It must not depend on a world or a transport: it is the vocabulary both
// sides share, with no I/O.
package sensor
