package linux

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file tells a process that will wake by itself very soon (a thread in
// a timed sleep) from one that waits for input or for a long time. It reads
// /proc/PID/task/TID/syscall, which names the system call a blocked thread
// is in and its six argument registers, and, where the timeout is in the
// thread's memory, reads it with process_vm_readv.
//
// The system call numbers below are x86_64's
// (arch/x86/entry/syscalls/syscall_64.tbl); the argument layouts are the
// kernel's generic ones. NewSleepScanner and Scan refuse other
// architectures with ErrSleepArch. A 32-bit (ia32 or x32) process would
// report other numbers: tcs runs 64-bit ROS nodes only.

// x86_64 numbers of the system calls whose timeout SleepScanner reads.
const (
	nrPoll           = 7   // poll(fds, nfds, timeout_ms)
	nrSelect         = 23  // select(n, in, out, ex, struct timeval *timeout)
	nrNanosleep      = 35  // nanosleep(req, rem)
	nrRtSigtimedwait = 128 // rt_sigtimedwait(set, info, timeout, sigsetsize)
	nrFutex          = 202 // futex(uaddr, op, val, timeout, uaddr2, val3)
	nrClockNanosleep = 230 // clock_nanosleep(clockid, flags, req, rem)
	nrEpollWait      = 232 // epoll_wait(epfd, events, maxevents, timeout_ms)
	nrPselect6       = 270 // pselect6(n, in, out, ex, struct timespec *timeout, sig)
	nrPpoll          = 271 // ppoll(fds, nfds, struct timespec *timeout, sigmask, size)
	nrEpollPwait     = 281 // epoll_pwait(epfd, events, maxevents, timeout_ms, sigmask, size)
	nrEpollPwait2    = 441 // epoll_pwait2(epfd, events, maxevents, struct timespec *timeout, sigmask, size)
	nrFutexWaitv     = 449 // futex_waitv(waiters, nr, flags, struct timespec *timeout, clockid)
)

// futex(2) commands and flags (linux/futex.h) that carry a timeout.
const (
	futexCmdWait          = 0
	futexCmdLockPI        = 6
	futexCmdWaitBitset    = 9
	futexCmdWaitRequeuePI = 11
	futexCmdLockPI2       = 13
	futexCmdMask          = 127 // op & 127: the command without FUTEX_PRIVATE_FLAG (128), FUTEX_CLOCK_REALTIME (256)
	futexClockRealtime    = 256
)

// Clock ids (linux/time.h) a timed sleep may be on.
const (
	clockRealtime      = 0
	clockMonotonic     = 1
	clockBoottime      = 7
	clockRealtimeAlarm = 8
	clockBoottimeAlarm = 9
	clockTAI           = 11
)

const timerAbstime = 1 // clock_nanosleep's TIMER_ABSTIME flag

// ErrSleepArch is returned (wrapped) by NewSleepScanner and Scan on an
// architecture whose system call numbers SleepScanner does not know.
var ErrSleepArch = errors.New("sleep scan supports x86_64 system call numbers only")

// ThreadSyscall is one line of /proc/PID/task/TID/syscall: what a thread is
// doing, as the kernel saw it while the thread was off the CPU.
type ThreadSyscall struct {
	// Running is true for "running": the thread is on a CPU or runnable
	// (or it changed state while the kernel sampled it).
	Running bool
	// Nr is the system call the thread is blocked in, or -1 when it is
	// blocked outside one (stopped, or a zombie).
	Nr     int
	Args   [6]uint64 // argument registers; valid when Nr >= 0
	SP, PC uint64
}

// ParseSyscall parses the text of /proc/PID/task/TID/syscall:
// "running", "-1 SP PC" or "NR ARG0 ... ARG5 SP PC" (NR in decimal, the
// rest in 0x-prefixed hex). It does not allocate on success.
func ParseSyscall(b []byte) (ThreadSyscall, error) {
	var sc ThreadSyscall
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	if string(b) == "running" {
		sc.Running = true
		return sc, nil
	}
	nr, rest, ok := cutDecimal(b)
	if !ok {
		return sc, fmt.Errorf("parse syscall line %q: system call number", clip(b))
	}
	sc.Nr = nr
	var vals [8]uint64
	want := 8 // six arguments, SP, PC
	if nr < 0 {
		want = 2 // SP, PC
	}
	for i := 0; i < want; i++ {
		if len(rest) == 0 || rest[0] != ' ' {
			return sc, fmt.Errorf("parse syscall line %q: %d values after the number, want %d", clip(b), i, want)
		}
		v, r, ok := cutHex(rest[1:])
		if !ok {
			return sc, fmt.Errorf("parse syscall line %q: value %d is not 0x-prefixed hex", clip(b), i+1)
		}
		vals[i], rest = v, r
	}
	if len(rest) != 0 {
		return sc, fmt.Errorf("parse syscall line %q: trailing text", clip(b))
	}
	if nr < 0 {
		sc.SP, sc.PC = vals[0], vals[1]
		return sc, nil
	}
	copy(sc.Args[:], vals[:6])
	sc.SP, sc.PC = vals[6], vals[7]
	return sc, nil
}

// GoSysmonSleep reports whether the thread sleeps as the Go runtime's
// sysmon thread does, and no other thread of a Go program: a raw nanosleep
// with no remainder pointer (its usleep, 20 µs to 10 ms), or a
// FUTEX_WAIT with a timeout (its deep sleep, notetsleep; the runtime's
// idle threads wait without one). glibc's sleeps use clock_nanosleep, its
// timed waits FUTEX_WAIT_BITSET.
func (sc ThreadSyscall) GoSysmonSleep() bool {
	if sc.Running {
		return false
	}
	switch sc.Nr {
	case nrNanosleep:
		return sc.Args[1] == 0
	case nrFutex:
		return sc.Args[1]&futexCmdMask == futexCmdWait && sc.Args[3] != 0
	}
	return false
}

// cutDecimal parses an optionally negative decimal number at the start of b.
func cutDecimal(b []byte) (n int, rest []byte, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n > 1<<30 {
			return 0, nil, false
		}
		n = n*10 + int(b[i]-'0')
	}
	if i == 0 {
		return 0, nil, false
	}
	if neg {
		n = -n
	}
	return n, b[i:], true
}

