// Package coordinator is the scheduling policy of tcs: a pure, deterministic
// state machine that keeps a simulated world and the clients that control it
// temporally consistent (DESIGN.md §2, paper 000 §3).
//
// The policy performs no I/O and reads no clock. A driver (coordinator/driver
// on Linux; the tests here use fake processes and a fake CPU) asks it what to
// do next with [Policy.Next] and performs the [Action] it returns:
//
//   - Dispatch: let a client run for at most a CPU budget, then report what
//     happened with [Policy.Ran] (preempted by the timer, blocked, or sent a
//     native request);
//   - Step: advance the world to a virtual instant;
//   - Apply: apply an actuator command that has become due;
//   - Release: wake a native client that waited for an activation or for a
//     sensor sample;
//   - Probe: look whether blocked plain clients have become runnable on their
//     own, and report each with [Policy.Woke] (a process a client started is
//     reported when it is seen, with [Policy.Started]);
//   - Wait (free mode only): let the clients run until a wall-clock instant;
//   - Finish: the run is over.
//
// Time inside the policy is int64 nanoseconds of virtual time; the only wall
// time it sees is the one the driver passes to Next in free mode.
//
// # Model
//
// The world has time T. Clients are grouped into robots; a robot is one
// virtual CPU with clock R, advanced by the CPU its clients use (times their
// cpu_scale). A runnable client's progress is its robot's R; a blocked client's
// progress is max(p, T), where p is its progress when it blocked. The policy
// keeps T ≤ R for every robot with a runnable client and R ≤ T + quantum for
// every robot it dispatches (DESIGN §2, "Consistency"), so no command arrives
// in the world's past and no client reads the world's future.
//
// Each robot also has a real clock RR, advanced by the CPU its clients use
// times their configured cpu_scale whatever the mode; the drift Δ is computed
// on these real clocks, which is why lockstep's Δ grows while consistent
// mode's stays within a quantum.
//
// # What is charged
//
// The driver reports each dispatch as a [Slice]: the CPU the client's
// process clock shows, why it stopped, whether the timer fired and how late
// the coordinator took the CPU back. The policy alone decides what of it is
// charged ([Policy.Split], [Policy.Ran]): a slice whose timer came more than
// Conf.LateCap late while the client's clock ran past its end lost CPU to
// the host (a hypervisor holding the vCPU; the guest charges that time to
// the running task); the part beyond the armed end + LateCap is the host's,
// not charged, and the robot's misses are the host's until one of its
// activations begins on time again. The same holds for CPU a client used
// while the coordinator was away after ending its slice (Slice.Away).
//
// # Periods
//
// Every activation instant k·P of a periodic client before the world's time
// (up to and including the end instant, once the run has completed: the
// world waits at its end for what is due there) is exactly one of: an
// activation that began (when the client was dispatched with it, DESIGN
// §6), or a lost period with its cause ([Lost]):
// before its first activation (its start-up), after it exited or stopped
// listening to its clock, during its own overrun, or while its robot had
// lost CPU to the host. Activations + lost = periods, exactly
// ([ClientStats]); a deadline miss is an activation not finished by its
// next instant, so it is one of the activations.
//
// # Ends
//
// An exit ends the run unless Conf.ContinueOnExit. A ROS node whose clock
// release reached no subscriber ([Policy.ClockLost]) is shutting down: the
// release is not an activation, the node is no longer periodic, and it
// counts as an exit for ending the run; with ContinueOnExit it runs on in its
// robot's spare time. In lockstep a best-effort client computes at most a
// quantum per world step: the world never waits for a whole plan.
//
// # Scripts
//
// testdata/*.txt are scripted runs of the policy (events in, actions and
// accounting out), read by script_test.go; go test -run TestScripts
// -rewrite writes the policy's current answers into them.
package coordinator
