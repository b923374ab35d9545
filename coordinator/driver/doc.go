// Package driver runs a scenario on Linux: it performs what the scheduling
// policy (package coordinator) decides, with real processes at real
// SCHED_FIFO priorities on one simulation CPU, and reports what it sees.
//
// It decides nothing about time. Every rule about what is charged, when a
// period counts as activated, missed or lost, and when the run ends is the
// policy's; the driver turns the policy's actions into system calls and
// its observations (a client's CPU clock, why a dispatch ended, how late
// the coordinator took the CPU back, exits, messages) into the policy's
// events. The policy is owned by one goroutine, the dispatch goroutine,
// locked to the dispatch thread.
//
// # Parts
//
//   - Run (run.go) prepares a run (the policy, the world, the bridge),
//     starts the clients, runs the dispatch loop (loop, dispatch, charge)
//     and writes the summary and recording. ros.go holds the ROS start-up
//     (nodes start ungated until connected and quiet), relays, actuation
//     and /diagnostics; record.go the recording; trace.go the per-slice
//     trace of the experiments.
//   - Mechanism (mechanism.go) owns the Linux objects of the simulation
//     CPU: the levels (ℓ0 = base the dispatch thread, ℓ1 the dispatched
//     client, ℓ2 the block detector, ℓ3 every waiting client), the wait set
//     (epoll: the timer, the detector's eventfd, the bridge, native
//     clients' pipes, child exits through pidfds), the park and waker that
//     keep Go's scheduler passes off the clients' slices, and the thread
//     lists of every client. Spawn (spawn.go) starts a client through a
//     trampoline (tcs __spawn) that reports the thread that will exec and
//     blocks; Spawn gates that one thread at ℓ3 on the simulation CPU from
//     outside and lets it go, so the exec runs at the client's first
//     dispatch. The detector (detector.go) is a
//     thread of tcs at ℓ2, outside Go's scheduler while it spins: it runs
//     exactly when the dispatched client blocked. A Go ROS client's
//     runtime monitor thread (sysmon.go) waits at ℓ3 whatever its client's
//     level, but in its turns.
//   - The watchdog (watchdog.go), a thread at SCHED_FIFO 99 on the other
//     CPUs, ends a run whose virtual time stands still.
//
// # Rules that keep a run alive
//
//   - A client is never preempted or lowered inside its exec
//     (Mechanism.Run waits for nothing but the exec's end or the client's
//     exit): lowered there it holds its exec locks, and the dispatch thread
//     reading its /proc files sleeps on them.
//   - Nothing of a client changes its own scheduling before its exec: the
//     trampoline is a Go program, and its runtime's threads, moved to ℓ3
//     by the trampoline itself, ran at real-time priority on the other
//     CPUs between their policy and affinity changes, or held a runtime
//     lock behind the spinning detector (64 clients on a loaded machine
//     stalled at t = 0 that way).
//   - No file is written from the dispatch thread while clients are alive
//     and it sits at ℓ0 on the simulation CPU: the clients end
//     (Mechanism.Close) before the recording and summary are flushed.
//   - Nothing the loop calls waits on another goroutine, and the loop does
//     not allocate (garbage collection would stop the dispatch thread).
//   - A run takes the simulation CPU's lock; every priority is dropped and
//     every child ended on every way out (Close, PR_SET_PDEATHSIG).
//
// Raw system calls live in coordinator/linux, not here.
package driver
