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

// threadFile is an open /proc/PID/task/TID/<name>, read again from its
// start by one pread (procfs regenerates the file), without allocating
// and without a path lookup.
type threadFile struct{ fd int }

// openThreadFile opens file name of thread tid of process pid.
func openThreadFile(pid, tid int, name string) (threadFile, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/" + name
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return threadFile{fd: -1}, fmt.Errorf("open %s: %w", path, err)
	}
	return threadFile{fd: fd}, nil
}

// read fills buf from the file's start and returns what it read; ErrGone
// once the thread has exited. what names the file in errors.
func (f threadFile) read(buf []byte, what string) ([]byte, error) {
	for {
		n, _, e := unix.Syscall6(unix.SYS_PREAD64, uintptr(f.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		switch e {
		case 0:
			return buf[:n], nil
		case unix.EINTR:
			continue
		case unix.ESRCH:
			return nil, ErrGone
		default:
			return nil, sysErr("read "+what, e)
		}
	}
}

// close closes the file (once).
func (f *threadFile) close() error {
	if f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

// RuntimeFile is an open /proc/PID/task/TID/schedstat: it reads a thread's
// CPU time, the thread of another process included, without allocating.
type RuntimeFile struct {
	f   threadFile
	buf [96]byte
}

// OpenRuntime opens the schedstat file of thread tid of process pid.
func OpenRuntime(pid, tid int) (*RuntimeFile, error) {
	f, err := openThreadFile(pid, tid, "schedstat")
	if err != nil {
		return nil, err
	}
	return &RuntimeFile{f: f}, nil
}

// Ns returns the CPU time (ns) the thread has used; ErrGone once it has
// exited.
func (f *RuntimeFile) Ns() (int64, error) {
	b, err := f.f.read(f.buf[:], "schedstat")
	if err != nil {
		return 0, err
	}
	return ParseSchedstat(b)
}

// Close closes the file.
func (f *RuntimeFile) Close() error {
	if f == nil {
		return nil
	}
	return f.f.close()
}

// StateFile is an open /proc/PID/task/TID/stat: it reads a thread's state
// letter (R running or runnable, S sleeping, ...) without allocating.
type StateFile struct {
	f   threadFile
	buf [64]byte // the line's start: pid, (comm) of at most 16 bytes, state
}

// OpenState opens the stat file of thread tid of process pid.
func OpenState(pid, tid int) (*StateFile, error) {
	f, err := openThreadFile(pid, tid, "stat")
	if err != nil {
		return nil, err
	}
	return &StateFile{f: f}, nil
}

// State returns the thread's state letter; ErrGone once it has exited.
func (f *StateFile) State() (byte, error) {
	b, err := f.f.read(f.buf[:], "stat")
	if err != nil {
		return 0, err
	}
	if st := StatState(b); st != 0 {
		return st, nil
	}
	return 0, fmt.Errorf("read stat: no state in %q", clip(b))
}

// Close closes the file.
func (f *StateFile) Close() error {
	if f == nil {
		return nil
	}
	return f.f.close()
}

// SyscallFile is an open /proc/PID/task/TID/syscall: it reads which system
// call a blocked thread is in, and its arguments, without allocating.
// Reading it needs ptrace access to the thread (see SleepScanner).
type SyscallFile struct {
	f   threadFile
	buf [256]byte
}

// OpenSyscall opens the syscall file of thread tid of process pid.
func OpenSyscall(pid, tid int) (*SyscallFile, error) {
	f, err := openThreadFile(pid, tid, "syscall")
	if err != nil {
		return nil, err
	}
	return &SyscallFile{f: f}, nil
}

// Read returns what the thread is doing; ErrGone once it has exited.
func (f *SyscallFile) Read() (ThreadSyscall, error) {
	b, err := f.f.read(f.buf[:], "syscall")
	if err != nil {
		return ThreadSyscall{}, err
	}
	return ParseSyscall(b)
}

// Close closes the file.
func (f *SyscallFile) Close() error {
	if f == nil {
		return nil
	}
	return f.f.close()
}
