package linux

import (
	"fmt"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TaskDir is an open /proc/PID/task directory: it counts and lists a
// process's threads without allocating.
type TaskDir struct {
	fd  int
	st  unix.Stat_t
	buf []byte
}

// OpenTaskDir opens /proc/PID/task.
func OpenTaskDir(pid int) (*TaskDir, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/task"
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &TaskDir{fd: fd, buf: make([]byte, 8192)}, nil
}

// Count returns the number of threads of the process. It is one fstat(2):
// procfs reports the task directory's link count as 2 + threads.
func (d *TaskDir) Count() (int, error) {
	_, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(d.fd), uintptr(unsafe.Pointer(&d.st)), 0)
	if e != 0 {
		return 0, sysErr("fstat", e)
	}
	n := int(d.st.Nlink) - 2
	if n <= 0 {
		return 0, ErrGone
	}
	return n, nil
}

// List appends the process's thread ids to dst[:0] and returns it; it does
// not allocate when dst has room.
func (d *TaskDir) List(dst []int) ([]int, error) {
	dst = dst[:0]
	if _, _, e := unix.RawSyscall(unix.SYS_LSEEK, uintptr(d.fd), 0, 0); e != 0 {
		return dst, sysErr("lseek", e)
	}
	for {
		n, _, e := unix.Syscall(unix.SYS_GETDENTS64, uintptr(d.fd), uintptr(unsafe.Pointer(&d.buf[0])), uintptr(len(d.buf)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return dst, sysErr("getdents64", e)
		}
		if n == 0 {
			break
		}
		b := d.buf[:n]
		for len(b) >= 19 {
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			tid, ok := 0, false
			for _, c := range name {
				if c == 0 {
					break
				}
				if c < '0' || c > '9' {
					ok = false
					tid = -1
					break
				}
				tid = tid*10 + int(c-'0')
				ok = true
			}
			if ok && tid > 0 {
				dst = append(dst, tid)
			}
			b = b[reclen:]
		}
	}
	if len(dst) == 0 {
		return dst, ErrGone
	}
	return dst, nil
}

// Close closes the directory.
func (d *TaskDir) Close() error {
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	if err != nil {
		return fmt.Errorf("close task dir: %w", err)
	}
	return nil
}

// RuntimeFile is an open /proc/PID/task/TID/schedstat: it reads a thread's
// CPU time, the thread of another process included, without allocating
// and without a path lookup (a pread at offset 0 regenerates the line).
type RuntimeFile struct {
	fd  int
	buf [96]byte
}

// OpenRuntime opens the schedstat file of thread tid of process pid.
func OpenRuntime(pid, tid int) (*RuntimeFile, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/schedstat"
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &RuntimeFile{fd: fd}, nil
}

// Ns returns the CPU time (ns) the thread has used; ErrGone once it has
// exited.
func (f *RuntimeFile) Ns() (int64, error) {
	for {
		n, _, e := unix.Syscall6(unix.SYS_PREAD64, uintptr(f.fd), uintptr(unsafe.Pointer(&f.buf[0])), uintptr(len(f.buf)), 0, 0, 0)
		switch e {
		case 0:
			return ParseSchedstat(f.buf[:n])
		case unix.EINTR:
			continue
		case unix.ESRCH:
			return 0, ErrGone
		default:
			return 0, sysErr("read schedstat", e)
		}
	}
}

// Close closes the file.
func (f *RuntimeFile) Close() error {
	if f == nil || f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

// StateFile is an open /proc/PID/task/TID/stat: it reads a thread's state
// letter (R running or runnable, S sleeping, ...) without allocating and
// without a path lookup.
type StateFile struct {
	fd  int
	buf [64]byte // the line's start: pid, (comm) of at most 16 bytes, state
}

// OpenState opens the stat file of thread tid of process pid.
func OpenState(pid, tid int) (*StateFile, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/stat"
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &StateFile{fd: fd}, nil
}

// State returns the thread's state letter; ErrGone once it has exited.
func (f *StateFile) State() (byte, error) {
	for {
		n, _, e := unix.Syscall6(unix.SYS_PREAD64, uintptr(f.fd), uintptr(unsafe.Pointer(&f.buf[0])), uintptr(len(f.buf)), 0, 0, 0)
		switch e {
		case 0:
			if st := StatState(f.buf[:n]); st != 0 {
				return st, nil
			}
			return 0, fmt.Errorf("read stat: no state in %q", clip(f.buf[:n]))
		case unix.EINTR:
			continue
		case unix.ESRCH:
			return 0, ErrGone
		default:
			return 0, sysErr("read stat", e)
		}
	}
}

// Close closes the file.
func (f *StateFile) Close() error {
	if f == nil || f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}
