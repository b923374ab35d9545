package linux

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Timer is a one-shot CLOCK_MONOTONIC timerfd (non-blocking, close-on-exec).
type Timer struct {
	fd   int
	spec unix.ItimerSpec
	buf  [8]byte
}

// NewTimer creates the timerfd.
func NewTimer() (*Timer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	return &Timer{fd: fd}, nil
}

// Fd returns the timerfd, for an epoll set.
func (t *Timer) Fd() int { return t.fd }

// ArmAt arms the timer to expire once at CLOCK_MONOTONIC time abs (ns).
// Re-arming resets the expiration count. It does not allocate.
func (t *Timer) ArmAt(abs int64) error {
	t.spec.Value.Sec = abs / 1e9
	t.spec.Value.Nsec = abs % 1e9
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(t.fd), unix.TFD_TIMER_ABSTIME, uintptr(unsafe.Pointer(&t.spec)), 0, 0, 0)
	return sysErr("timerfd_settime", e)
}

// Disarm stops the timer.
func (t *Timer) Disarm() error {
	t.spec.Value.Sec, t.spec.Value.Nsec = 0, 0
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(t.fd), 0, uintptr(unsafe.Pointer(&t.spec)), 0, 0, 0)
	return sysErr("timerfd_settime", e)
}

// Expirations reads and clears the expiration count (0 when none).
func (t *Timer) Expirations() (uint64, error) {
	v, ok, err := ReadU64(t.fd, &t.buf)
	if !ok {
		return 0, err
	}
	return v, nil
}

// Close closes the timerfd.
func (t *Timer) Close() error { return closeFd("timerfd", &t.fd) }

func closeFd(what string, fd *int) error {
	if *fd < 0 {
		return nil
	}
	err := unix.Close(*fd)
	*fd = -1
	if err != nil {
		return fmt.Errorf("close %s: %w", what, err)
	}
	return nil
}

// ReadU64 reads 8 bytes (an eventfd or timerfd counter, a pipe record) from
// a non-blocking fd into buf. ok is false when nothing was there (EAGAIN).
// It retries on EINTR and does not allocate.
func ReadU64(fd int, buf *[8]byte) (v uint64, ok bool, err error) {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 8)
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN:
			return 0, false, nil
		case e != 0:
			return 0, false, sysErr("read", e)
		case n != 8:
			return 0, false, fmt.Errorf("read: %d bytes, want 8", n)
		}
		return *(*uint64)(unsafe.Pointer(&buf[0])), true, nil
	}
}

// WriteU64 writes 8 bytes holding v to fd. It retries on EINTR and does not
// allocate.
func WriteU64(fd int, buf *[8]byte, v uint64) error {
	*(*uint64)(unsafe.Pointer(&buf[0])) = v
	for {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 8)
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			return sysErr("write", e)
		case n != 8:
			return fmt.Errorf("write: %d bytes, want 8", n)
		}
		return nil
	}
}

// Eventfd creates an eventfd (flags: unix.EFD_*).
func Eventfd(initval uint, flags int) (int, error) {
	fd, err := unix.Eventfd(initval, flags)
	if err != nil {
		return -1, os.NewSyscallError("eventfd2", err)
	}
	return fd, nil
}

// Pipe2 creates a pipe (flags: unix.O_CLOEXEC, unix.O_NONBLOCK, ...);
// p[0] is the read end.
func Pipe2(flags int) (p [2]int, err error) {
	if err := unix.Pipe2(p[:], flags); err != nil {
		return p, os.NewSyscallError("pipe2", err)
	}
	return p, nil
}

// Epoll is an epoll set with a preallocated event buffer. Each fd is
// registered with a 64-bit tag that Wait reports back.
type Epoll struct {
	fd     int
	events [EpollBatch]unix.EpollEvent
}

// EpollBatch is how many ready events one Wait returns at most; the others
// stay ready for the next.
const EpollBatch = 32

// NewEpoll creates an epoll set.
func NewEpoll() (*Epoll, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	return &Epoll{fd: fd}, nil
}

// Add registers fd for readability (level-triggered) under tag.
func (ep *Epoll) Add(fd int, tag uint64) error { return ep.add(fd, tag, unix.EPOLLIN) }

// AddEdge registers fd for readability, edge-triggered, under tag: Wait
// reports it once each time something new arrives (for a listening
// socket: each connection), not for as long as it stays readable.
func (ep *Epoll) AddEdge(fd int, tag uint64) error {
	return ep.add(fd, tag, unix.EPOLLIN|unix.EPOLLET)
}

// AddHangup registers stream socket fd under tag for its peer's hang-up
// only (EPOLLRDHUP, and the reset or error the kernel always reports), not
// for data: Wait reports it, for as long as it stays registered, once the
// peer has closed its end.
func (ep *Epoll) AddHangup(fd int, tag uint64) error { return ep.add(fd, tag, unix.EPOLLRDHUP) }

