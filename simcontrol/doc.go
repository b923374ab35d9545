// Package simcontrol carries requests to pause, play, step, reset or end a
// run from the services that receive them (simulation_interfaces over ROS 2,
// std_srvs under /tcs over ROS 1) to the driver's dispatch loop, and the
// loop's answers back.
//
// The services run in their own goroutines (a DDS listener, a TCPROS
// connection); the dispatch loop owns the policy and alone changes the
// run's state. A Controller is the channel between them: a service calls
// [Controller.Do] and waits for the answer; the loop takes requests with
// [Controller.Requests] and answers each with [Request.Answer] once it has
// taken effect (a step request: once the world has made its steps and every
// client is consistent with it).
//
// The loop also hands the run's live figures ([Status]) to the bridges,
// which publish them on /tcs/status.
//
// The values of [State] and [Code] are those of simulation_interfaces
// (msg/SimulationState, msg/Result, srv/SetSimulationState), so a ROS 2
// service copies them into its reply as they are.
//
// This package holds no policy: what a request does to virtual time is
// decided by coordinator.Policy (SetLimit) and performed by the driver. It
// must not import the driver or a bridge.
package simcontrol
