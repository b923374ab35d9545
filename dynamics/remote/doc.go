// Package remote is a tcs world that runs in another process, stepped
// through the native world protocol: a simulator without ROS (or tcs's own
// worlds, `tcs world MODEL`) serves it on a Unix socket, tcs steps it. The
// scenario selects it with
//
//	dynamics:
//	  model: remote
//	  step: 1ms
//	  params: {cmd: [tcs, world, pendulum]}   # tcs starts the world process
//	  # or params: {socket: /run/sim.sock}   # a simulator already serving
//
// World is the tcs side (a dynamics.World); Serve is the simulator side,
// for worlds written in Go; the protocol below is small enough to serve
// from C or Python.
//
// # Protocol (version 1)
//
// One SOCK_SEQPACKET connection; every message is one packet, its first
// byte the operation, then little-endian fields (i64, u32, u16, f64 IEEE
// 754; a string is u16 length then bytes). tcs sends:
//
//	'H' u32 version, u32 bodies, i64 step_ns     hello: the first message
//	'C' u16 body, u16 n, n × f64                 a command, from now on
//	'S' i64 h_ns                                 advance by h (0 < h ≤ step)
//	'R'                                          reset the bodies' state
//	'Q'                                          quit (then tcs closes)
//
// The world answers 'H', 'S' and 'R' (never 'C' or 'Q'):
//
//	'h' u32 version, u32 bodies, u32 flags (bit 0: can reset), per body:
//	    u16 command_len, u16 joints, joints × string (names), u16 sensors,
//	    sensors × (string name, string frame, u8 kind, 3 × i32 offsets),
//	    then an observation block
//	's' i64 now_ns, then an observation block       after 'S' and 'R'
//	'e' string                                      the world failed
//
// An observation block is, per body, u16 n then n × f64: body b's
// observation [positions..., velocities...] of its joints (and any sensor
// values after them) at the world's time now. A sensor is a group of those
// values a ROS bridge publishes as one message (package dynamics/sensor:
// kind 1 IMU, 2 wrench, 3 range, 4 touch; each offset is where a part of
// the kind starts in the observation, −1 for a part the sensor lacks). A command takes effect at the
// instant it arrives: tcs sends it between two steps, exactly when the
// coordinator applies it, and splits a step there (h < step). A world
// that cannot reset says so in its hello (tcs then never asks) and answers
// 'R' with 'e'. After 'e' tcs ends the run with the message
// (dynamics.Failer).
//
// # What it must not do
//
// The World does not allocate in Step, SetCommand or Observe (they run in
// the coordinator's dispatch loop) and never reads a clock but to bound
// how long it waits for an answer. It starts the world process from a
// fresh goroutine, so that the process inherits an ordinary thread's
// scheduling (SCHED_OTHER, off the simulation CPU), never the dispatch
// thread's.
package remote
