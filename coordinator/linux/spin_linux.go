package linux

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The runtime's own entry to and exit from a blocking system call. They are
// exported for this use by the runtime (go.dev/issue/67401).
//
//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// SpinWords are the words of shared memory a block detector's loop reads
// and writes (see Spin). The memory must not be Go's heap.
type SpinWords struct {
	Gen  *uint64 // bumped by the coordinator before each wait
	Ack  *uint64 // the last generation reported
	Park *uint32 // 0 spin, 1 parked (futex wait), 2 quit
	// Hold: for generation HoldGen, report only once the CPU clock
	// HoldClk has passed HoldCPU (ns).
	HoldGen *uint64
	HoldClk *uint32
	HoldCPU *uint64
}

// Spin is a block detector's loop, run on the calling thread, which must be
// locked to its goroutine and is meant to run at a real-time priority just
// below the dispatched client's on the simulation CPU, so that it runs
// exactly when that client has blocked. It spins reading w.Gen; when the
// generation differs from the last one it saw it stores it in w.Ack and
// writes 8 bytes to the eventfd efd. While w.Park is 1 it sleeps on it; it
// returns 0 when w.Park is 2, or the errno of a failed write or wait.
//
// While it spins the goroutine is in a blocking system call as far as Go's
// runtime is concerned (entersyscallblock, as the runtime does around any
// blocking call): it holds no P, so sysmon never preempts it and a
// garbage collector's stop never waits for it, and it runs only nosplit
// code and raw system calls on memory outside Go's heap. All signals are
// blocked on the thread first: they go to the process's other threads.
//
//go:nosplit
func Spin(w *SpinWords, efd int) unix.Errno {
	var all [2]uint32
	all[0], all[1] = ^uint32(0), ^uint32(0)
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, uintptr(unsafe.Pointer(&all[0])), 0, 8, 0, 0); e != 0 {
		return e
	}
	entersyscallblock()
	e := spin(w, efd)
	exitsyscall()
	return e
}

// spin is Spin's loop (see there). It and all it calls are nosplit: a
// stack check would find the goroutine in a system call and abort.
//
//go:nosplit
func spin(w *SpinWords, efd int) unix.Errno {
	one := uint64(1)
	last := atomic.LoadUint64(w.Gen)
	var ts unix.Timespec
	for {
		if g := atomic.LoadUint64(w.Gen); g != last {
			if atomic.LoadUint64(w.HoldGen) == g {
				// Holding: report once the client has run since.
				clk := int32(atomic.LoadUint32(w.HoldClk))
				_, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(clk), uintptr(unsafe.Pointer(&ts)), 0)
				if e == 0 && ts.Sec*1e9+ts.Nsec <= int64(atomic.LoadUint64(w.HoldCPU)) {
					continue
				}
			}
			last = g
			atomic.StoreUint64(w.Ack, g)
			for {
				_, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(efd), uintptr(unsafe.Pointer(&one)), 8)
				if e == 0 {
					break
				}
				if e != unix.EINTR && e != unix.EAGAIN {
					return e
				}
			}
		}
		if p := atomic.LoadUint32(w.Park); p != 0 {
			if p == 2 {
				return 0
			}
			_, _, e := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w.Park)), futexWait, uintptr(p), 0, 0, 0)
			if e != 0 && e != unix.EAGAIN && e != unix.EINTR {
				return e
			}
		}
	}
}
