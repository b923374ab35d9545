package test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

// killSeed seeds TestKill's instants; TCS_KILL_SEED replaces it to try
// other instants, and a failure is replayed by running with the seed it
// logged (and TCS_KILL_PHASES, the phase boundaries it logged).
const killSeed = 19

// killsPerSignal is how many runs each signal ends (TCS_KILL_N replaces it).
const killsPerSignal = 20

// killScenario is the scenario TestKill runs: three native clients for
// 0.5 s of virtual time.
const killScenario = "testdata/kill.yaml"

// killClients are its clients, the logs its output folder may hold.
var killClients = []string{"pd", "pd2", "planner"}

// The phases of a run a kill can land in.
const (
	phaseStartup  = "start-up" // before virtual time began
	phaseMidRun   = "mid-run"
	phaseShutdown = "shutdown" // after the dispatch loop ended
	phaseExited   = "exited"   // tcs had exited before the signal
	// tcs waited for another run's lock on the simulation CPU: it ends
	// once it has the lock (after --wait at most).
	phaseLockWait = "lock wait"
)

// A kill is one run of killScenario ended by a signal at a given instant
// after tcs started.
type kill struct {
	n       int
	sig     string        // SIGINT, SIGTERM, SIGKILL or SIGSTOP+SIGKILL
	aim     string        // the phase the instant was drawn in
	at      time.Duration // since tcs started, or since its shutdown began
	stopFor time.Duration // SIGSTOP+SIGKILL: how long tcs stays stopped
}

// TestKill sends SIGINT, SIGTERM, SIGKILL and SIGSTOP-then-SIGKILL to tcs
// at seeded random instants of a run, drawn in turn from its start-up,
// its middle and its shutdown (their boundaries are measured on a first,
// uninterrupted run), and checks what each leaves: no process of the run
// alive, no new task at a real-time priority, a readable recording (a
// complete one after SIGINT and SIGTERM, a prefix after SIGKILL), no
// temporary file, and after SIGINT and SIGTERM a summary that says how the
// run ended (DESIGN §7).
func TestKill(t *testing.T) {
	needRT(t)
	seed := uint64(killSeed)
	if s := os.Getenv("TCS_KILL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TCS_KILL_SEED=%q: %v", s, err)
		}
		seed = v
	}
	n := killsPerSignal
	if s := os.Getenv("TCS_KILL_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("TCS_KILL_N=%q: want a positive count", s)
		}
		n = v
	}
	// Orphans of a killed tcs are reparented to this process, where
	// leftovers finds them whatever their process group or session.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("prctl PR_SET_CHILD_SUBREAPER: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	rtBefore := rtTasks()
	ph, cpu := killPhases(t)
	tmpBefore := tempEntries()
	t.Logf("seed %d (TCS_KILL_SEED), %d kills per signal; phases (TCS_KILL_PHASES) %s",
		seed, n, ph)
	rng := rand.New(rand.NewPCG(seed, 0))
	sigs := []string{"SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP+SIGKILL"}
	var kills []kill
	for i := range n {
		for _, sig := range sigs {
			k := kill{n: len(kills), sig: sig, aim: []string{phaseStartup, phaseMidRun, phaseShutdown}[i%3]}
			lo, hi := ph.window(k.aim)
			k.at = lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
			if k.aim == phaseShutdown {
				// Counted from the start of the run's own shutdown:
				// the runs' lengths vary more than a shutdown lasts.
				k.at -= lo
			}
			if sig == "SIGSTOP+SIGKILL" {
				k.stopFor = time.Duration(rng.Int64N(int64(500*time.Millisecond))) + 10*time.Millisecond
			}
			kills = append(kills, k)
		}
	}

	// seen counts, per signal, the phases the kills landed in and what
	// the user was left with.
	seen := map[string]map[string]int{}
	outcomes := map[string]map[string]int{}
	for _, sig := range sigs {
		seen[sig], outcomes[sig] = map[string]int{}, map[string]int{}
	}
	t0 := time.Now()
	for _, k := range kills {
		waitCPU(t, cpu)
		phase, outcome := runKill(t, k, cpu, rtBefore, tmpBefore)
		seen[k.sig][phase]++
		outcomes[k.sig][outcome]++
	}
	for _, sig := range sigs {
		t.Logf("%s: landed in %v; left %v", sig, seen[sig], outcomes[sig])
	}
	t.Logf("%d kills in %.1f s", len(kills), time.Since(t0).Seconds())
	for _, p := range []string{phaseStartup, phaseMidRun, phaseShutdown} {
		total := 0
		for _, sig := range sigs {
			total += seen[sig][p]
		}
		if total == 0 && len(kills) >= 3*len(sigs) {
			t.Errorf("no kill landed in the %s phase", p)
		}
	}
}

