package linux

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Invoker is the user this process acts for: ParseInvoker on its
// environment and credentials.
func Invoker() (Cred, error) {
	return ParseInvoker(os.Getenv("SUDO_UID"), os.Getenv("SUDO_GID"), os.Geteuid(), os.Getuid(), os.Getgid())
}

// PeerCred returns the credentials of the peer of a unix socket as the
// kernel recorded them when it connected (SO_PEERCRED).
func PeerCred(c *net.UnixConn) (Cred, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cerr = retryEINTR(func() error {
			var err error
			cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
			return err
		})
	}); err != nil {
		return Cred{}, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return Cred{}, os.NewSyscallError("getsockopt SO_PEERCRED", cerr)
	}
	return Cred{Pid: int(cred.Pid), Uid: int(cred.Uid), Gid: int(cred.Gid)}, nil
}

// ListenPrivate listens on the unix socket path for owner only: the
// socket is mode 0600 and owned by owner, in a directory of mode 0700
// owned by owner, so that no other user (root aside) can connect.
//
// The directory's parents are created (mode 0755) when missing. The
// directory itself is created when missing; when it exists it must be a
// real directory (not a symbolic link) of owner with mode 0700, else the
// error says so and how to fix it: a directory another user controls
// could hold a socket of theirs. A socket file left there by an earlier
// run is removed (the caller makes sure no run listens on it).
func ListenPrivate(path string, owner Cred) (*net.UnixListener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	err := retryEINTR(func() error { return unix.Mkdir(dir, 0o700) })
	switch {
	case err == nil:
		// mkdir's mode went through the umask; chown before chmod so that
		// the directory is never open to anyone but root and owner.
		if err := retryEINTR(func() error { return unix.Lchown(dir, owner.Uid, owner.Gid) }); err != nil {
			return nil, fmt.Errorf("socket directory %s: %w", dir, os.NewSyscallError("lchown", err))
		}
		if err := retryEINTR(func() error { return unix.Chmod(dir, 0o700) }); err != nil {
			return nil, fmt.Errorf("socket directory %s: %w", dir, os.NewSyscallError("chmod", err))
		}
	case err == unix.EEXIST:
	default:
		return nil, fmt.Errorf("socket directory %s: %w", dir, os.NewSyscallError("mkdir", err))
	}
	if err := CheckPrivateDir(dir, owner.Uid); err != nil {
		return nil, err
	}
	if err := retryEINTR(func() error { return unix.Unlink(path) }); err != nil && err != unix.ENOENT {
		return nil, fmt.Errorf("socket %s: remove the old one: %w", path, os.NewSyscallError("unlink", err))
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	// The socket was created with mode 0777 minus the umask; nobody but
	// root and owner can reach it in its directory while it is narrowed.
	if err := retryEINTR(func() error { return unix.Lchown(path, owner.Uid, owner.Gid) }); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket %s: %w", path, os.NewSyscallError("lchown", err))
	}
	if err := retryEINTR(func() error { return unix.Chmod(path, 0o600) }); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket %s: %w", path, os.NewSyscallError("chmod", err))
	}
	return ln, nil
}

// CheckPrivateDir fails unless dir is a directory (not a symbolic link)
// owned by uid with mode 0700.
func CheckPrivateDir(dir string, uid int) error {
	var st unix.Stat_t
	if err := retryEINTR(func() error { return unix.Lstat(dir, &st) }); err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, os.NewSyscallError("lstat", err))
	}
	mode := st.Mode & (unix.S_IFMT | 0o7777)
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid || mode&0o7777 != 0o700 {
		return fmt.Errorf("socket directory %s is %s owned by uid %d; it must be a directory of mode 0700 owned by uid %d "+
			"(remove it and tcs creates it, or choose another path)", dir, fileMode(mode), st.Uid, uid)
	}
	return nil
}

// fileMode renders a stat mode like ls: "drwxr-xr-x", "Lrwxrwxrwx".
func fileMode(m uint32) string {
	fm := os.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		fm |= os.ModeDir
	case unix.S_IFLNK:
		fm |= os.ModeSymlink
	case unix.S_IFSOCK:
		fm |= os.ModeSocket
	case unix.S_IFREG:
	default:
		fm |= os.ModeIrregular
	}
	if m&unix.S_ISVTX != 0 {
		fm |= os.ModeSticky
	}
	return fm.String()
}

// DropToUser makes the calling process (every thread) run as c: no
// supplementary groups, then gid, then uid. There is no way back.
func DropToUser(c Cred) error {
	if err := syscall.Setgroups(nil); err != nil {
		return os.NewSyscallError("setgroups", err)
	}
	if err := syscall.Setgid(c.Gid); err != nil {
		return os.NewSyscallError("setgid", err)
	}
	if err := syscall.Setuid(c.Uid); err != nil {
		return os.NewSyscallError("setuid", err)
	}
	return nil
}

// Unprivilege limits the calling process before it execs a client: no
// real-time priority and no nice value below its own (RLIMIT_RTPRIO and
// RLIMIT_NICE 0, soft and hard), and no privilege an exec could grant
// (PR_SET_NO_NEW_PRIVS: set-user-ID programs and file capabilities do
// nothing). A process that is still root also empties its capability
// bounding set, so that the exec leaves it uid 0 without capabilities.
// The thread-scoped parts (no_new_privs, the bounding set) apply to the
// calling thread, which must be the one that execs.
func Unprivilege() error {
	for _, r := range []struct {
		res  int
		name string
	}{{unix.RLIMIT_RTPRIO, "RLIMIT_RTPRIO"}, {unix.RLIMIT_NICE, "RLIMIT_NICE"}} {
		if err := unix.Setrlimit(r.res, &unix.Rlimit{}); err != nil {
			return os.NewSyscallError("setrlimit "+r.name, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl PR_SET_NO_NEW_PRIVS", err)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	last, err := capLast()
	if err != nil {
		return err
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return os.NewSyscallError(fmt.Sprintf("prctl PR_CAPBSET_DROP %d", c), err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return os.NewSyscallError("prctl PR_CAP_AMBIENT_CLEAR_ALL", err)
	}
	return nil
}

// capLast is the highest capability number this kernel knows.
func capLast() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("/proc/sys/kernel/cap_last_cap: %w", err)
	}
	return n, nil
}