// cutHex parses a 0x-prefixed hex number of at most 16 digits at the start
// of b.
func cutHex(b []byte) (v uint64, rest []byte, ok bool) {
	if len(b) < 3 || b[0] != '0' || b[1] != 'x' {
		return 0, nil, false
	}
	i := 2
	for ; i < len(b); i++ {
		c := b[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			goto done
		}
		if i-2 == 16 {
			return 0, nil, false
		}
		v = v<<4 | uint64(d)
	}
done:
	if i == 2 {
		return 0, nil, false
	}
	return v, b[i:], true
}

// timeoutKind says where a blocked system call keeps its timeout.
type timeoutKind uint8

const (
	untimed     timeoutKind = iota // no timeout, or not a sleep this file knows
	relNs                          // relative, in a register (ns)
	relTimespec                    // relative, a struct timespec at addr
	relTimeval                     // relative, a struct timeval at addr
	absTimespec                    // a deadline on clock, a struct timespec at addr
)

// sleepTimeout is where the timeout of a blocked system call is.
type sleepTimeout struct {
	kind  timeoutKind
	clock int32  // absTimespec: the deadline's clock
	addr  uint64 // *Timespec, relTimeval: the address in the thread's memory
	ns    int64  // relNs
}

// timeoutOf finds the timeout of the system call sc is blocked in (x86_64
// numbering). It is pure: it reads no memory.
func timeoutOf(sc *ThreadSyscall) sleepTimeout {
	if sc.Running || sc.Nr < 0 {
		return sleepTimeout{}
	}
	a := &sc.Args
	switch sc.Nr {
	case nrNanosleep:
		return relTimespecAt(a[0])
	case nrClockNanosleep:
		clock, ok := wallClock(int32(uint32(a[0])))
		if !ok {
			return sleepTimeout{} // a CPU-time clock: not a sleep in wall time
		}
		if uint32(a[1])&timerAbstime != 0 {
			return absTimespecAt(a[2], clock)
		}
		return relTimespecAt(a[2])
	case nrFutex:
		op := uint32(a[1])
		clock := int32(clockMonotonic)
		if op&futexClockRealtime != 0 {
			clock = clockRealtime
		}
		switch op & futexCmdMask {
		case futexCmdWait:
			return relTimespecAt(a[3])
		case futexCmdWaitBitset, futexCmdWaitRequeuePI, futexCmdLockPI2:
			return absTimespecAt(a[3], clock)
		case futexCmdLockPI:
			return absTimespecAt(a[3], clockRealtime)
		}
	case nrFutexWaitv:
		if clock, ok := wallClock(int32(uint32(a[4]))); ok {
			return absTimespecAt(a[3], clock)
		}
	case nrPoll:
		return relMs(a[2])
	case nrEpollWait, nrEpollPwait:
		return relMs(a[3])
	case nrSelect:
		if a[4] != 0 {
			return sleepTimeout{kind: relTimeval, addr: a[4]}
		}
	case nrPselect6:
		return relTimespecAt(a[4])
	case nrPpoll, nrRtSigtimedwait:
		return relTimespecAt(a[2])
	case nrEpollPwait2:
		return relTimespecAt(a[3])
	}
	return sleepTimeout{}
}

