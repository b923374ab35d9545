package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// CPULock is the exclusive lock on one simulation CPU: a lock file
// (/run/tcs/cpuN.lock, or $TMPDIR/tcs/cpuN.lock when /run is not writable)
// held with flock(2) and holding the holder's PID.
type CPULock struct {
	f    *os.File
	Path string
}

// LockPath returns the lock file's path for cpu.
func LockPath(cpu int) string {
	name := "cpu" + strconv.Itoa(cpu) + ".lock"
	if err := os.MkdirAll("/run/tcs", 0o755); err == nil && unix.Access("/run/tcs", unix.W_OK) == nil {
		return filepath.Join("/run/tcs", name)
	}
	dir := filepath.Join(os.TempDir(), "tcs")
	_ = os.MkdirAll(dir, 0o755)
	return filepath.Join(dir, name)
}

// LockCPU takes the lock of cpu, waiting up to timeout (0: fail at once)
// for another holder to release it. The error wraps ErrCPUBusy and names
// the holder's PID.
func LockCPU(cpu int, timeout time.Duration) (*CPULock, error) {
	path := LockPath(cpu)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock simulation CPU %d: %w", cpu, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := retryEINTR(func() error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) })
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock simulation CPU %d: flock %s: %w", cpu, path, err)
		}
		if !time.Now().Before(deadline) {
			holder := "unknown PID"
			if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				holder = "PID " + strings.TrimSpace(string(b))
			}
			f.Close()
			return nil, fmt.Errorf("%w: CPU %d is held by %s (lock file %s); waited %v", ErrCPUBusy, cpu, holder, path, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &CPULock{f: f, Path: path}, nil
}

// Unlock releases the lock.
func (l *CPULock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
	if err != nil {
		return os.NewSyscallError("flock", err)
	}
	return nil
}
