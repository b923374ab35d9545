package native

// Every raw syscall of this package is in this file (memfd, mmap, pipes,
// read/write/poll on raw fds), to be routed through coordinator/linux once it
// offers them. Each retries on EINTR and names the syscall in its error.

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// createShm makes an anonymous shared memory file of ShmSize bytes and maps
// it read-write; the fd is close-on-exec.
func createShm() (fd int, mem []byte, err error) {
	fd, err = unix.MemfdCreate("tcs-native", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, nil, fmt.Errorf("memfd_create: %w", err)
	}
	if err := retry(func() error { return unix.Ftruncate(fd, int64(ShmSize)) }); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("ftruncate memfd to %d: %w", ShmSize, err)
	}
	mem, err = mapShm(fd)
	if err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, mem, nil
}

// mapShm maps the first ShmSize bytes of fd read-write, shared; the file
// must be at least that large.
func mapShm(fd int) ([]byte, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return nil, fmt.Errorf("fstat fd %d: %w", fd, err)
	}
	if st.Size < int64(ShmSize) {
		return nil, fmt.Errorf("shared memory fd %d holds %d bytes, want at least %d", fd, st.Size, ShmSize)
	}
	mem, err := unix.Mmap(fd, 0, ShmSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap fd %d: %w", fd, err)
	}
	return mem, nil
}

func unmapShm(mem []byte) error {
	if mem == nil {
		return nil
	}
	if err := unix.Munmap(mem); err != nil {
		return fmt.Errorf("munmap: %w", err)
	}
	return nil
}

// shmAt views a mapping as the Shm it holds.
func shmAt(mem []byte) *Shm { return (*Shm)(unsafe.Pointer(&mem[0])) }

// pipe returns a close-on-exec pipe (read end, write end).
func pipe() (r, w int, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return -1, -1, fmt.Errorf("pipe2: %w", err)
	}
	return p[0], p[1], nil
}

func setNonblock(fd int) error {
	if err := unix.SetNonblock(fd, true); err != nil {
		return fmt.Errorf("fcntl O_NONBLOCK fd %d: %w", fd, err)
	}
	return nil
}

func closeFd(fd int) error {
	if fd < 0 {
		return nil
	}
	if err := unix.Close(fd); err != nil {
		return fmt.Errorf("close fd %d: %w", fd, err)
	}
	return nil
}

// readFd is read(2) retried on EINTR; it does not allocate (the common
// errnos are preallocated by x/sys/unix).
func readFd(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// writeFd is write(2) retried on EINTR.
func writeFd(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Write(fd, b)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// isAgain reports EAGAIN/EWOULDBLOCK.
func isAgain(err error) bool { return err == unix.EAGAIN }

func isBrokenPipe(err error) bool { return errors.Is(err, unix.EPIPE) }

// pollIn waits up to timeoutMs (< 0: forever) for fd to be readable (or
// hung up); EINTR counts as a spurious wake-up.
func pollIn(fd int, timeoutMs int) (bool, error) {
	fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds[:], timeoutMs)
	if err == unix.EINTR {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("poll fd %d: %w", fd, err)
	}
	return n > 0, nil
}

func retry(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// processCPU is the calling process's CPU clock (CLOCK_PROCESS_CPUTIME_ID,
// ns): the clock the coordinator reads for the client from outside. ok is
// false if it cannot be read.
func processCPU() (ns int64, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