func relTimespecAt(addr uint64) sleepTimeout {
	if addr == 0 {
		return sleepTimeout{}
	}
	return sleepTimeout{kind: relTimespec, addr: addr}
}

func absTimespecAt(addr uint64, clock int32) sleepTimeout {
	if addr == 0 {
		return sleepTimeout{}
	}
	return sleepTimeout{kind: absTimespec, addr: addr, clock: clock}
}

// relMs reads an int timeout in ms from a register (negative: none).
func relMs(reg uint64) sleepTimeout {
	ms := int32(uint32(reg))
	if ms < 0 {
		return sleepTimeout{}
	}
	return sleepTimeout{kind: relNs, ns: int64(ms) * 1e6}
}

// wallClock maps a sleep's clock id to the clock to read for it; ok is
// false for CPU-time clocks (a sleep on them ends when CPU is used, not in
// wall time) and unknown ids.
func wallClock(id int32) (int32, bool) {
	switch id {
	case clockRealtime, clockRealtimeAlarm:
		return clockRealtime, true
	case clockMonotonic:
		return clockMonotonic, true
	case clockBoottime, clockBoottimeAlarm:
		return clockBoottime, true
	case clockTAI:
		return clockTAI, true
	}
	return 0, false
}

// SleepScan is what SleepScanner.Scan found in the threads of a process.
// Threads = Running + Timed + Blocked.
type SleepScan struct {
	Threads int // threads read (those that vanished meanwhile are not counted)
	Running int // on a CPU or runnable: not blocked at all
	Timed   int // blocked in a timed sleep of the list in SleepScanner's doc
	// Host threads are in an uninterruptible sleep (state D) outside such a
	// sleep: a page fault or disk I/O, a kernel lock. They wait on the
	// host, not on input, and resume by themselves.
	Host int
	// Blocked threads wait without a timeout, in a system call that is not
	// such a sleep, or outside a system call (stopped, a zombie).
	Blocked int

	// Shortest is the shortest remaining time (ns, >= 0) of the Timed
	// threads' sleeps, ShortestTid and ShortestNr the thread and its system
	// call; all 0 when Timed is 0. ShortestExact is true when Shortest is a
	// deadline minus the clock's time now, false when it is a relative
	// sleep's whole request (an upper bound: part of it may have passed).
	Shortest      int64
	ShortestTid   int
	ShortestNr    int
	ShortestExact bool
}

