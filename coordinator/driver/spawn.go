package driver

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// The trampoline wants its main goroutine on the main thread (tid == pid),
// which only an init function can guarantee without the help of cmd/tcs.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "__spawn" {
		runtime.LockOSThread()
	}
}

// SpawnSpec describes a client to start.
type SpawnSpec struct {
	Name    string
	Argv    []string   // argv[0] "tcs" means this binary (Conf.SelfExe)
	Env     []string   // appended to os.Environ()
	Dir     string     // working directory; default the coordinator's
	LogPath string     // stdout+stderr, created/truncated; default LogDir/Name.log
	Files   []*os.File // become fd 3, 4, ... in the child
}

type spawnReq struct {
	cmd   *exec.Cmd
	reply chan error
}

// spawner starts processes from one OS thread that never exits while the
// mechanism lives: PR_SET_PDEATHSIG fires when the *thread* that forked a
// child exits, not the process. A child inherits that thread's affinity:
// others, the CPUs but the simulation CPU, where a trampoline's threads
// run until one of them is gated (see gate).
func spawner(reqs chan spawnReq, others []int) {
	runtime.LockOSThread()
	err := linux.SetAffinity(0, others...)
	for r := range reqs {
		if err != nil {
			r.reply <- fmt.Errorf("spawner thread off the simulation CPU: %w", err)
			continue
		}
		r.reply <- r.cmd.Start()
	}
	// Returning while locked ends this thread; by now Close has ended every
	// child.
}

func (m *Mechanism) start(cmd *exec.Cmd) error {
	reply := make(chan error, 1)
	m.spawnReq <- spawnReq{cmd: cmd, reply: reply}
	return <-reply
}

// Spawn starts a client through the trampoline (`tcs __spawn`): own process
// group and PR_SET_PDEATHSIG=SIGKILL, as Conf.User (without privileges
// unless it is a named root), in the run's cgroups (Close ends all they
// hold). The trampoline reports the thread
// that will exec the client and waits; Spawn puts that thread at SCHED_FIFO
// ℓ3 on the simulation CPU (gate) and lets it go, so the exec itself runs
// only when the client is first dispatched, and is charged to it. Its pidfd
// is in the wait set.
func (m *Mechanism) Spawn(s SpawnSpec) (_ *Proc, err error) {
	if len(s.Argv) == 0 {
		return nil, fmt.Errorf("spawn client %q: empty argv", s.Name)
	}
	argv := append([]string(nil), s.Argv...)
	if argv[0] == "tcs" {
		argv[0] = m.conf.SelfExe
	}
	if s.LogPath == "" {
		s.LogPath = filepath.Join(m.conf.LogDir, s.Name+".log")
	}
	log, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("spawn client %q: log: %w", s.Name, err)
	}
	defer log.Close()
	// ready carries the trampoline's thread id to us, and its end of
	// stream (close-on-exec) says its exec is over; closing goW tells the
	// trampoline it is gated.
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("spawn client %q: pipe: %w", s.Name, err)
	}
	defer readyR.Close()
	goR, goW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return nil, fmt.Errorf("spawn client %q: pipe: %w", s.Name, err)
	}
	defer goW.Close()
	readyFd := 3 + len(s.Files)
	args := []string{"__spawn", "--ready-fd", strconv.Itoa(readyFd), "--go-fd", strconv.Itoa(readyFd + 1)}
	attr := &unix.SysProcAttr{Setpgid: true, Pdeathsig: unix.SIGKILL}
	env := append(os.Environ(), s.Env...)
	if u := m.conf.User; u != nil {
		if !u.Privileged {
			args = append(args, "--unprivileged")
		}
		if u.Uid != os.Geteuid() || u.Gid != os.Getegid() {
			groups := make([]uint32, len(u.Groups))
			for i, g := range u.Groups {
				groups[i] = uint32(g)
			}
			attr.Credential = &syscall.Credential{Uid: uint32(u.Uid), Gid: uint32(u.Gid), Groups: groups}
			// As login would; the client's own Env still wins.
			env = append(append(os.Environ(), "HOME="+u.Home, "USER="+u.Name, "LOGNAME="+u.Name), s.Env...)
		}
	}
	cmd := exec.Command(m.conf.SelfExe, append(append(args, "--"), argv...)...)
	cmd.Env = env
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = append(append([]*os.File(nil), s.Files...), readyW, goR)
	cmd.SysProcAttr = attr
	err = m.start(cmd)
	readyW.Close()
	goR.Close()
	if err != nil {
		if attr.Credential != nil && errors.Is(err, unix.EACCES) {
			dir := s.Dir
			if dir == "" {
				dir, _ = os.Getwd()
			}
			return nil, fmt.Errorf("spawn client %q as %s: %w: that user must be able to enter its working folder %s and run %s (every folder above them included)",
				s.Name, m.conf.User, err, dir, m.conf.SelfExe)
		}
		return nil, fmt.Errorf("spawn client %q: exec %s __spawn: %w", s.Name, m.conf.SelfExe, err)
	}
	p := &Proc{Pid: cmd.Process.Pid, Name: s.Name, LogPath: s.LogPath, cmd: cmd, pidfd: -1, execFd: -1, clk: linux.ProcessCPUClock(cmd.Process.Pid)}
	defer func() {
		if err != nil {
			_ = linux.KillGroup(p.Pid, unix.SIGKILL)
			_ = cmd.Wait()
			if p.pidfd >= 0 {
				unix.Close(p.pidfd)
			}
			if p.tasks != nil {
				p.tasks.Close()
			}
		}
	}()
	if p.pidfd, err = linux.PidfdOpen(p.Pid); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w", s.Name, err)
	}
	// In the run's cgroup before it can start anything: all it starts is
	// born there, and ends with the run (Close).
	if err = m.cg.AddProcess(p.Pid); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w", s.Name, err)
	}
	if p.tasks, err = linux.OpenTaskDir(p.Pid); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w", s.Name, err)
	}
	// The trampoline runs ungated on the other CPUs until it has said
	// which thread will exec: only a loaded machine delays it.
	var b [8]byte
	t0 := time.Now()
	_ = readyR.SetReadDeadline(t0.Add(trampolineWait))
	if _, err = io.ReadFull(readyR, b[:]); err != nil {
		if tail := logTail(s.LogPath); tail != "" {
			return nil, fmt.Errorf("spawn client %q: %s (log %s)", s.Name, tail, s.LogPath)
		}
		return nil, fmt.Errorf("spawn client %q: trampoline did not start in %v (see %s): %w", s.Name, time.Since(t0).Round(time.Millisecond), s.LogPath, err)
	}
	tid := int(binary.LittleEndian.Uint64(b[:]))
	if err = m.gate(p.Pid, tid); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w (see %s)", s.Name, err, s.LogPath)
	}
	// The exec is not over yet: it runs when p is first dispatched, and
	// ends when it closes the trampoline's end of the ready pipe
	// (close-on-exec). Until then p is never preempted (Run): preempted
	// inside its exec it would hold the process's exec locks, and the
	// coordinator reading its /proc files would sleep on them behind it.
	if p.execFd, err = unix.Dup(int(readyR.Fd())); err != nil {
		return nil, fmt.Errorf("spawn client %q: dup: %w", s.Name, err)
	}
	if err = m.register(p, tid); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w", s.Name, err)
	}
	if err = goW.Close(); err != nil {
		return nil, fmt.Errorf("spawn client %q: let the trampoline go: %w", s.Name, err)
	}
	return p, nil
}

