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
//     own, and report each with [Policy.Woke];
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
package coordinator
