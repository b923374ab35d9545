// Package rosenv runs Debian's ROS 1 tools and nodes, and a ROS 2 install's
// (NewROS2, ros2.go), from Go tests: an
// environment pointing at a given master, commands with timeouts, background
// processes in their own process groups (stopped by the test's cleanup), and
// polling. Tests skip, saying what to install, where ROS is missing:
//
//	apt-get install -y --no-install-recommends python3-rosmaster python3-roslaunch \
//	  python3-rospy python3-rosbag python3-rostopic python3-rosparam python3-rosnode \
//	  python3-std-msgs rosout
package rosenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// Python is the interpreter for rospy nodes: the python on PATH may be
// another build that cannot import rospy.
const Python = "/usr/bin/python3"

// Env is one test's ROS environment.
type Env struct {
	T    *testing.T
	Vars []string // the environment every command runs with
	Dir  string   // working directory and ROS_HOME
}

// New returns an environment whose tools talk to the master at masterURI.
// It skips the test if one of tools (besides rostopic, rosparam, rosnode
// and rospy) is missing.
func New(t *testing.T, masterURI string, tools ...string) *Env {
	t.Helper()
	for _, tool := range append([]string{"rostopic", "rosparam", "rosnode"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("ROS 1 is not installed (%s: %v); install python3-rostopic python3-rosparam python3-rosnode python3-rospy python3-roslaunch python3-rosbag python3-std-msgs rosout", tool, err)
		}
	}
	if _, err := os.Stat(Python); err != nil {
		t.Skipf("%s missing: %v", Python, err)
	}
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "ROS_MASTER_URI", "ROS_IP", "ROS_HOSTNAME", "ROS_HOME", "ROS_NAMESPACE", "ROS_PACKAGE_PATH",
			"http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "ROS_MASTER_URI="+masterURI, "ROS_HOSTNAME=127.0.0.1", "ROS_HOME="+dir,
		"PYTHONUNBUFFERED=1")
	return &Env{T: t, Vars: env, Dir: dir}
}

// Run runs a command to completion within timeout and returns its output.
func (r *Env) Run(timeout time.Duration, name string, args ...string) (string, error) {
	r.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = r.Vars
	cmd.Dir = r.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: timed out after %v: %w", name, strings.Join(args, " "), timeout, err)
	} else if err != nil {
		err = fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	// A node's process group may outlive it (roslaunch children).
	if cmd.Process != nil { // nil: it did not start
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // usually gone
	}
	return string(out), err
}

// MustRun is Run that fails the test on error.
func (r *Env) MustRun(timeout time.Duration, name string, args ...string) string {
	r.T.Helper()
	out, err := r.Run(timeout, name, args...)
	if err != nil {
		r.T.Fatalf("%v\n%s", err, out)
	}
	return out
}

// Buffer is a bytes.Buffer safe for concurrent writers and readers (a
// process's output, a logger's lines).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Proc is a background process.
type Proc struct {
	// StackSignal, when set, is a signal the process answers by printing
	// its threads' stacks (Python's faulthandler.register): Stop sends it
	// before SIGKILL, so that a test's failure shows where it hung.
	StackSignal syscall.Signal

	cmd  *exec.Cmd
	out  Buffer
	done chan struct{}
	err  error
}

// Output returns what the process printed so far.
func (p *Proc) Output() string { return p.out.String() }

// Start starts a command in the background; the test's cleanup stops it.
func (r *Env) Start(name string, args ...string) *Proc {
	r.T.Helper()
	p := &Proc{cmd: exec.Command(name, args...), done: make(chan struct{})}
	p.cmd.Env = r.Vars
	p.cmd.Dir = r.Dir
	p.cmd.Stdout = &p.out
	p.cmd.Stderr = &p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// roslaunch starts its nodes in sessions of their own: one that
	// outlives it keeps the output pipe open, and Wait would wait for it
	// forever (a loaded machine made a test hang so). Wait gives the pipe
	// that long after the process ended, and Stop ends such nodes.
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		r.T.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	r.T.Cleanup(func() {
		p.Stop()
		r.killLeftovers()
	})
	return p
}

// killLeftovers ends, by pid, the processes still running from this
// environment's private folder (its nodes' command lines name it): nodes
// a launcher started in sessions of their own, which outlived it.
func (r *Env) killLeftovers() {
	pids, err := linux.Pids()
	if err != nil {
		return
	}
	for _, pid := range pids {
		if pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(r.Dir+"/")) {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // may be gone
		}
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after 15 s, and
// waits for the process. (rospy's shutdown joins its threads with 5 s
// timeouts each: a node whose thread lingers takes over 5 s to exit, seen
// on a loaded machine.)
//
// The rest of the group gets the same time to end on its own: `rosbag
// record` is a Python wrapper whose C++ child closes the bag (renames
// run.bag.active) after the wrapper has exited; killed then, it left no
// bag (seen on a loaded machine).
func (p *Proc) Stop() (killed bool) {
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM) //nolint:errcheck // may be gone
	deadline := time.Now().Add(15 * time.Second)
	select {
	case <-p.done:
	case <-time.After(time.Until(deadline)):
		if p.StackSignal != 0 {
			syscall.Kill(pgid, p.StackSignal) //nolint:errcheck // may be gone
			select {
			case <-p.done:
			case <-time.After(time.Second):
			}
		}
		syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck
		<-p.done
		killed = true
	}
	for syscall.Kill(-pgid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(-pgid, 0) == nil {
		killed = true
	}
	syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck // stragglers in the group
	return killed
}

// Interrupt sends SIGINT to the process group, as Ctrl-C in a terminal
// does, and waits up to timeout for the process to exit; a process that
// does not exit in time or exits with an error fails the test.
func (p *Proc) Interrupt(t *testing.T, timeout time.Duration) {
	t.Helper()
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatalf("interrupt %s: %v", strings.Join(p.cmd.Args, " "), err)
	}
	p.Wait(t, timeout)
}

// Wait waits for the process to exit on its own within timeout.
func (p *Proc) Wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(p.cmd.Args, " "), p.err, p.Output())
		}
	case <-time.After(timeout):
		t.Fatalf("%s did not end in %v\n%s", strings.Join(p.cmd.Args, " "), timeout, p.Output())
	}
}

// Eventually polls cond every 100 ms until it holds or timeout passes.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v; last: %s", what, timeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitDrained waits, up to timeout, until no process of p's group has
// unread bytes in a TCP socket for 300 ms: a recorder (rosbag record) has
// then read everything that was sent to it, and stopping it loses nothing.
// It reports whether that happened.
func (p *Proc) WaitDrained(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	var quiet time.Time
	for time.Now().Before(deadline) {
		if unreadBytes(p.cmd.Process.Pid) > 0 {
			quiet = time.Time{}
		} else if quiet.IsZero() {
			quiet = time.Now()
		} else if time.Since(quiet) >= 300*time.Millisecond {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// unreadBytes sums the receive queues of the TCP sockets held by the
// processes of process group pgid (from /proc/net/tcp{,6}).
func unreadBytes(pgid int) int64 {
	inodes := map[string]bool{}
	pids, _ := linux.Pids()
	for _, pid := range pids {
		if g, err := syscall.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	var total int64
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local rem st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			if _, rx, ok := strings.Cut(f[4], ":"); ok {
				n, _ := strconv.ParseInt(rx, 16, 64)
				total += n
			}
		}
	}
	return total
}