// trampolineWait bounds how long a trampoline may take to report its thread.
const trampolineWait = 30 * time.Second

// gate puts thread tid of process pid at SCHED_FIFO ℓ3 on the simulation
// CPU while it waits to be let go (it is blocked: nothing of it runs
// meanwhile). It is the only thread of pid that tcs gates before the exec:
// the trampoline's other threads (a Go runtime's) stay where they are, at
// SCHED_OTHER on the other CPUs, and end with the exec. Gated from inside,
// they once held the trampoline at a runtime lock behind the spinning
// detector, or ran at real-time priority on the coordinator's CPU between
// a thread's policy and its affinity changing.
func (m *Mechanism) gate(pid, tid int) error {
	if err := linux.SetFIFO(tid, m.conf.Base-3); err != nil {
		return fmt.Errorf("gate thread %d of pid %d: %w", tid, pid, err)
	}
	if err := linux.SetAffinity(tid, m.conf.CPU); err != nil {
		return fmt.Errorf("gate thread %d of pid %d on CPU %d: %w", tid, pid, m.conf.CPU, err)
	}
	// The cpuset keeps it, and every thread and process it starts, on
	// the simulation CPU whatever affinity they ask for.
	if err := m.cg.AddThread(tid); err != nil {
		return fmt.Errorf("gate thread %d of pid %d in the run's cpuset: %w", tid, pid, err)
	}
	return nil
}

// register puts a process p whose thread tid is gated, waiting to exec,
// in the wait set (its exit) and the client table. Until its exec is over
// tid is its one thread tcs schedules (see gate).
func (m *Mechanism) register(p *Proc, tid int) (err error) {
	p.tids = append(make([]int, 0, 64), tid)
	p.idx = len(m.procs)
	for i, q := range m.procs {
		if q == nil {
			p.idx = i
			break
		}
	}
	if err = m.ep.Add(p.pidfd, tagProc|uint64(p.idx)); err != nil {
		return err
	}
	if p.execFd >= 0 {
		if err = m.ep.Add(p.execFd, tagExec|uint64(p.idx)); err != nil {
			return err
		}
	}
	if p.idx == len(m.procs) {
		m.procs = append(m.procs, p)
	} else {
		m.procs[p.idx] = p
	}
	return nil
}

