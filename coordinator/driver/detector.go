package driver

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// The block detector.
//
// It is a separate process (`tcs __detector`) pinned to the simulation CPU
// at ℓ2, so it gets the CPU exactly when no ℓ0 (coordinator) or ℓ1
// (dispatched client) thread is runnable, i.e. when the dispatched client
// blocked. It *spins*: a tight loop reading a generation counter in shared
// memory; when the counter differs from the last one it saw it stores the
// generation as its acknowledgement and writes 8 bytes to an eventfd in the
// coordinator's epoll set. Because it keeps spinning after that, waiting
// clients at ℓ3 never run while the coordinator waits for something else
// (the bridge, a Poll): leakage is 0 by construction. The price is that the
// simulation CPU is always 100 % busy while the detector is not parked. A
// blocking detector (read a pipe the coordinator writes before each wait)
// costs one more write per dispatch and lets waiting clients run whenever
// the coordinator waits on something other than the dispatched client, so
// it is not offered.
//
// Shared memory layout (one page, memfd passed as fd 3; the eventfd is
// fd 4):
const (
	shmGen   = 0   // uint64: generation, bumped by the coordinator before each wait
	shmAck   = 64  // uint64: last generation the detector reported
	shmPark  = 128 // uint32: 0 spin, 1 parked (futex wait), 2 quit
	shmReady = 192 // uint32: 1 once the detector is pinned and spinning
	// Hold (see Mechanism.Hold): for generation shmHoldGen the detector
	// reports only once the CPU clock shmHoldClk has passed shmHoldCPU, i.e.
	// once the client has run again and blocked again.
	shmHoldGen = 256 // uint64
	shmHoldClk = 320 // int32: a process CPU clock id
	shmHoldCPU = 384 // int64: ns
	shmSize    = 4096
)

type detector struct {
	shm   *linux.Shm
	gen   *uint64
	ack   *uint64
	park  *uint32
	ready *uint32
	// hold words (see Mechanism.Hold)
	holdGen *uint64
	holdClk *uint32
	holdCPU *uint64
	efd     int
	pidfd   int
	cmd     *exec.Cmd
	// runtime reads the spinning (main) thread's CPU time.
	runtime *linux.RuntimeFile
}