func (ep *Epoll) add(fd int, tag uint64, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(uint32(tag)), Pad: int32(uint32(tag >> 32))}
	if err := unix.EpollCtl(ep.fd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Del removes fd from the set.
func (ep *Epoll) Del(fd int) error {
	if err := unix.EpollCtl(ep.fd, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Wait blocks in epoll_wait for at most timeoutMs (-1: forever, 0: just
// look) and returns how many events are ready; Tag(i) names them. It
// returns 0, nil on EINTR (the caller loops). It does not allocate.
//
// It is a raw system call: Go's runtime does not see it, so returning from
// it never waits for the runtime (a garbage collector's stop, a retaken
// P), which would let the dispatched client run past its slice. The
// goroutine keeps its P meanwhile; GOMAXPROCS leaves others for the rest.
func (ep *Epoll) Wait(timeoutMs int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(ep.fd), uintptr(unsafe.Pointer(&ep.events[0])), uintptr(len(ep.events)), uintptr(timeoutMs), 0, 0)
	if e == unix.EINTR {
		return 0, nil
	}
	if e != 0 {
		return 0, sysErr("epoll_wait", e)
	}
	return int(n), nil
}

// WaitCPU is Wait followed at once by reading the CPU clock clk into ts,
// with no preemption point in between: after a wake the Go runtime may take
// the calling goroutine off its thread at the next function call (for tens
// of µs, milliseconds when the other CPUs are busy), and a dispatched client
// would run meanwhile; reading its clock first keeps that time out of its
// slice. It reports EINTR as n = 0, and a clock that could not be read
// (the process is gone) as ts.Sec = -1.
//
//go:nosplit
func (ep *Epoll) WaitCPU(timeoutMs int, clk int32, ts *unix.Timespec) (n int, errno unix.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(ep.fd), uintptr(unsafe.Pointer(&ep.events[0])), uintptr(len(ep.events)), uintptr(timeoutMs), 0, 0)
	if _, _, ce := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(clk), uintptr(unsafe.Pointer(ts)), 0); ce != 0 {
		ts.Sec, ts.Nsec = -1, 0
	}
	if e == unix.EINTR {
		return 0, 0
	}
	return int(r), e
}

// Tag returns the tag of the i-th ready event of the last Wait.
func (ep *Epoll) Tag(i int) uint64 {
	ev := &ep.events[i]
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// Fd returns the epoll fd.
func (ep *Epoll) Fd() int { return ep.fd }

// Close closes the epoll set.
func (ep *Epoll) Close() error { return closeFd("epoll", &ep.fd) }

// PidfdExited reports whether the process of pidfd has exited (its pidfd
// is readable), without waiting.
func PidfdExited(pidfd int) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// PidfdOpen opens a pidfd for process pid (pidfd_open), close-on-exec.
func PidfdOpen(pid int) (int, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, os.NewSyscallError("pidfd_open", err)
	}
	unix.CloseOnExec(fd)
	return fd, nil
}

// Readable reports whether fd is readable now (for a listening socket: a
// connection waits to be accepted), without waiting.
func Readable(fd int) bool {
	pfd := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd[:], 0)
	return err == nil && n > 0 && pfd[0].Revents&unix.POLLIN != 0
}

// PollIn waits up to timeoutMs (-1: forever) until one of fds is readable
// (or at its end, or in error) and reports which are.
func PollIn(fds []int, timeoutMs int, ready []bool) error {
	var pfds [4]unix.PollFd
	if len(fds) > len(pfds) || len(ready) < len(fds) {
		return fmt.Errorf("poll: %d fds, at most %d", len(fds), len(pfds))
	}
	for i, fd := range fds {
		pfds[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	_, err := unix.Poll(pfds[:len(fds)], timeoutMs)
	if err != nil && err != unix.EINTR {
		return os.NewSyscallError("poll", err)
	}
	for i := range fds {
		ready[i] = err == nil && pfds[i].Revents != 0
	}
	return nil
}

// WaitPidfd reaps the process behind pidfd (waitid(P_PIDFD, WEXITED)) and
// returns its exit code, or 128+signal when a signal ended it. With block
// false it returns done=false when the process has not exited yet.
func WaitPidfd(pidfd int, block bool) (code int, done bool, err error) {
	opts := unix.WEXITED
	if !block {
		opts |= unix.WNOHANG
	}
	return waitPidfd(pidfd, opts)
}

// ExitPidfd waits for the process behind pidfd to exit and returns its
// exit code as WaitPidfd does, but leaves it a zombie (WNOWAIT) for a
// later Reap.
func ExitPidfd(pidfd int) (code int, err error) {
	code, _, err = waitPidfd(pidfd, unix.WEXITED|unix.WNOWAIT)
	return code, err
}

// Reap reaps the exited child pid (waitid(P_PID, WEXITED)).
func Reap(pid int) error {
	var info unix.Siginfo
	if err := retryEINTR(func() error { return unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED, nil) }); err != nil {
		return os.NewSyscallError("waitid", err)
	}
	return nil
}

func waitPidfd(pidfd, opts int) (code int, done bool, err error) {
	var info unix.Siginfo
	err = retryEINTR(func() error { return unix.Waitid(unix.P_PIDFD, pidfd, &info, opts, nil) })
	if err != nil {
		return 0, false, os.NewSyscallError("waitid", err)
	}
	// siginfo_t: si_signo int32 @0, si_errno @4, si_code @8, pad @12,
	// si_pid @16, si_uid @20, si_status @24.
	raw := (*[32]byte)(unsafe.Pointer(&info))
	pid := *(*int32)(unsafe.Pointer(&raw[16]))
	if pid == 0 {
		return 0, false, nil
	}
	sicode := *(*int32)(unsafe.Pointer(&raw[8]))
	status := int(*(*int32)(unsafe.Pointer(&raw[24])))
	const cldExited = 1
	if sicode == cldExited {
		return status, true, nil
	}
	return 128 + status, true, nil
}

// PidfdSignal sends sig to the process behind pidfd (pidfd_send_signal).
func PidfdSignal(pidfd int, sig unix.Signal) error {
	if err := unix.PidfdSendSignal(pidfd, sig, nil, 0); err != nil {
		return os.NewSyscallError("pidfd_send_signal", err)
	}
	return nil
}

// Kill sends sig to process pid.
func Kill(pid int, sig unix.Signal) error {
	if err := unix.Kill(pid, sig); err != nil {
		return os.NewSyscallError("kill", err)
	}
	return nil
}

// KillGroup sends sig to process group pgid.
func KillGroup(pgid int, sig unix.Signal) error {
	if err := unix.Kill(-pgid, sig); err != nil {
		return os.NewSyscallError("kill", err)
	}
	return nil
}

// Shm is a shared memory region backed by a memfd.
type Shm struct {
	Fd  int
	Mem []byte
}

// NewShm creates a memfd of size bytes (memfd_create, ftruncate) and maps it
// shared read-write. The fd is close-on-exec; pass it explicitly to a child.
func NewShm(name string, size int) (*Shm, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("ftruncate", err)
	}
	mem, err := MapShared(fd, size)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Shm{Fd: fd, Mem: mem}, nil
}