// SleepScanner reads which threads of a process are in a timed sleep, to
// tell a process that will wake by itself soon from one that waits for
// input or a long time.
//
// Sleeps it recognises (x86_64 numbers; "rel" = the remaining time reported
// is the whole request, "abs" = deadline − now on the deadline's clock):
//
//   - nanosleep (35): rel.
//   - clock_nanosleep (230) on CLOCK_REALTIME, MONOTONIC, BOOTTIME, TAI or
//     an _ALARM clock: abs with TIMER_ABSTIME, else rel. glibc's
//     nanosleep and usleep, and so roscpp's ros_nanosleep, end here.
//     Sleeps on CPU-time clocks count as Blocked.
//   - futex (202): FUTEX_WAIT with a timeout (rel); FUTEX_WAIT_BITSET,
//     FUTEX_WAIT_REQUEUE_PI and FUTEX_LOCK_PI2 with a timeout (abs on
//     CLOCK_MONOTONIC, or CLOCK_REALTIME with FUTEX_CLOCK_REALTIME);
//     FUTEX_LOCK_PI with a timeout (abs on CLOCK_REALTIME).
//     pthread_cond_timedwait, sem_timedwait, pthread_mutex_timedlock and
//     std::condition_variable::wait_for/until end here.
//   - futex_waitv (449) with a timeout: abs on its clock argument.
//   - poll (7), epoll_wait (232), epoll_pwait (281) with a timeout >= 0
//     ms: rel.
//   - select (23, struct timeval), pselect6 (270), ppoll (271),
//     epoll_pwait2 (441), rt_sigtimedwait (128) with a non-NULL timeout:
//     rel.
//
// Not recognised (Blocked): restart_syscall (219), which a sleep
// interrupted by a signal handler or a stop continues in (its deadline is
// kept in the kernel); io_getevents, semtimedop, mq_timedreceive and other
// rarer timed waits. Deadlines are compared with this process's clocks: a
// thread in another time namespace would be misjudged.
//
// A remaining time does not include the thread's timer slack (50 µs for
// SCHED_OTHER threads by default), nor the time it then waits for a CPU.
//
// A thread whose state (/proc/PID/task/TID/stat) is D, uninterruptible (a
// page fault or disk I/O, which ends by itself), is Host; Scan reads every
// thread's state first and reads no syscall file when one is in D.
//
// The scanner keeps an open /proc/PID/task/TID/syscall file and stat file
// per thread seen (close-on-exec), and rereads
// them with pread at offset 0; Forget closes a process's files, Close all
// of them. Reading a thread's syscall
// file and memory needs ptrace access to it (PTRACE_MODE_ATTACH: root, or
// the same user and a parent when Yama's ptrace_scope is 1). A SleepScanner
// is not safe for concurrent use.
type SleepScanner struct {
	procs map[int]*sleepProc

	path   [64]byte  // "/proc/PID/task/TID/syscall\x00"
	line   [256]byte // one syscall line
	mem    [2]int64  // a struct timespec or timeval read from a thread
	local  unix.Iovec
	remote unix.RemoteIovec
	clk    Clock
	now    [4]int64 // per scan: realtime, monotonic, boottime, TAI (0: not read yet)
}

// sleepProc is what a SleepScanner keeps for one process.
type sleepProc struct {
	dir     *TaskDir      // /proc/PID/task, opened when Scan is given no tids
	tids    []int         // the listing of dir
	threads []sleepThread // sorted by tid
	scan    uint32        // count of scans, to find threads no longer listed
}

type sleepThread struct {
	tid  int
	fd   int    // open /proc/PID/task/TID/syscall, or -1
	stat int    // open /proc/PID/task/TID/stat, or -1 (opened when first needed)
	scan uint32 // the last scan that listed it
}

// NewSleepScanner returns a SleepScanner. The error wraps ErrSleepArch on
// an architecture other than x86_64 (amd64).
func NewSleepScanner() (*SleepScanner, error) {
	if err := sleepArch(); err != nil {
		return nil, err
	}
	s := &SleepScanner{procs: make(map[int]*sleepProc)}
	s.local.Base = (*byte)(unsafe.Pointer(&s.mem[0]))
	s.local.SetLen(16)
	return s, nil
}

func sleepArch() error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("%w (GOARCH=%s)", ErrSleepArch, runtime.GOARCH)
	}
	return nil
}

// Shortest returns the shortest remaining time (ns) of a timed sleep any
// thread of pid is blocked in, and ok = false when no thread is in one (a
// relative sleep counts with its whole request). tids lists the process's
// threads; nil means read /proc/PID/task. It does not say whether a thread
// is running: Scan does.
func (s *SleepScanner) Shortest(pid int, tids []int) (remaining int64, ok bool, err error) {
	r, err := s.Scan(pid, tids)
	return r.Shortest, r.Timed > 0, err
}

