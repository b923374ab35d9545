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

// The trampoline and the detector want their main goroutine on the main
// thread (tid == pid), which only an init function can guarantee without
// the help of cmd/tcs.
func init() {
	if len(os.Args) > 1 && (os.Args[1] == "__spawn" || os.Args[1] == "__detector") {
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
// child exits, not the process.
func spawner(reqs chan spawnReq) {
	runtime.LockOSThread()
	for r := range reqs {
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
// group, PR_SET_PDEATHSIG=SIGKILL, SCHED_FIFO ℓ3 and affinity to the
// simulation CPU set before exec, so it cannot run before it is dispatched.
// Its pidfd is in the wait set. The first dispatch of a client also runs
// the end of the trampoline (its exec of the client), which is charged to
// the client.
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
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("spawn client %q: pipe: %w", s.Name, err)
	}
	defer readyR.Close()
	readyFd := 3 + len(s.Files)
	args := []string{"__spawn", "--cpu", strconv.Itoa(m.conf.CPU), "--prio", strconv.Itoa(m.conf.Base - 3),
		"--ready-fd", strconv.Itoa(readyFd), "--"}
	cmd := exec.Command(m.conf.SelfExe, append(args, argv...)...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.ExtraFiles = append(append([]*os.File(nil), s.Files...), readyW)
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true, Pdeathsig: unix.SIGKILL}
	err = m.start(cmd)
	readyW.Close()
	if err != nil {
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
	if p.tasks, err = linux.OpenTaskDir(p.Pid); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w", s.Name, err)
	}
	// The trampoline reports its thread id once it is at ℓ3, just before it
	// moves itself onto the simulation CPU.
	var b [8]byte
	t0 := time.Now()
	_ = readyR.SetReadDeadline(t0.Add(time.Second))
	_, err = io.ReadFull(readyR, b[:])
	if errors.Is(err, os.ErrDeadlineExceeded) && m.det != nil && !m.parked {
		// The trampoline, a Go program, has moved its runtime's other
		// threads to ℓ3 on the simulation CPU, where the spinning detector
		// keeps them from running; a runtime that needs one of them then
		// stalls its main thread (seen with 64 clients on a loaded
		// machine). Parking the detector lets them run; the processes
		// already started may then run their exec before their first
		// dispatch, which is counted before it (cpu_before_s).
		if perr := linux.StoreWake(m.det.park, 1); perr == nil {
			_ = readyR.SetReadDeadline(t0.Add(10 * time.Second))
			_, err = io.ReadFull(readyR, b[:])
			_ = linux.StoreWake(m.det.park, 0)
		}
	}
	if err != nil {
		if tail := logTail(s.LogPath); tail != "" {
			return nil, fmt.Errorf("spawn client %q: %s (log %s)", s.Name, tail, s.LogPath)
		}
		return nil, fmt.Errorf("spawn client %q: trampoline did not start in %v (see %s): %w", s.Name, time.Since(t0).Round(time.Millisecond), s.LogPath, err)
	}
	tid := int(binary.LittleEndian.Uint64(b[:]))
	if err = waitGated(p.Pid, tid, m.conf.CPU); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w (see %s)", s.Name, err, s.LogPath)
	}
	// The exec is not over yet: it runs when p is first dispatched, and
	// ends when it closes the trampoline's end of the pipe (close-on-exec).
	// Until then p is never preempted (Run): preempted inside its exec it
	// would hold the process's exec locks, and the coordinator reading its
	// /proc files would sleep on them behind it (64 clients hung a run at
	// t = 0 that way).
	if p.execFd, err = unix.Dup(int(readyR.Fd())); err != nil {
		return nil, fmt.Errorf("spawn client %q: dup: %w", s.Name, err)
	}
	if err = m.register(p); err != nil {
		return nil, fmt.Errorf("spawn client %q: %w", s.Name, err)
	}
	return p, nil
}

// register lists the threads of a gated process p and puts it in the wait
// set (its exit) and the client table.
func (m *Mechanism) register(p *Proc) (err error) {
	if p.tids, err = p.tasks.List(make([]int, 0, 64)); err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
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

// waitGated waits until thread tid of pid sits on cpu at SCHED_FIFO.
func waitGated(pid, tid, cpu int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := linux.ReadStat(pid, tid)
		if err != nil {
			return fmt.Errorf("trampoline exited early: %w", err)
		}
		if st.Processor == cpu && st.Policy == linux.SchedFIFO {
			return nil
		}
		if st.State == 'Z' || st.State == 'X' {
			return errors.New("trampoline exited early")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("trampoline thread %d not on CPU %d after 5 s (state %c, CPU %d)", tid, cpu, st.State, st.Processor)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// SpawnMain is `tcs __spawn --cpu N --prio P --ready-fd F -- argv...`, the
// trampoline every client starts through. It puts every thread of its own at
// SCHED_FIFO P on CPU N (the runtime's threads first, its own last: from
// then on nothing of it runs until it is dispatched), after writing its
// thread id to fd F, and execs argv. It returns only on error.
func SpawnMain(args []string) int {
	runtime.LockOSThread()
	fs := flag.NewFlagSet("__spawn", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cpu := fs.Int("cpu", -1, "simulation CPU")
	prio := fs.Int("prio", 0, "SCHED_FIFO priority")
	readyFd := fs.Int("ready-fd", -1, "fd to report the thread id on")
	if err := fs.Parse(args); err != nil || *cpu < 0 || *prio <= 0 || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "tcs __spawn: usage: --cpu N --prio P [--ready-fd F] -- CMD [ARGS...] (started by the coordinator)")
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
	ready := func(int) error { return nil }
	if *readyFd >= 0 {
		ready = func(tid int) error {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], uint64(tid))
			if _, err := unix.Write(*readyFd, b[:]); err != nil {
				return os.NewSyscallError("write", err)
			}
			// Closed by the execve: the coordinator waits for that end
			// of the stream (Spawn).
			unix.CloseOnExec(*readyFd)
			return nil
		}
	}
	return fail(gateAndExec(*cpu, *prio, ready, path, argv, os.Environ()))
}

// lookExe is the absolute path of program name (searched on PATH).
func lookExe(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(path)
}

// gateAndExec puts every thread of this process at SCHED_FIFO prio on cpu
// (the runtime's threads first, the calling one last), calls ready with the
// calling thread's id once it is at prio (the coordinator then knows it
// cannot run unless dispatched or released), and execs path. The calling
// goroutine must be locked to its thread. It returns only on error. The
// exec runs in the client's first dispatch, which no timer ends before the
// exec is over (Run): its other threads, at ℓ1 then too, run to their end.
func gateAndExec(cpu, prio int, ready func(tid int) error, path string, argv, env []string) error {
	// Gate the runtime's other threads first: otherwise they keep running
	// (sysmon polling this thread's long syscall) and their CPU time shows
	// on the client's clock while it waits.
	self := unix.Gettid()
	if tids, err := linux.Tasks(os.Getpid()); err == nil {
		for _, tid := range tids {
			if tid == self {
				continue
			}
			if err := linux.SetFIFO(tid, prio); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
			if err := linux.SetAffinity(tid, cpu); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
		}
	}
	if err := linux.SetFIFO(0, prio); err != nil {
		return err
	}
	if err := ready(self); err != nil {
		return err
	}
	// From here on this thread runs only when dispatched.
	if err := linux.SetAffinity(0, cpu); err != nil {
		return err
	}
	err := syscall.Exec(path, argv, env)
	return fmt.Errorf("execve %s: %w", path, err)
}

// Adopt takes process pid, which tcs did not start (tcs attach), as a
// client: its thread tid has put every thread of the process at ℓ3 and is
// moving onto the simulation CPU (gateAndExec). Its exit is watched on its
// pidfd; its exit status goes to its own parent.
func (m *Mechanism) Adopt(pid, tid int, name string) (_ *Proc, err error) {
	p := &Proc{Pid: pid, Name: name, pidfd: -1, execFd: -1, clk: linux.ProcessCPUClock(pid), adopted: true}
	defer func() {
		if err != nil {
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
	if err = waitGated(pid, tid, m.conf.CPU); err != nil {
		return nil, fmt.Errorf("attach client %q (pid %d): %w", name, pid, err)
	}
	if err = m.register(p); err != nil {
		return nil, fmt.Errorf("attach client %q: %w", name, err)
	}
	return p, nil
}
