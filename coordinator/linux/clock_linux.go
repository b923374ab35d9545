package linux

import (
	"unsafe" // also for go:linkname

	"golang.org/x/sys/unix"
)

// ProcessCPUClock returns the clock id of process pid's CPU clock:
// MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) = ((^pid) << 3) | 2.
func ProcessCPUClock(pid int) int32 { return int32((^pid)<<3 | 2) }

// ThreadCPUClock returns the clock id of thread tid's CPU clock, readable
// from any thread of its process: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)
// = ((^tid) << 3) | 6.
func ThreadCPUClock(tid int) int32 { return int32((^tid)<<3 | 6) }

// Clock reads one clock into preallocated memory.
type Clock struct{ ts unix.Timespec }

// Ns reads clock id clk (clock_gettime) in nanoseconds. It does not
// allocate on success.
func (c *Clock) Ns(clk int32) (int64, error) {
	_, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(clk), uintptr(unsafe.Pointer(&c.ts)), 0)
	if e != 0 {
		return 0, sysErr("clock_gettime", e)
	}
	return c.ts.Sec*1e9 + c.ts.Nsec, nil
}

// Monotonic reads CLOCK_MONOTONIC in nanoseconds (the timerfd's clock)
// through the vDSO, as the runtime does.
func (c *Clock) Monotonic() int64 { return nanotime() }

// MonotonicNs reads CLOCK_MONOTONIC in nanoseconds through the vDSO.
func MonotonicNs() int64 { return nanotime() }

// nanotime is the runtime's CLOCK_MONOTONIC reader (vDSO, no system call);
// the runtime keeps this linkname for outside users (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Nap sleeps the calling thread for ns nanoseconds (nanosleep), which is
// precise to tens of µs, where a Go timer may wait a whole millisecond more
// (the runtime's poller sleeps in milliseconds). It is a raw system call:
// the goroutine keeps its P meanwhile and the runtime does not see a
// system call (its sysmon thread otherwise woke far more often). An
// interrupted nap just ends early.
func Nap(ns int64) {
	ts := unix.NsecToTimespec(ns)
	unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