func (m *Mechanism) startDetector() (d *detector, err error) {
	d = &detector{efd: -1, pidfd: -1}
	defer func() {
		if err != nil {
			d.stop()
		}
	}()
	if d.shm, err = linux.NewShm("tcs-detector", shmSize); err != nil {
		return nil, err
	}
	d.gen, d.ack = d.shm.Word64(shmGen), d.shm.Word64(shmAck)
	d.park, d.ready = d.shm.Word(shmPark), d.shm.Word(shmReady)
	d.holdGen, d.holdClk, d.holdCPU = d.shm.Word64(shmHoldGen), d.shm.Word(shmHoldClk), d.shm.Word64(shmHoldCPU)
	if d.efd, err = linux.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, err
	}
	shmF, err := dupFile(d.shm.Fd, "detector-shm")
	if err != nil {
		return nil, err
	}
	defer shmF.Close()
	efdF, err := dupFile(d.efd, "detector-eventfd")
	if err != nil {
		return nil, err
	}
	defer efdF.Close()
	cmd := exec.Command(m.conf.SelfExe, "__detector",
		"--cpu", strconv.Itoa(m.conf.CPU), "--prio", strconv.Itoa(m.conf.Base-2),
		"--others", cpuList(m.others))
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
	cmd.ExtraFiles = []*os.File{shmF, efdF}
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true, Pdeathsig: unix.SIGKILL}
	if m.conf.DetectorLog != "" {
		f, err := os.OpenFile(m.conf.DetectorLog, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("detector log: %w", err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := m.start(cmd); err != nil {
		return nil, fmt.Errorf("exec %s __detector: %w", m.conf.SelfExe, err)
	}
	d.cmd = cmd
	if d.pidfd, err = linux.PidfdOpen(cmd.Process.Pid); err != nil {
		return nil, err
	}
	// The detector runs on the simulation CPU only when this thread sleeps.
	deadline := time.Now().Add(5 * time.Second)
	for atomic.LoadUint32(d.ready) == 0 {
		if _, done, _ := linux.WaitPidfd(d.pidfd, false); done {
			return nil, errors.New("detector exited during start-up (see its log)")
		}
		if time.Now().After(deadline) {
			return nil, errors.New("detector not ready after 5 s")
		}
		time.Sleep(200 * time.Microsecond)
	}
	if d.runtime, err = linux.OpenRuntime(cmd.Process.Pid, cmd.Process.Pid); err != nil {
		return nil, err
	}
	if err := m.ep.Add(d.efd, tagDetector); err != nil {
		return nil, err
	}
	if err := m.ep.Add(d.pidfd, tagDetectorExit); err != nil {
		return nil, err
	}
	return d, nil
}

// hold is the hold part of the detector's shared memory.
type hold struct {
	gen *uint64
	clk *uint32
	cpu *uint64
}

// stop ends the detector process and frees its resources.
func (d *detector) stop() error {
	var err error
	if d.park != nil {
		_ = linux.StoreWake(d.park, 2)
	}
	if d.pidfd >= 0 {
		_ = linux.PidfdSignal(d.pidfd, unix.SIGKILL)
		if _, _, e := linux.WaitPidfd(d.pidfd, true); e != nil {
			err = fmt.Errorf("stop detector: %w", e)
		}
		unix.Close(d.pidfd)
		d.pidfd = -1
	}
	if d.cmd != nil && d.cmd.Process != nil {
		d.cmd.Process.Release()
	}
	if d.efd >= 0 {
		unix.Close(d.efd)
		d.efd = -1
	}
	d.runtime.Close()
	d.runtime = nil
	if d.shm != nil {
		d.shm.Close()
		d.shm, d.gen, d.ack, d.park, d.ready = nil, nil, nil, nil, nil
	}
	return err
}

// dupFile wraps a duplicate of fd in an *os.File, for ExtraFiles.
func dupFile(fd int, name string) (*os.File, error) {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(nfd), name), nil
}

func cpuList(cpus []int) string {
	s := ""
	for i, c := range cpus {
		if i > 0 {
			s += ","
		}
		s += strconv.Itoa(c)
	}
	return s
}

// DetectorMain is `tcs __detector --cpu N --prio P --others LIST`: the
// block detector process. fd 3 is the shared memory, fd 4 the eventfd. It
// should run with GODEBUG=asyncpreemptoff=1 (the Mechanism sets it) and
// never returns while it is not told to quit.
func DetectorMain(args []string) int {
	runtime.LockOSThread()
	fs := flag.NewFlagSet("__detector", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cpu := fs.Int("cpu", -1, "simulation CPU")
	prio := fs.Int("prio", 0, "SCHED_FIFO priority")
	others := fs.String("others", "", "CPUs for the runtime's other threads")
	if err := fs.Parse(args); err != nil || *cpu < 0 || *prio <= 0 {
		fmt.Fprintln(os.Stderr, "tcs __detector: usage: --cpu N --prio P --others LIST (started by the coordinator)")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "tcs __detector: %v\n", err)
		return 1
	}
	// No garbage collection, ever: a forced GC would need to stop this
	// goroutine, which does not reach a safe point while spinning.
	debug.SetGCPercent(-1)
	otherCPUs, err := linux.ParseCPUList(*others)
	if err != nil || len(otherCPUs) == 0 {
		return fail(fmt.Errorf("--others %q: want the non-simulation CPUs", *others))
	}
	mem, err := linux.MapShared(3, shmSize)
	if err != nil {
		return fail(err)
	}
	shm := &linux.Shm{Fd: 3, Mem: mem}
	self := unix.Gettid()
	if tids, err := linux.Tasks(os.Getpid()); err == nil {
		for _, tid := range tids {
			if tid != self {
				_ = linux.SetAffinity(tid, otherCPUs...)
			}
		}
	}
	if err := linux.SetPdeathsig(unix.SIGKILL); err != nil {
		return fail(err)
	}
	if err := linux.SetFIFO(0, *prio); err != nil {
		return fail(err)
	}
	if err := linux.SetAffinity(0, *cpu); err != nil {
		return fail(err)
	}
	atomic.StoreUint32(shm.Word(shmReady), 1)
	h := hold{gen: shm.Word64(shmHoldGen), clk: shm.Word(shmHoldClk), cpu: shm.Word64(shmHoldCPU)}
	if err := spin(shm.Word64(shmGen), shm.Word64(shmAck), shm.Word(shmPark), &h, 4); err != nil {
		return fail(err)
	}
	return 0
}

// spin is the detector's loop; it returns when told to quit. It is nosplit
// and calls only nosplit code (unix.RawSyscall) while spinning, so the
// runtime's cooperative preemption (requested by sysmon after 10 ms) never
// takes the goroutine off its thread there: a preempted locked goroutine
// sleeps until another thread hands it back, and meanwhile waiting clients
// would run.
//
//go:nosplit
func spin(gen, ack *uint64, park *uint32, h *hold, efd int) error {
	one := uint64(1)
	last := atomic.LoadUint64(gen)
	var ts unix.Timespec
	for {
		if g := atomic.LoadUint64(gen); g != last {
			if atomic.LoadUint64(h.gen) == g {
				// Holding: report once the client has run since.
				clk := int32(atomic.LoadUint32(h.clk))
				_, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(clk), uintptr(unsafe.Pointer(&ts)), 0)
				if e == 0 && ts.Sec*1e9+ts.Nsec <= int64(atomic.LoadUint64(h.cpu)) {
					continue
				}
			}
			last = g
			atomic.StoreUint64(ack, g)
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
		if p := atomic.LoadUint32(park); p != 0 {
			if p == 2 {
				return nil
			}
			if err := linux.FutexWait(park, p, 0); err != nil {
				return err
			}
		}
	}
}