// MapShared maps size bytes of fd shared read-write (mmap).
func MapShared(fd, size int) ([]byte, error) {
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return mem, nil
}

// Close unmaps and closes the region.
func (s *Shm) Close() error {
	var err error
	if s.Mem != nil {
		if e := unix.Munmap(s.Mem); e != nil {
			err = os.NewSyscallError("munmap", e)
		}
		s.Mem = nil
	}
	if e := closeFd("memfd", &s.Fd); e != nil && err == nil {
		err = e
	}
	return err
}

// Word returns a pointer to the aligned 32-bit word at byte offset off.
func (s *Shm) Word(off int) *uint32 { return (*uint32)(unsafe.Pointer(&s.Mem[off])) }

// Word64 returns a pointer to the aligned 64-bit word at byte offset off.
func (s *Shm) Word64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&s.Mem[off])) }

// SetPdeathsig asks the kernel to send sig to the calling thread's process
// when the thread that created it exits (prctl PR_SET_PDEATHSIG).
func SetPdeathsig(sig unix.Signal) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(sig), 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl", err)
	}
	return nil
}

// FutexWait sleeps while *addr == val, at most timeout (<= 0: no limit). It
// returns nil when woken, when *addr != val, on timeout and on EINTR; the
// caller re-checks its condition. addr may be in memory shared between
// processes.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) error {
	var tsp unsafe.Pointer
	var ts unix.Timespec
	if timeout > 0 {
		ts = unix.NsecToTimespec(int64(timeout))
		tsp = unsafe.Pointer(&ts)
	}
	_, _, e := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val), uintptr(tsp), 0, 0)
	switch e {
	case 0, unix.EAGAIN, unix.EINTR, unix.ETIMEDOUT:
		return nil
	}
	return sysErr("futex", e)
}

// FutexWake wakes up to n waiters on addr.
func FutexWake(addr *uint32, n int) error {
	_, _, e := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(n), 0, 0, 0)
	return sysErr("futex", e)
}

// StoreWake stores v in the shared word and wakes its waiters.
func StoreWake(addr *uint32, v uint32) error {
	atomic.StoreUint32(addr, v)
	return FutexWake(addr, 1<<30)
}

// futex(2) operations (linux/futex.h).
const (
	futexWait = 0
	futexWake = 1
)

// Watch blocks until something in the set ep is ready or the CLOCK_MONOTONIC
// instant until (ns) has come, without taking the events: it polls the
// set's own fd, which leaves every event, level- or edge-triggered, for
// ep's own Wait. It reports whether something was ready; an instant
// already past only looks. It may be called from another thread while
// ep's owner is not waiting in it. It returns early (not ready) on EINTR.
// Like Nap it is a raw system call, unseen by the runtime.
func (ep *Epoll) Watch(until int64) (bool, error) {
	pfd := [1]unix.PollFd{{Fd: int32(ep.fd), Events: unix.POLLIN}}
	d := until - nanotime()
	if d < 0 {
		d = 0
	}
	ts := unix.NsecToTimespec(d)
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 && e != unix.EINTR {
		return false, sysErr("ppoll", e)
	}
	return e == 0 && n > 0, nil
}