// Scan reads what each thread of pid is doing. tids lists the process's
// threads (the caller's own list, e.g. from TaskDir.List); nil means read
// /proc/PID/task. Threads that vanish meanwhile are skipped; when no listed
// thread could be read (the process has exited, or all tids are stale) the
// error wraps ErrGone and the scanner forgets pid.
//
// After the first call for a process, Scan does not allocate unless the
// process has more threads than it ever had; it makes one pread of each
// thread's stat file and, when none is in state D, one of each syscall file,
// plus one process_vm_readv per thread whose timeout is in memory and one
// clock read per clock a deadline is on. Both are raw system calls (the
// goroutine keeps its P). A pread usually takes a few µs, but can take up to
// a scheduler tick when a thread was preempted just as it went to sleep:
// the kernel then waits for it to be off the CPU before reading it.
func (s *SleepScanner) Scan(pid int, tids []int) (SleepScan, error) {
	var r SleepScan
	p, tids, err := s.begin(pid, tids)
	if err != nil {
		return r, err
	}
	// Threads in state D first, from their stat files: a syscall file
	// takes the process's exec lock (the kernel's lock_trace), which an
	// exec holds while it waits (for the process's other threads to die,
	// for I/O). Were that wait for something that cannot run while this
	// thread is blocked (a thread or kernel worker below the spinning
	// detector), the read would never return. A thread in D already says
	// that the process waits on the host: then no syscall file is read.
	r = s.statePass(pid, p, tids)
	if r.Host > 0 {
		r.Running = 0
		r.Blocked = r.Threads - r.Host
		p.prune()
		return r, nil
	}
	r = SleepScan{}
	for _, tid := range tids {
		th := p.thread(tid)
		if err := s.scanThread(pid, th, &r); err != nil {
			return r, fmt.Errorf("sleep scan of %d: %w", pid, err)
		}
	}
	p.prune()
	if r.Threads == 0 && len(tids) > 0 {
		s.Forget(pid)
		return r, fmt.Errorf("sleep scan of %d: %w", pid, ErrGone)
	}
	return r, nil
}

// begin starts a scan of pid's threads tids (nil: /proc/PID/task).
func (s *SleepScanner) begin(pid int, tids []int) (*sleepProc, []int, error) {
	if err := sleepArch(); err != nil {
		return nil, nil, err
	}
	p := s.procs[pid]
	if p == nil {
		p = &sleepProc{}
		s.procs[pid] = p
	}
	if tids == nil {
		var err error
		if tids, err = p.list(pid); err != nil {
			s.Forget(pid)
			if errors.Is(err, ErrGone) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
				return nil, nil, fmt.Errorf("sleep scan of %d: %w", pid, ErrGone)
			}
			return nil, nil, fmt.Errorf("sleep scan of %d: %w", pid, err)
		}
	}
	p.scan++
	s.now = [4]int64{}
	return p, tids, nil
}

// States is Scan's first pass alone: one pread of each thread's stat file,
// no syscall file. Threads in state D count as Host, runnable ones (R) as
// Running, the others as Blocked; Timed and Shortest stay 0. It is for a
// caller that needs to know only whether the process waits on the host or
// is running again: no syscall file, memory or clock is read, which is
// most of a Scan's cost. Errors as Scan's.
func (s *SleepScanner) States(pid int, tids []int) (SleepScan, error) {
	var r SleepScan
	p, tids, err := s.begin(pid, tids)
	if err != nil {
		return r, err
	}
	r = s.statePass(pid, p, tids)
	p.prune()
	if r.Threads == 0 && len(tids) > 0 {
		s.Forget(pid)
		return r, fmt.Errorf("sleep scan of %d: %w", pid, ErrGone)
	}
	return r, nil
}

// statePass reads each thread's state from its stat file: Host counts
// those in state D, Running those runnable (R), Blocked the others.
func (s *SleepScanner) statePass(pid int, p *sleepProc, tids []int) SleepScan {
	var r SleepScan
	for _, tid := range tids {
		th := p.thread(tid)
		th.scan = p.scan
		state, ok := s.state(pid, th)
		if !ok {
			continue
		}
		r.Threads++
		switch state {
		case 'D':
			r.Host++
		case 'R':
			r.Running++
		default:
			r.Blocked++
		}
	}
	return r
}

