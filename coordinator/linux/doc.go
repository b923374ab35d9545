// Package linux holds every raw system call tcs makes: scheduling policy and
// CPU affinity per thread, process CPU clocks, timerfd, epoll, eventfd,
// pipes, pidfds, memfd, futexes, PR_SET_PDEATHSIG, /proc readers, the
// per-CPU lock file, the credentials and limits a client starts with, the
// run's cgroups (a cpuset and a cgroup v2 to kill) and the block
// detector's spin loop (Spin), the one place that steps outside Go's
// scheduler (through the runtime's entersyscallblock).
//
// Errors name the system call (an *os.SyscallError, or a wrapped error whose
// text starts with the call's name) and calls that can be interrupted are
// retried on EINTR. The functions the dispatch loop calls on every dispatch
// (SetPriority, ClockNs, MonotonicNs, Epoll.Wait, Timer.ArmAt, ReadU64,
// WriteU64, TaskDir.Count) use raw system calls on preallocated memory and do
// not allocate; their error paths do.
//
// Pure parsers (ParseStat, ParseCPUList) take literal text and are tested on
// it; the readers around them are thin.
package linux
