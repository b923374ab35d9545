package driver

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// The block detector.
//
// It is a thread of tcs's own process pinned to the simulation CPU at ℓ2,
// so it gets the CPU exactly when no ℓ0 (coordinator) or ℓ1 (dispatched
// client) thread is runnable, i.e. when the dispatched client blocked. It
// *spins* (linux.Spin): a tight loop reading a generation counter; when the
// counter differs from the last one it saw it stores the generation as its
// acknowledgement and writes 8 bytes to an eventfd in the coordinator's
// epoll set. Because it keeps spinning after that, waiting clients at ℓ3
// never run while the coordinator waits for something else (the bridge, a
// Poll): leakage is 0 by construction. The price is that the simulation CPU
// is always 100 % busy while the detector is not parked. A blocking
// detector (read a pipe the coordinator writes before each wait) costs one
// more write per dispatch and lets waiting clients run whenever the
// coordinator waits on something other than the dispatched client, so it
// is not offered.
//
// A thread, not a process: the switch from the detector to the
// coordinator that its write wakes then stays inside one address space,
// which on a paravirtualised guest saves the hypervisor's part of an
// address-space switch at every block.
// While it spins, Go's runtime sees its goroutine in a blocking system
// call, so neither sysmon nor the garbage collector ever waits for it.
//
// Shared memory layout (one page, off Go's heap):
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
	words linux.SpinWords
	gen   *uint64
	ack   *uint64
	park  *uint32
	ready *uint32
	// hold words (see Mechanism.Hold)
	holdGen *uint64
	holdClk *uint32
	holdCPU *uint64
	efd     int
	// endFd is written when the detector's goroutine ends (tagDetectorExit);
	// done carries why (nil: told to quit).
	endFd int
	done  chan error
	tid   int
	clock linux.Clock
	clk   int32 // the detector thread's CPU clock
}

// startDetector starts the detector's goroutine on a thread of its own,
// pinned to the simulation CPU at ℓ2, and waits until it spins.
func (m *Mechanism) startDetector() (d *detector, err error) {
	d = &detector{efd: -1, endFd: -1}
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
	d.words = linux.SpinWords{Gen: d.gen, Ack: d.ack, Park: d.park, HoldGen: d.holdGen, HoldClk: d.holdClk, HoldCPU: d.holdCPU}
	if d.efd, err = linux.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, err
	}
	if d.endFd, err = linux.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, err
	}
	d.done = make(chan error, 1)
	started := make(chan error, 1)
	tid := make(chan int, 1)
	go d.run(m.conf.CPU, m.conf.Base-2, started, tid)
	if err := <-started; err != nil {
		return nil, fmt.Errorf("block detector: %w", err)
	}
	d.tid = <-tid
	d.clk = linux.ThreadCPUClock(d.tid)
	// It runs on the simulation CPU only when this thread sleeps.
	deadline := time.Now().Add(5 * time.Second)
	for atomic.LoadUint32(d.ready) == 0 {
		select {
		case err := <-d.done:
			d.done <- err
			return nil, fmt.Errorf("block detector ended during start-up: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return nil, errors.New("block detector not spinning after 5 s")
		}
		time.Sleep(200 * time.Microsecond)
	}
	// Edge-triggered: each report wakes the wait once and the eventfd is
	// never read (a read per block would be one more system call on every
	// dispatch); which dispatch it is for is in the shared words (ack).
	if err := m.ep.AddEdge(d.efd, tagDetector); err != nil {
		return nil, err
	}
	if err := m.ep.Add(d.endFd, tagDetectorExit); err != nil {
		return nil, err
	}
	return d, nil
}

// run is the detector's goroutine. It keeps its thread to itself (locked,
// never unlocked: the runtime ends the thread with the goroutine, so the
// thread's priority and affinity never serve another goroutine), pins it,
// raises it to prio and spins until told to quit.
func (d *detector) run(cpu, prio int, started chan<- error, tid chan<- int) {
	runtime.LockOSThread()
	tid <- unix.Gettid()
	err := linux.SetAffinity(0, cpu)
	if err == nil {
		err = linux.SetFIFO(0, prio)
	}
	started <- err
	if err != nil {
		d.done <- err
		return
	}
	atomic.StoreUint32(d.ready, 1)
	if e := linux.Spin(&d.words, d.efd); e != 0 {
		err = fmt.Errorf("block detector: %w", e)
	}
	// endFd first: stop closes it once done has been received.
	var one [8]byte
	_ = linux.WriteU64(d.endFd, &one, 1)
	d.done <- err
}

// stop ends the detector's goroutine (its thread with it) and frees its
// resources.
func (d *detector) stop() error {
	var err error
	if d.park != nil && d.done != nil {
		_ = linux.StoreWake(d.park, 2)
		select {
		case err = <-d.done:
		case <-time.After(5 * time.Second):
			// Never seen: the memory stays mapped, as the thread may
			// still read it.
			return errors.New("stop block detector: still spinning after 5 s")
		}
	}
	for _, fd := range []*int{&d.efd, &d.endFd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	if d.shm != nil {
		d.shm.Close()
		d.shm, d.gen, d.ack, d.park, d.ready = nil, nil, nil, nil, nil
	}
	return err
}