// scanThread reads one thread and counts it into r.
func (s *SleepScanner) scanThread(pid int, th *sleepThread, r *SleepScan) error {
	sc, ok, err := s.readSyscall(pid, th)
	if !ok || err != nil {
		return err
	}
	r.Threads++
	if sc.Running {
		r.Running++
		return nil
	}
	// Not in state D: Scan looked at every thread's state first. (The
	// process does not run during a scan, so no state changes meanwhile.)
	to := timeoutOf(&sc)
	if to.kind == untimed {
		r.Blocked++
		return nil
	}
	rem, exact, known, gone, err := s.remaining(th.tid, to)
	switch {
	case err != nil:
		return err
	case gone:
		r.Threads--
		return nil
	case !known:
		r.Blocked++
		return nil
	}
	r.Timed++
	if r.Timed == 1 || rem < r.Shortest {
		r.Shortest, r.ShortestTid, r.ShortestNr, r.ShortestExact = rem, th.tid, sc.Nr, exact
	}
	return nil
}

// state reads the thread's state from its stat file, kept open; ok is
// false when the file cannot be read.
func (s *SleepScanner) state(pid int, th *sleepThread) (state byte, ok bool) {
	if th.stat < 0 {
		fd, errno := s.openFile(pid, th.tid, "/stat\x00")
		if errno != 0 {
			return 0, false
		}
		th.stat = fd
	}
	n, errno := s.pread(th.stat)
	if errno != 0 {
		_ = closeFd("stat file", &th.stat)
		return 0, false
	}
	return StatState(s.line[:n]), true
}

// readSyscall reads and parses the thread's syscall file; ok is false when
// the thread has vanished. A kept file whose thread has gone (ESRCH) is
// reopened once, in case its tid now names a new thread.
func (s *SleepScanner) readSyscall(pid int, th *sleepThread) (sc ThreadSyscall, ok bool, err error) {
	for attempt := 0; attempt < 2; attempt++ {
		if th.fd < 0 {
			fd, errno := s.open(pid, th.tid)
			if errno == unix.ENOENT || errno == unix.ESRCH {
				return sc, false, nil
			}
			if errno != 0 {
				return sc, false, fmt.Errorf("open /proc/%d/task/%d/syscall: %w", pid, th.tid, sysErr("openat", errno))
			}
			th.fd = fd
		}
		n, errno := s.pread(th.fd)
		if errno == unix.ESRCH || errno == unix.ENOENT {
			_ = closeFd("syscall file", &th.fd)
			continue
		}
		if errno != 0 {
			return sc, false, fmt.Errorf("read /proc/%d/task/%d/syscall: %w", pid, th.tid, sysErr("pread64", errno))
		}
		sc, err = ParseSyscall(s.line[:n])
		if err != nil {
			return sc, false, fmt.Errorf("thread %d: %w", th.tid, err)
		}
		return sc, true, nil
	}
	return sc, false, nil
}

// open opens /proc/PID/task/TID/syscall read-only, close-on-exec.
func (s *SleepScanner) open(pid, tid int) (int, unix.Errno) {
	return s.openFile(pid, tid, "/syscall\x00")
}

// openFile opens /proc/PID/task/TID plus name (NUL-terminated) read-only,
// close-on-exec.
func (s *SleepScanner) openFile(pid, tid int, name string) (int, unix.Errno) {
	b := append(s.path[:0], "/proc/"...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, "/task/"...)
	b = strconv.AppendInt(b, int64(tid), 10)
	_ = append(b, name...) // at most 41 bytes: it stays in s.path
	dirfd := unix.AT_FDCWD
	for {
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&s.path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
		if e != unix.EINTR {
			return int(fd), e
		}
	}
}

// pread reads the whole file at offset 0 into s.line.
func (s *SleepScanner) pread(fd int) (int, unix.Errno) {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&s.line[0])), uintptr(len(s.line)), 0, 0, 0)
		if e != unix.EINTR {
			return int(n), e
		}
	}
}

