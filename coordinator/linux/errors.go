package linux

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNoRT is returned (wrapped) when this process may not use SCHED_FIFO at
// the priority it needs.
var ErrNoRT = errors.New("SCHED_FIFO not permitted")

// ErrOneCPU is returned (wrapped) when fewer than two CPUs are online, so no
// CPU can be dedicated to the simulation.
var ErrOneCPU = errors.New("fewer than 2 online CPUs")

// ErrCPUBusy is returned (wrapped) when another process holds the lock of a
// simulation CPU.
var ErrCPUBusy = errors.New("simulation CPU is locked by another process")

// sysErr turns a raw errno into an error naming the system call; nil when
// errno is 0.
func sysErr(name string, errno unix.Errno) error {
	if errno == 0 {
		return nil
	}
	return os.NewSyscallError(name, errno)
}

// retryEINTR calls fn until it does not fail with EINTR.
func retryEINTR(fn func() error) error {
	for {
		err := fn()
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
