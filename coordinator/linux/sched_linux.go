package linux

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Scheduling policies, as sched_setscheduler(2) numbers them.
const (
	SchedOther = 0
	SchedFIFO  = 1
	SchedRR    = 2
)

// schedParam is struct sched_param.
type schedParam struct{ prio int32 }

// SetFIFO sets thread tid (0: the calling thread) to SCHED_FIFO at prio.
func SetFIFO(tid, prio int) error { return setScheduler(tid, SchedFIFO, prio) }

// SetOther returns thread tid (0: the calling thread) to SCHED_OTHER.
func SetOther(tid int) error { return setScheduler(tid, SchedOther, 0) }

// setScheduler is sched_setscheduler(tid, policy, {prio}).
func setScheduler(tid, policy, prio int) error {
	p := schedParam{int32(prio)}
	_, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(policy), uintptr(unsafe.Pointer(&p)))
	return sysErr("sched_setscheduler", e)
}

// Prio is a preallocated sched_param for SetPriority.
type Prio struct{ p schedParam }

// SetPriority changes the real-time priority of thread tid within its
// policy (sched_setparam). It does not allocate on success.
func (pp *Prio) SetPriority(tid, prio int) error {
	pp.p.prio = int32(prio)
	_, _, e := unix.RawSyscall(unix.SYS_SCHED_SETPARAM, uintptr(tid), uintptr(unsafe.Pointer(&pp.p)), 0)
	if e != 0 {
		return sysErr("sched_setparam", e)
	}
	return nil
}

// Policy returns the scheduling policy and real-time priority of thread tid.
func Policy(tid int) (policy, prio int, err error) {
	r, _, e := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if e != 0 {
		return 0, 0, sysErr("sched_getscheduler", e)
	}
	var p schedParam
	_, _, e = unix.RawSyscall(unix.SYS_SCHED_GETPARAM, uintptr(tid), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return 0, 0, sysErr("sched_getparam", e)
	}
	return int(r), int(p.prio), nil
}

// SetAffinity restricts thread tid (0: the calling thread) to cpus.
func SetAffinity(tid int, cpus ...int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(tid, &set); err != nil {
		return os.NewSyscallError("sched_setaffinity", err)
	}
	return nil
}

// Affinity returns the CPUs thread tid (0: the calling thread) may run on.
func Affinity(tid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return nil, os.NewSyscallError("sched_getaffinity", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// CheckFIFO reports whether this process may put a thread at SCHED_FIFO
// priority prio. It tries it on a short-lived locked thread and puts the
// thread back; the error (wrapping ErrNoRT) says what is missing.
func CheckFIFO(prio int) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := SetFIFO(0, prio)
		if err == nil {
			err = SetOther(0)
			if err == nil {
				runtime.UnlockOSThread()
			} // else: the thread exits with the goroutine, still locked
		}
		done <- err
	}()
	err := <-done
	if err == nil {
		return nil
	}
	var rl unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_RTPRIO, &rl)
	return fmt.Errorf("%w at priority %d (%v): this process needs CAP_SYS_NICE (run as root, or setcap cap_sys_nice+ep on the tcs binary) or RLIMIT_RTPRIO >= %d (now %d; see `ulimit -r` and /etc/security/limits.conf)",
		ErrNoRT, prio, err, prio, rl.Cur)
}

// OnlineCPUs returns the online CPUs (/sys/devices/system/cpu/online).
func OnlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("read online CPUs: %w", err)
	}
	return ParseCPUList(string(b))
}

// RequireCPUs checks that at least two CPUs are online and that cpu is one
// of them. The error wraps ErrOneCPU when there is only one.
func RequireCPUs(cpu int) error {
	cpus, err := OnlineCPUs()
	if err != nil {
		return err
	}
	if len(cpus) < 2 {
		return fmt.Errorf("%w (online: %v): tcs dedicates one CPU to the simulation and needs another for everything else", ErrOneCPU, cpus)
	}
	for _, c := range cpus {
		if c == cpu {
			return nil
		}
	}
	return fmt.Errorf("simulation CPU %d is not online (online: %v)", cpu, cpus)
}

// ParseCPUList parses the kernel's CPU list format ("0-3,5,7-8\n").
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("parse CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = atoi(hi); err != nil {
				return nil, fmt.Errorf("parse CPU list %q: %w", s, err)
			}
		}
		if b < a {
			return nil, fmt.Errorf("parse CPU list %q: range %q decreases", s, part)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func atoi(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty number")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad number %q", s)
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			return 0, fmt.Errorf("number %q too large", s)
		}
	}
	return n, nil
}

// Gettid returns the calling thread's id.
func Gettid() int { return unix.Gettid() }