// remaining finds how long the sleep to of thread tid has left. known is
// false when its timeout cannot be read (unmapped, or not a valid time:
// the thread changed it since the kernel copied it); gone is true when the
// thread has exited.
func (s *SleepScanner) remaining(tid int, to sleepTimeout) (ns int64, exact, known, gone bool, err error) {
	if to.kind == relNs {
		return to.ns, false, true, false, nil
	}
	s.remote.Base, s.remote.Len = uintptr(to.addr), 16
	n, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(tid), uintptr(unsafe.Pointer(&s.local)), 1, uintptr(unsafe.Pointer(&s.remote)), 1, 0)
	switch {
	case e == unix.ESRCH:
		return 0, false, false, true, nil
	case e == unix.EFAULT:
		return 0, false, false, false, nil
	case e != 0:
		return 0, false, false, false, fmt.Errorf("thread %d: read timeout at %#x: %w", tid, to.addr, sysErr("process_vm_readv", e))
	case n != 16:
		return 0, false, false, false, nil
	}
	sec, frac := s.mem[0], s.mem[1]
	fracMax, fracNs := int64(1e9), int64(1)
	if to.kind == relTimeval {
		fracMax, fracNs = 1e6, 1e3
	}
	if sec < 0 || frac < 0 || frac >= fracMax {
		return 0, false, false, false, nil
	}
	t := addNs(sec, frac*fracNs)
	if to.kind != absTimespec {
		return t, false, true, false, nil
	}
	now, err := s.clockNow(to.clock)
	if err != nil {
		return 0, false, false, false, err
	}
	return max(t-now, 0), true, true, false, nil
}

// addNs returns sec*1e9 + ns, saturating at math.MaxInt64.
func addNs(sec, ns int64) int64 {
	if sec > (math.MaxInt64-ns)/1e9 {
		return math.MaxInt64
	}
	return sec*1e9 + ns
}

// clockNow reads clock (one of wallClock's results) once per scan.
func (s *SleepScanner) clockNow(clock int32) (int64, error) {
	i := 0
	switch clock {
	case clockMonotonic:
		i = 1
	case clockBoottime:
		i = 2
	case clockTAI:
		i = 3
	}
	if s.now[i] != 0 {
		return s.now[i], nil
	}
	var t int64
	if clock == clockMonotonic {
		t = MonotonicNs()
	} else {
		var err error
		if t, err = s.clk.Ns(clock); err != nil {
			return 0, err
		}
	}
	s.now[i] = t
	return t, nil
}

// list reads the process's thread ids from /proc/PID/task.
func (p *sleepProc) list(pid int) ([]int, error) {
	if p.dir == nil {
		d, err := OpenTaskDir(pid)
		if err != nil {
			return nil, err
		}
		p.dir = d
	}
	var err error
	p.tids, err = p.dir.List(p.tids)
	return p.tids, err
}

// thread returns the entry of tid, adding it (with no file open) when new.
func (p *sleepProc) thread(tid int) *sleepThread {
	lo, hi := 0, len(p.threads)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.threads[m].tid < tid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(p.threads) && p.threads[lo].tid == tid {
		return &p.threads[lo]
	}
	p.threads = append(p.threads, sleepThread{})
	copy(p.threads[lo+1:], p.threads[lo:])
	p.threads[lo] = sleepThread{tid: tid, fd: -1, stat: -1}
	return &p.threads[lo]
}

// prune closes and drops the threads the last scan did not list.
func (p *sleepProc) prune() {
	kept := p.threads[:0]
	for i := range p.threads {
		th := p.threads[i]
		if th.scan != p.scan {
			_ = closeFd("syscall file", &th.fd)
			_ = closeFd("stat file", &th.stat)
			continue
		}
		kept = append(kept, th)
	}
	clear(p.threads[len(kept):])
	p.threads = kept
}

// close closes every file kept for the process.
func (p *sleepProc) close() error {
	var first error
	for i := range p.threads {
		if err := closeFd("syscall file", &p.threads[i].fd); err != nil && first == nil {
			first = err
		}
		if err := closeFd("stat file", &p.threads[i].stat); err != nil && first == nil {
			first = err
		}
	}
	p.threads = p.threads[:0]
	if p.dir != nil {
		if err := p.dir.Close(); err != nil && first == nil {
			first = err
		}
		p.dir = nil
	}
	return first
}

// Forget closes the files kept for pid (call it when the process exits).
func (s *SleepScanner) Forget(pid int) error {
	p := s.procs[pid]
	if p == nil {
		return nil
	}
	delete(s.procs, pid)
	if err := p.close(); err != nil {
		return fmt.Errorf("sleep scanner: forget %d: %w", pid, err)
	}
	return nil
}

// Close closes every file the scanner keeps.
func (s *SleepScanner) Close() error {
	var first error
	for pid := range s.procs {
		if err := s.Forget(pid); err != nil && first == nil {
			first = err
		}
	}
	return first
}