// phases are the instants (since tcs started) at which a run's virtual
// time began, its dispatch loop ended and tcs exited.
type phases struct{ loop, end, exit time.Duration }

func (p phases) String() string {
	return fmt.Sprintf("%d,%d,%d (ms: virtual time began, loop ended, tcs exited)",
		p.loop.Milliseconds(), p.end.Milliseconds(), p.exit.Milliseconds())
}

// window is the interval of instants of phase name.
func (p phases) window(name string) (lo, hi time.Duration) {
	switch name {
	case phaseStartup:
		return 0, p.loop
	case phaseMidRun:
		return p.loop, p.end
	}
	return p.end, p.exit
}

// killPhases measures the phases of an uninterrupted run of killScenario
// (or takes them from TCS_KILL_PHASES, "loop,end,exit" in ms) and returns
// them with the simulation CPU the run used.
func killPhases(t *testing.T) (phases, int) {
	t.Helper()
	cpu := 1
	if s := os.Getenv("TCS_KILL_PHASES"); s != "" {
		var ms [3]int64
		if _, err := fmt.Sscanf(s, "%d,%d,%d", &ms[0], &ms[1], &ms[2]); err != nil || ms[0] > ms[1] || ms[1] > ms[2] {
			t.Fatalf("TCS_KILL_PHASES=%q: want loop,end,exit in ms, increasing", s)
		}
		return phases{time.Duration(ms[0]) * time.Millisecond, time.Duration(ms[1]) * time.Millisecond,
			time.Duration(ms[2]) * time.Millisecond}, cpu
	}
	waitCPU(t, cpu)
	cmd, out, buf, start, done := startKillRun(t)
	var p phases
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(2 * time.Minute)
	for p.exit == 0 {
		select {
		case err := <-done:
			p.exit = time.Since(start)
			if err != nil {
				t.Fatalf("the uninterrupted run failed: %v\n%s", err, buf.String())
			}
		case <-tick.C:
			e := readLog(out)
			if p.loop == 0 && e.started == len(killClients) {
				p.loop = time.Since(start)
			}
			if p.loop != 0 && p.end == 0 && e.shutdown() {
				p.end = time.Since(start)
			}
			if e.cpu >= 0 {
				cpu = e.cpu
			}
		case <-timeout:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("the uninterrupted run did not end within 2 min\n%s", buf.String())
		}
	}
	if p.loop == 0 || p.end < p.loop {
		t.Fatalf("phases %s not seen in tcs.log", p)
	}
	return p, cpu
}

// runLog is what a run's tcs.log says about how far it got.
type runLog struct {
	pids    []int // tcs, its clients
	started int   // clients started
	cpu     int   // the simulation CPU, -1 if not logged yet
}

// shutdown says whether the run's shutdown has begun: once its dispatch
// loop ends, tcs ends the clients (tcs.log says so only later), so the
// first client gone marks it. It asks kill(pid, 0), which never waits: reading
// /proc/PID/stat of a process inside its exec can wait for the exec.
func (e runLog) shutdown() bool {
	if e.started < len(killClients) {
		return false
	}
	for _, pid := range e.pids[1:] {
		if errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			return true
		}
	}
	return false
}

