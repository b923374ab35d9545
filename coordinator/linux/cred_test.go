package linux

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseInvoker(t *testing.T) {
	for _, c := range []struct {
		name             string
		sudoUID, sudoGID string
		euid, uid, gid   int
		want             Cred
		err              string
	}{
		{"plain root", "", "", 0, 0, 0, Cred{Uid: 0, Gid: 0}, ""},
		{"plain user", "", "", 1000, 1000, 100, Cred{Uid: 1000, Gid: 100}, ""},
		{"sudo", "1000", "1001", 0, 0, 0, Cred{Uid: 1000, Gid: 1001}, ""},
		{"sudo -u alice: not root, SUDO_* ignored", "1000", "1000", 1002, 1002, 1002, Cred{Uid: 1002, Gid: 1002}, ""},
		{"setuid root binary", "1000", "1000", 0, 1000, 1000, Cred{Uid: 1000, Gid: 1000}, ""},
		{"uid only", "1000", "", 0, 0, 0, Cred{}, "SUDO_UID=\"1000\" and SUDO_GID=\"\""},
		{"gid only", "", "5", 0, 0, 0, Cred{}, "set both or neither"},
		{"not a number", "alice", "1000", 0, 0, 0, Cred{}, "SUDO_UID: \"alice\" is not a user or group id"},
		{"negative", "1000", "-1", 0, 0, 0, Cred{}, "SUDO_GID: \"-1\""},
		{"(uid_t)-1", "4294967295", "0", 0, 0, 0, Cred{}, "SUDO_UID"},
		{"too big", "4294967296", "0", 0, 0, 0, Cred{}, "SUDO_UID"},
	} {
		got, err := ParseInvoker(c.sudoUID, c.sudoGID, c.euid, c.uid, c.gid)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %+v, %v; want an error with %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func statOf(t *testing.T, p string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestListenPrivate: the socket is 0600 and its directory 0700, both the
// owner's, whatever the umask; a stale socket is replaced; a peer's
// credentials are read.
func TestListenPrivate(t *testing.T) {
	owners := []Cred{{Uid: os.Getuid(), Gid: os.Getgid()}}
	if os.Geteuid() == 0 {
		owners = append(owners, Cred{Uid: 65534, Gid: 65534})
	} else {
		t.Log("not root: the socket for another owner is not tried")
	}
	old := unix.Umask(0)
	defer unix.Umask(old)
	for _, owner := range owners {
		path := filepath.Join(t.TempDir(), "a", "b", "attach.sock")
		// Round 0 creates the directories; round 1 finds them, and the
		// socket round 0 left as a crashed run would.
		for round := 0; round < 2; round++ {
			ln, err := ListenPrivate(path, owner)
			if err != nil {
				t.Fatalf("owner %+v round %d: %v", owner, round, err)
			}
			ds, ss := statOf(t, filepath.Dir(path)), statOf(t, path)
			if ds.Mode != unix.S_IFDIR|0o700 || int(ds.Uid) != owner.Uid || int(ds.Gid) != owner.Gid {
				t.Errorf("directory: mode %o uid %d gid %d; want %o %d %d", ds.Mode, ds.Uid, ds.Gid, unix.S_IFDIR|0o700, owner.Uid, owner.Gid)
			}
			if ss.Mode != unix.S_IFSOCK|0o600 || int(ss.Uid) != owner.Uid || int(ss.Gid) != owner.Gid {
				t.Errorf("socket: mode %o uid %d gid %d; want %o %d %d", ss.Mode, ss.Uid, ss.Gid, unix.S_IFSOCK|0o600, owner.Uid, owner.Gid)
			}
			if ps := statOf(t, filepath.Dir(filepath.Dir(path))); ps.Mode&0o777 != 0o755 {
				t.Errorf("created parent: mode %o, want 755", ps.Mode&0o777)
			}
			c, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := ln.AcceptUnix()
			if err != nil {
				t.Fatal(err)
			}
			cred, err := PeerCred(sc)
			if err != nil || cred != (Cred{Pid: os.Getpid(), Uid: os.Getuid(), Gid: os.Getgid()}) {
				t.Errorf("PeerCred: %+v, %v; want this process's", cred, err)
			}
			sc.Close()
			c.Close()
			if round == 0 {
				ln.SetUnlinkOnClose(false) // the second round finds it stale
			}
			ln.Close()
		}
	}
}

// TestListenPrivateRefusesOpenDirectory: a directory that is not the
// owner's own 0700 directory is refused, and the error says what it is.
func TestListenPrivateRefusesOpenDirectory(t *testing.T) {
	me := Cred{Uid: os.Getuid(), Gid: os.Getgid()}
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(open, 0o1777); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ dir, owner, want string }{
		{open, "", "is dtrwxrwxrwx owned by uid"},
		{link, "", "is Lrwxrwxrwx owned by uid"},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct{ dir, owner, want string }{real, "nobody", "owned by uid 0; it must be a directory of mode 0700 owned by uid 65534"})
	}
	for _, c := range cases {
		owner := me
		if c.owner == "nobody" {
			owner = Cred{Uid: 65534, Gid: 65534}
		}
		ln, err := ListenPrivate(filepath.Join(c.dir, "attach.sock"), owner)
		if err == nil {
			ln.Close()
			t.Errorf("%s: accepted", c.dir)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.dir) {
			t.Errorf("%s: %v; want %q", c.dir, err, c.want)
		}
		if _, err := os.Lstat(filepath.Join(c.dir, "attach.sock")); err == nil {
			t.Errorf("%s: a socket was left", c.dir)
		}
	}
}