// logTail returns the last line of the log at path (the trampoline's
// complaint when it could not start the client).
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// SpawnMain is `tcs __spawn --ready-fd F --go-fd G [--unprivileged] --
// argv...`, the trampoline every client starts through. With
// --unprivileged it first gives up real-time and other privileges
// (linux.Unprivilege; it already runs as the client's user). It writes the id of the thread
// that will exec to fd F, waits for the end of fd G (the coordinator has
// gated that thread by then, see gate) and execs argv: the exec runs when
// the client is first dispatched. It returns only on error.
func SpawnMain(args []string) int {
	runtime.LockOSThread()
	fs := flag.NewFlagSet("__spawn", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	readyFd := fs.Int("ready-fd", -1, "fd to report the thread id on")
	goFd := fs.Int("go-fd", -1, "fd whose end means: exec")
	unpriv := fs.Bool("unprivileged", false, "exec the client without real-time or other privileges")
	if err := fs.Parse(args); err != nil || *readyFd < 0 || *goFd < 0 || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "tcs __spawn: usage: --ready-fd F --go-fd G -- CMD [ARGS...] (started by the coordinator)")
		return 2
	}
	argv := fs.Args()
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "tcs __spawn %s: %v\n", argv[0], err)
		return 127
	}
	path, err := lookExe(argv[0])
	if err != nil {
		return fail(err)
	}
	if *unpriv {
		if err := linux.Unprivilege(); err != nil {
			return fail(fmt.Errorf("drop privileges: %w", err))
		}
	}
	ready := func(tid int) error {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(tid))
		if _, err := unix.Write(*readyFd, b[:]); err != nil {
			return os.NewSyscallError("write", err)
		}
		// Closed by the execve: the coordinator waits for that end of
		// the stream (Spawn).
		unix.CloseOnExec(*readyFd)
		return nil
	}
	wait := func() error {
		defer unix.Close(*goFd)
		var b [1]byte
		for {
			n, err := unix.Read(*goFd, b[:])
			switch {
			case errors.Is(err, unix.EINTR):
			case err != nil:
				return os.NewSyscallError("read", err)
			case n == 0:
				return nil
			}
		}
	}
	return fail(execGated(ready, wait, path, argv, os.Environ()))
}

// lookExe is the absolute path of program name (searched on PATH).
func lookExe(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(path)
}

// execGated reports the calling thread's id (ready), blocks until the
// coordinator has gated that thread (wait returns) and execs path on it.
// The calling goroutine must be locked to its thread, the process's main
// one. The thread does not change its own scheduling: the coordinator does
// it from outside while the thread is blocked, so nothing of this process
// runs at real-time priority before the exec, and the Go runtime's other
// threads, never gated, end with the exec whenever the kernel asks them to.
// It returns only on error.
func execGated(ready func(tid int) error, wait func() error, path string, argv, env []string) error {
	if err := ready(unix.Gettid()); err != nil {
		return err
	}
	if err := wait(); err != nil {
		return err
	}
	err := syscall.Exec(path, argv, env)
	return fmt.Errorf("execve %s: %w", path, err)
}

// Adopt takes process pid, which tcs did not start (tcs attach), as a
// client: its thread tid waits to exec the client (execGated) and is gated
// here. execFd, which Adopt owns from then on, reaches end of stream when
// that exec is over (the attach connection, close-on-exec in the process).
// Its exit is watched on its pidfd; its exit status goes to its own parent.
func (m *Mechanism) Adopt(pid, tid int, name string, execFd int) (_ *Proc, err error) {
	p := &Proc{Pid: pid, Name: name, pidfd: -1, execFd: execFd, clk: linux.ProcessCPUClock(pid), adopted: true}
	defer func() {
		if err != nil {
			unix.Close(p.execFd)
			if p.pidfd >= 0 {
				unix.Close(p.pidfd)
			}
			if p.tasks != nil {
				p.tasks.Close()
			}
		}
	}()
	if p.pidfd, err = linux.PidfdOpen(pid); err != nil {
		return nil, fmt.Errorf("attach client %q (pid %d): %w", name, pid, err)
	}
	if p.tasks, err = linux.OpenTaskDir(pid); err != nil {
		return nil, fmt.Errorf("attach client %q (pid %d): %w", name, pid, err)
	}
	if err = m.gate(pid, tid); err != nil {
		return nil, fmt.Errorf("attach client %q: %w", name, err)
	}
	if err = m.register(p, tid); err != nil {
		return nil, fmt.Errorf("attach client %q: %w", name, err)
	}
	return p, nil
}
