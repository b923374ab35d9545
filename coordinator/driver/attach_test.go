package driver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// nobody is the foreign user the attach tests connect as.
var nobody = linux.Cred{Uid: 65534, Gid: 65534}

// init lets the test binary play a process of another user near the
// attach socket: started as root, it drops to nobody, then either only
// connects ("dial") or runs tcs attach ("attach"). (init, not TestMain's
// helper switch, so that these tests stay in this file.)
func init() {
	mode := os.Getenv("TCS_TEST_ATTACH_AS_NOBODY")
	if mode == "" {
		return
	}
	if err := linux.DropToUser(nobody); err != nil {
		fmt.Fprintln(os.Stderr, "drop to nobody:", err)
		os.Exit(4)
	}
	path := os.Getenv("TCS_ATTACH_SOCKET")
	switch mode {
	case "dial":
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			if errors.Is(err, os.ErrPermission) {
				os.Exit(0)
			}
			os.Exit(1)
		}
		c.Close()
		fmt.Fprintln(os.Stderr, "connected")
		os.Exit(3)
	case "attach":
		os.Exit(AttachMain([]string{"--name", "pd", "--socket", path, "--", "true"}, os.Stderr))
	}
	os.Exit(5)
}

// attachAsNobody starts the test binary as a process of nobody in mode.
func attachAsNobody(t *testing.T, ctx context.Context, mode, socket string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "TCS_TEST_ATTACH_AS_NOBODY="+mode, "TCS_ATTACH_SOCKET="+socket)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// attachSocketForTest listens on an attach socket for this process's
// user in a fresh directory whose parent nobody may enter.
func attachSocketForTest(t *testing.T) (*net.UnixListener, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test's other process drops to nobody")
	}
	t.Setenv("SUDO_UID", "")
	t.Setenv("SUDO_GID", "")
	base, err := os.MkdirTemp("", "tcs-attach-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(base, "run", "attach.sock")
	owner, err := linux.Invoker()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := listenAttach(path, owner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, path
}

// TestAttachSocketKeepsOthersOut: as created, another user cannot even
// connect to the attach socket.
func TestAttachSocketKeepsOthersOut(t *testing.T) {
	_, path := attachSocketForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd, stderr := attachAsNobody(t, ctx, "dial", path)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("nobody's connect: %v, %s (want permission denied)", err, stderr)
	}
	if !strings.Contains(stderr.String(), "permission denied") {
		t.Errorf("nobody's connect: %s", stderr)
	}
}

// TestAttachRefusesForeignPeer: with the socket opened up by hand, tcs
// attach run by nobody connects, is refused by its credentials with a log
// line naming its uid and pid, gets no answer, and the run goes on; the
// same request from this process's user reaches the scenario check.
func TestAttachRefusesForeignPeer(t *testing.T) {
	ln, path := attachSocketForTest(t)
	for p, mode := range map[string]os.FileMode{filepath.Dir(path): 0o755, path: 0o666} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	var logBuf bytes.Buffer
	r := &runner{attachLn: ln, log: zerolog.New(&logBuf), sc: &config.Scenario{File: "t.yaml"}}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd, stderr := attachAsNobody(t, ctx, "attach", path)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
wait:
	for {
		r.acceptAttach()
		select {
		case werr = <-done:
			break wait
		case <-time.After(5 * time.Millisecond):
		}
	}
	// The run closes the connection unanswered: tcs attach finds it
	// closed while it writes its request or while it waits for the answer.
	var exitErr *exec.ExitError
	closed := false
	for _, s := range []string{"no answer from the run", "broken pipe", "connection reset by peer"} {
		closed = closed || strings.Contains(stderr.String(), s)
	}
	if !errors.As(werr, &exitErr) || exitErr.ExitCode() != 1 || !closed {
		t.Errorf("nobody's tcs attach: %v, %q; want exit 1 and no answer", werr, stderr)
	}
	var line struct {
		Level   string `json:"level"`
		Uid     int    `json:"uid"`
		Pid     int    `json:"pid"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(logBuf.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", logBuf.String(), err)
	}
	if line.Level != "warn" || line.Uid != nobody.Uid || line.Pid != cmd.Process.Pid || !strings.Contains(line.Message, "tcs attach refused: peer pid") {
		t.Errorf("log %+v; want a warning naming uid %d and pid %d", line, nobody.Uid, cmd.Process.Pid)
	}
	if r.attachErr != nil {
		t.Errorf("a foreign peer stopped the run: %v", r.attachErr)
	}

	// The control: the invoking user is served (and refused by the
	// scenario, which has no such client).
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(`{"name":"pd"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	r.acceptAttach()
	reply, err := bufio.NewReader(c).ReadBytes('\n')
	var rep attachReply
	if err == nil {
		err = json.Unmarshal(reply, &rep)
	}
	if err != nil || !strings.Contains(rep.Error, `t.yaml has no client "pd"`) {
		t.Errorf("own user's request: %+v, %v; want the scenario's answer", rep, err)
	}
}

func TestAttachPeerOK(t *testing.T) {
	owner := linux.Cred{Uid: 1000, Gid: 1000}
	for _, c := range []struct {
		peer linux.Cred
		ok   bool
	}{
		{linux.Cred{Pid: 7, Uid: 1000, Gid: 5}, true},
		{linux.Cred{Pid: 7, Uid: 0, Gid: 0}, true},
		{linux.Cred{Pid: 7, Uid: 1001, Gid: 1000}, false},
		{linux.Cred{Pid: 7, Uid: 65534, Gid: 65534}, false},
	} {
		why := attachPeerOK(c.peer, owner)
		if (why == "") != c.ok {
			t.Errorf("peer %+v: %q", c.peer, why)
		}
		if !c.ok && !strings.Contains(why, fmt.Sprintf("pid %d runs as uid %d", c.peer.Pid, c.peer.Uid)) {
			t.Errorf("peer %+v: %q does not name its pid and uid", c.peer, why)
		}
	}
}
