package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// WriteFileAtomic writes data to path with permissions perm so that a
// reader, or a process killed at any instant (SIGKILL), leaves path with
// its old content or the new, and no temporary file beside it. The data
// goes to an unnamed file in path's folder (open O_TMPFILE), which is
// synced and then given a name with linkat: a kill before the link leaves
// nothing, as the kernel frees an unnamed file with its last descriptor.
// When path does not exist yet the file is linked as path itself; when it
// does, it is linked under a temporary name renamed over path, so only a
// kill between that link and the rename leaves the temporary name. A file
// system without O_TMPFILE gets a named temporary file renamed over path.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	fd, ok, err := openUnnamed(dir, unix.O_WRONLY, uint32(perm))
	if err != nil {
		return fmt.Errorf("write %s: open O_TMPFILE: %w", path, err)
	}
	if !ok {
		return writeFileRename(path, data, perm)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The umask applied to open's mode; perm is what the file must have.
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	link := func(name string) error {
		return retryEINTR(func() error {
			return unix.Linkat(unix.AT_FDCWD, self, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		})
	}
	err = link(path)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("write %s: linkat: %w", path, err)
	}
	tmp := filepath.Join(dir, "."+base+"."+strconv.Itoa(os.Getpid())+".tmp")
	_ = os.Remove(tmp) // a name an earlier process of this pid left
	if err := link(tmp); err != nil {
		return fmt.Errorf("write %s: linkat: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeFileRename is WriteFileAtomic through a named temporary file.
func writeFileRename(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// UnnamedFile opens a new file in folder dir for reading and writing that
// has no name (open O_TMPFILE): the kernel frees it with its last
// descriptor, so a process killed at any instant (SIGKILL) leaves nothing
// behind. On a file system without O_TMPFILE it falls back to a named file
// removed at once, which a kill between the two calls leaves; pattern
// names it (os.CreateTemp).
func UnnamedFile(dir, pattern string) (*os.File, error) {
	fd, ok, err := openUnnamed(dir, unix.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open O_TMPFILE in %s: %w", dir, err)
	}
	if !ok {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), nil
}

// openUnnamed opens a file without a name in folder dir (open O_TMPFILE
// with access flags and perm). ok is false, with no error, when dir's file
// system has no O_TMPFILE: the caller falls back to a named file.
func openUnnamed(dir string, flags int, perm uint32) (fd int, ok bool, err error) {
	err = retryEINTR(func() (e error) {
		fd, e = unix.Open(dir, unix.O_TMPFILE|flags|unix.O_CLOEXEC, perm)
		return e
	})
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) {
		return -1, false, nil
	}
	return fd, err == nil, err
}