func readLog(out string) runLog {
	e := runLog{cpu: -1}
	b, err := os.ReadFile(filepath.Join(out, "tcs.log"))
	if err != nil {
		return e
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var l struct {
			Message string `json:"message"`
			Pid     int    `json:"pid"`
			CPU     int    `json:"cpu"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch l.Message {
		case "coordinator started":
			// tcs first: shutdown looks at the others.
			e.pids = append(e.pids, l.Pid)
			e.cpu = l.CPU
		case "started":
			e.pids = append(e.pids, l.Pid)
			e.started++
		}
	}
	return e
}

// waitCPU waits (up to 10 min) until no run holds the simulation CPU's
// lock, so that a kill's instant falls in its own run and not in a wait
// for another's.
func waitCPU(t *testing.T, cpu int) {
	t.Helper()
	l, err := linux.LockCPU(cpu, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Unlock()
}

// lockHolder is the pid the simulation CPU's lock file names (0: none).
func lockHolder(cpu int) int {
	b, _ := os.ReadFile(linux.LockPath(cpu))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// startKillRun starts tcs on killScenario: it returns the process, its
// --out folder, its output, when it started and a channel that gets
// Wait's result.
func startKillRun(t *testing.T) (cmd *exec.Cmd, out string, buf *bytes.Buffer, start time.Time, done chan error) {
	t.Helper()
	out = t.TempDir()
	cmd = exec.Command(tcsBin, "run", killScenario, "--out", out, "--quiet", "--wait", "10m")
	buf = new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	done = make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, out, buf, start, done
}

// runKill runs killScenario, sends k's signal at k's instant and checks
// what the run left. It returns the phase the signal landed in and what a
// user sees of the run.
func runKill(t *testing.T, k kill, cpu int, rtBefore map[task]string, tmpBefore map[string]bool) (phase, outcome string) {
	t.Helper()
	cmd, out, buf, start, done := startKillRun(t)
	tcsPid := cmd.Process.Pid
	where := fmt.Sprintf("kill %d: %s at %v (aimed at %s)", k.n, k.sig, k.at.Round(time.Microsecond), k.aim)
	if k.aim == phaseShutdown {
		where = fmt.Sprintf("kill %d: %s %v after shutdown began", k.n, k.sig, k.at.Round(time.Microsecond))
	}
	if k.stopFor > 0 {
		where += fmt.Sprintf(", stopped for %v", k.stopFor.Round(time.Microsecond))
	}
	bad := false // an error of this kill: its logs are shown
	errorf := func(format string, args ...any) {
		t.Helper()
		bad = true
		t.Errorf(format, args...)
	}

	var (
		waitErr error
		exited  bool
	)
	from := start
	if k.aim == phaseShutdown {
		// The shutdown begins when the first child of the run ends.
		for !exited && !readLog(out).shutdown() {
			select {
			case waitErr = <-done:
				exited = true
			case <-time.After(time.Millisecond):
			}
		}
		from = time.Now()
	}
	if !exited {
		select {
		case waitErr = <-done:
			exited = true
		case <-time.After(time.Until(from.Add(k.at))):
		}
	}
	if exited {
		phase = phaseExited
	} else {
		// What tcs.log and /proc say just before the signal: the phase it
		// lands in, to within the time a log line or an exit takes to
		// show (a summary that says the run completed corrects it below).
		logged := readLog(out)
		phase = phaseMidRun
		if len(logged.pids) == 0 && lockHolder(cpu) > 0 && lockHolder(cpu) != tcsPid {
			phase = phaseLockWait
		} else if logged.started < len(killClients) {
			phase = phaseStartup
		} else if logged.shutdown() {
			phase = phaseShutdown
		}
		var serr error
		switch k.sig {
		case "SIGINT":
			serr = cmd.Process.Signal(syscall.SIGINT)
		case "SIGTERM":
			serr = cmd.Process.Signal(syscall.SIGTERM)
		case "SIGKILL":
			serr = cmd.Process.Signal(syscall.SIGKILL)
		case "SIGSTOP+SIGKILL":
			serr = errors.Join(cmd.Process.Signal(syscall.SIGSTOP), sleepThen(k.stopFor, func() error {
				return cmd.Process.Signal(syscall.SIGKILL)
			}))
		}
		if errors.Is(serr, os.ErrProcessDone) {
			phase = phaseExited
		} else if serr != nil {
			errorf("%s: %v", where, serr)
		}
		signaled := time.Now()
		select {
		case waitErr = <-done:
		case <-time.After(3 * time.Second):
			// Where tcs and its children hang, to explain it.
			t.Logf("%s: tcs has not exited 3 s after the signal:\n%s", where, threadDump(append([]int{tcsPid}, readLog(out).pids...)))
			select {
			case waitErr = <-done:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				waitErr = <-done
				errorf("%s: tcs did not exit within 1 min of the signal\n%s", where, buf.String())
			}
		}
		// Ending the clients takes their SIGTERM's grace at most.
		if d := time.Since(signaled); d > 10*time.Second && phase != phaseLockWait {
			errorf("%s: tcs took %.1f s to exit after the signal\n%s", where, d.Seconds(), buf.String())
		}
	}
	wall := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode() // -1: killed by a signal
	} else if waitErr != nil {
		t.Fatalf("%s: %v", where, waitErr)
	}

	if strings.HasSuffix(k.sig, "SIGKILL") && phase != phaseExited && code != -1 {
		var s report.Summary
		if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err == nil && code == 0 &&
			json.Unmarshal(b, &s) == nil && s.Ended == report.EndCompleted {
			// tcs had ended the run and exited as the signal came.
			phase = phaseExited
		} else {
			errorf("%s: tcs exited with %d, not killed by the signal\n%s", where, code, buf.String())
		}
	}
	final := readLog(out)
	pids := append([]int{tcsPid}, final.pids...)
	for _, l := range leftovers(pids) {
		errorf("%s: alive afterwards: %s", where, l)
	}
	// A dying task keeps its policy until it is gone: give the run's up
	// to 5 s to go.
	rt := rtTasks()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); rt = rtTasks() {
		mine := false
		for tk := range rt {
			if _, ok := rtBefore[tk]; !ok && (slices.Contains(pids, tk.pid) || ofThisTest(tk.pid)) {
				mine = true
			}
		}
		if !mine {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	foreign := map[int]bool{}
	for tk, desc := range rt {
		if _, ok := rtBefore[tk]; ok {
			continue
		}
		if slices.Contains(pids, tk.pid) || ofThisTest(tk.pid) {
			errorf("%s: at a real-time priority afterwards: %s", where, desc)
		} else {
			foreign[tk.pid] = true
		}
	}
	if len(foreign) > 0 {
		// Another program's (another run of tcs on this machine): not
		// this run's, so only counted.
		t.Logf("%s: %d processes of other programs at a real-time priority", where, len(foreign))
	}
	for _, f := range strayFiles(out) {
		errorf("%s: temporary or unexpected file left: %s", where, f)
	}
	for e := range tempEntries() {
		if !tmpBefore[e] && strings.Contains(e, "tcs") {
			t.Logf("%s: new in a temporary folder (this run's or another program's): %s", where, e)
			tmpBefore[e] = true
		}
	}

	rec := "no recording"
	if st, err := os.Stat(filepath.Join(out, "run.mcap")); err == nil {
		f, err := record.Read(filepath.Join(out, "run.mcap"), nil)
		switch {
		case err != nil:
			errorf("%s: run.mcap (%d bytes) unreadable: %v", where, st.Size(), err)
			rec = "unreadable recording"
		case f.Complete:
			rec = "complete recording"
		default:
			rec = "recording prefix"
			// A file longer than two chunks has at least one whole chunk.
			if st.Size() > 2*record.DefaultChunkSize && f.Messages == 0 {
				errorf("%s: run.mcap (%d bytes) cut short with no message read: %v", where, st.Size(), f.TruncatedErr)
			}
			if k.sig == "SIGINT" || k.sig == "SIGTERM" {
				errorf("%s: run.mcap (%d bytes) not closed: %v", where, st.Size(), f.TruncatedErr)
			}
		}
	}
	ended := "no summary"
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		s := readSummary(t, out)
		ended = fmt.Sprintf("ended %q", s.Ended)
		if s.Ended != report.EndInterrupted && s.Ended != report.EndCompleted {
			errorf("%s: summary.json says ended %q", where, s.Ended)
		}
		if s.Ended == report.EndCompleted && phase == phaseStartup {
			errorf("%s: summary.json says completed, but the signal came in %s", where, phase)
		}
		if s.Ended == report.EndCompleted && phase == phaseMidRun {
			// The loop had ended: the signal came in its shutdown.
			phase = phaseShutdown
		}
	} else if k.sig == "SIGINT" || k.sig == "SIGTERM" {
		// Before tcs created its log (the Go runtime starting, the
		// scenario loading), the signal's default action ends it: no
		// run had begun, nothing is left to end.
		if _, err := os.Stat(filepath.Join(out, "tcs.log")); err == nil {
			errorf("%s: no summary.json after %s in %s (exit %d)\n%s", where, k.sig, phase, code, buf.String())
		}
	}
	if bad {
		logs, _ := filepath.Glob(filepath.Join(out, "logs", "*.log"))
		for _, f := range append([]string{filepath.Join(out, "tcs.log")}, logs...) {
			b, _ := os.ReadFile(f)
			t.Logf("%s: %s:\n%s", where, f, b)
		}
	}
	outcome = fmt.Sprintf("%s: exit %d, %s, %s", phase, code, ended, rec)
	t.Logf("%s: landed in %s, %s (%.2f s)", where, phase, outcome, wall.Seconds())
	return phase, outcome
}

// leftovers returns, after waiting up to 5 s for them to end, the live
// processes tied to a killed run: pids (tcs and its clients from its
// tcs.log), any process running this test's tcs binary (the trampoline and
// clients are all exec'ed from it, so this also finds one started after
// its pid was logged), and any process of this
// test's own children other than tcs: the orphans of a killed tcs, which
// this process (a child subreaper) inherits. It reaps those orphans.
func leftovers(pids []int) []string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var live []string
		for pid, desc := range runProcs(pids) {
			live = append(live, fmt.Sprintf("%d %s", pid, desc))
		}
		if len(live) == 0 || time.Now().After(deadline) {
			slices.Sort(live)
			return live
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runProcs maps each live process of a run (see leftovers) to its
// description, and reaps the zombies among this process's children.
func runProcs(pids []int) map[int]string {
	live := map[int]string{}
	all, _ := linux.Pids()
	for _, pid := range all {
		st, err := linux.ReadStat(pid, 0)
		if err != nil {
			continue
		}
		if st.PPid == os.Getpid() && st.State == 'Z' {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			continue
		}
		if (st.State == 'Z' || st.State == 'X') && !liveThread(pid) {
			continue
		}
		if slices.Contains(pids, pid) || st.PPid == os.Getpid() || ofThisTest(pid) {
			live[pid] = describe(pid, st)
		}
	}
	return live
}

// liveThread says whether a thread of process pid is not yet a zombie (a
// process whose main thread has exited while another is still exiting).
func liveThread(pid int) bool {
	tids, _ := linux.Tasks(pid)
	for _, tid := range tids {
		if st, err := linux.ReadStat(pid, tid); err == nil && st.State != 'Z' && st.State != 'X' {
			return true
		}
	}
	return false
}

// ofThisTest says whether process pid runs this test's tcs binary.
func ofThisTest(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && strings.TrimSuffix(exe, " (deleted)") == tcsBin
}

func describe(pid int, st linux.Stat) string {
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return fmt.Sprintf("(%s, state %c, ppid %d, pgrp %d, policy %d prio %d): %s", st.Comm, st.State, st.PPid, st.PGrp,
		st.Policy, st.RTPriority, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
}

// A task is a thread of a process.
type task struct{ pid, tid int }

// rtTasks maps every live task on the machine at a real-time policy
// (SCHED_FIFO or SCHED_RR: field 41 of /proc/PID/task/TID/stat) to its
// description.
func rtTasks() map[task]string {
	rt := map[task]string{}
	pids, _ := linux.Pids()
	for _, pid := range pids {
		tids, _ := linux.Tasks(pid)
		for _, tid := range tids {
			st, err := linux.ReadStat(pid, tid)
			if err != nil || st.State == 'Z' || st.State == 'X' {
				continue
			}
			if st.Policy == linux.SchedFIFO || st.Policy == linux.SchedRR {
				rt[task{pid, tid}] = fmt.Sprintf("thread %d of %d %s", tid, pid, describe(pid, st))
			}
		}
	}
	return rt
}

// strayFiles lists what a run's output folder holds besides tcs.log,
// run.mcap, summary.json and logs/ with each client's and the detector's
// log: a temporary file (summary.json is written through one) or anything
// else.
func strayFiles(out string) []string {
	want := map[string]bool{"tcs.log": true, "run.mcap": true, "summary.json": true, "logs": true}
	for _, c := range append(slices.Clone(killClients), "detector") {
		want[filepath.Join("logs", c+".log")] = true
	}
	var stray []string
	_ = filepath.WalkDir(out, func(path string, _ os.DirEntry, err error) error {
		rel, _ := filepath.Rel(out, path)
		if err == nil && rel != "." && !want[rel] {
			stray = append(stray, rel)
		}
		return nil
	})
	return stray
}

// tempEntries lists the entries of the machine's temporary folders.
func tempEntries() map[string]bool {
	m := map[string]bool{}
	for _, dir := range []string{os.TempDir(), "/dev/shm", "/run/tcs"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			m[filepath.Join(dir, e.Name())] = true
		}
	}
	return m
}

// sleepThen sleeps for d, then calls fn.
func sleepThen(d time.Duration, fn func() error) error {
	time.Sleep(d)
	return fn()
}

// threadDump describes every thread of pids: state, policy, CPU, what it
// waits on (wchan, syscall) and its kernel stack.
func threadDump(pids []int) string {
	var b strings.Builder
	for _, pid := range slices.Compact(pids) {
		tids, _ := linux.Tasks(pid)
		for _, tid := range tids {
			st, err := linux.ReadStat(pid, tid)
			if err != nil {
				continue
			}
			dir := fmt.Sprintf("/proc/%d/task/%d/", pid, tid)
			wchan, _ := os.ReadFile(dir + "wchan")
			sysc, _ := os.ReadFile(dir + "syscall")
			stack, _ := os.ReadFile(dir + "stack")
			fmt.Fprintf(&b, "%d/%d %s state %c policy %d prio %d cpu %d wchan %s syscall %s\n%s", pid, tid, st.Comm, st.State,
				st.Policy, st.RTPriority, st.Processor, wchan, strings.TrimSpace(string(sysc)), stack)
		}
	}
	return b.String()
}
