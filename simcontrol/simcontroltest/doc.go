// Package simcontroltest is a fake dispatch loop for the tests of the
// services that speak to one through a simcontrol.Controller (the ROS 2
// simulation server, the ROS 1 control services, the CLI tests): it
// answers as the driver would on a world of 1 ms steps, with no processes
// and no time, and can be told to refuse every request. It must not be
// imported by anything but tests.
package simcontroltest
