package test

// Hostile clients (issue 19, part 3; DESIGN §7). Each TestChaos* runs `tcs
// run` on a scenario of testdata/chaos/ in which a chaos client
// (test/chaos, and its C twin test/chaos/c/chaos.c) misbehaves on a robot
// of its own beside a well-behaved PD controller, and checks what the run
// left (checkChaos): the run went on or ended as on_exit says, summary.json
// is complete and consistent, run.mcap reads to its end and agrees with
// it, and afterwards no process of the run is alive and no task of it is
// at a real-time priority. The scenarios name the client `chaos`: the test
// puts the Go or the C build first on PATH.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/msgs/cdr"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

// chaosLang is one build of the chaos client: dir holds it as "chaos".
type chaosLang struct{ name, dir string }

var chaosBuild struct {
	once  sync.Once
	langs []chaosLang
	err   error
	skipC string // why the C build is missing
}

// chaosLangs builds the chaos client in Go and in C (once per test
// binary, next to tcsBin) and returns the builds; the C one is left out,
// with a log line, when there is no C compiler.
func chaosLangs(t *testing.T) []chaosLang {
	t.Helper()
	b := &chaosBuild
	b.once.Do(func() {
		root := filepath.Dir(tcsBin)
		goDir := filepath.Join(root, "chaos-go")
		if out, err := exec.Command("go", "build", "-o", filepath.Join(goDir, "chaos"), "./chaos").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build ./chaos: %v\n%s", err, out)
			return
		}
		b.langs = append(b.langs, chaosLang{"go", goDir})
		cc, err := exec.LookPath("cc")
		if err != nil {
			b.skipC = "no C compiler (cc): the C chaos client is not tested"
			return
		}
		cDir := filepath.Join(root, "chaos-c")
		if err := os.MkdirAll(cDir, 0o755); err != nil {
			b.err = err
			return
		}
		if out, err := exec.Command(cc, "-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11", "-pthread",
			"-I", "../coordinator/native", "-o", filepath.Join(cDir, "chaos"), "chaos/c/chaos.c", "-lm").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("cc chaos/c/chaos.c: %v\n%s", err, out)
			return
		}
		b.langs = append(b.langs, chaosLang{"c", cDir})
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	if b.skipC != "" {
		t.Log(b.skipC)
	}
	return b.langs
}

// ofChaos says whether process pid runs a chaos client build.
func ofChaos(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	for _, l := range chaosBuild.langs {
		if exe == filepath.Join(l.dir, "chaos") {
			return true
		}
	}
	return false
}

// chaosSetup makes the test process a child subreaper for the test (the
// orphans of a run, grandchildren that left their parent, become its
// children, where checkChaos finds them) and returns the real-time tasks
// the machine had before.
func chaosSetup(t *testing.T) map[task]string {
	t.Helper()
	needRT(t)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("prctl PR_SET_CHILD_SUBREAPER: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	return rtTasks()
}

// chaosScenario writes testdata/chaos/name with each old string of
// replace (pairs old, new) replaced, and returns its path. Each old string
// must occur exactly once: a scenario edited out of step with its test
// fails here.
func chaosScenario(t *testing.T, name string, replace ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "chaos", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(replace); i += 2 {
		if n := strings.Count(s, replace[i]); n != 1 {
			t.Fatalf("testdata/chaos/%s: %q occurs %d times, want once", name, replace[i], n)
		}
		s = strings.Replace(s, replace[i], replace[i+1], 1)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// chaosRun is a `tcs run` in progress.
type chaosRun struct {
	scen   string
	cmd    *exec.Cmd
	out    string
	buf    *bytes.Buffer
	done   chan error
	cancel context.CancelFunc
}

// startChaos starts `tcs run scen` with lang's chaos client first on PATH.
// The run is bounded: tcs is killed after timeout.
func startChaos(t *testing.T, lang chaosLang, scen string, timeout time.Duration) *chaosRun {
	t.Helper()
	r := &chaosRun{scen: scen, out: t.TempDir(), buf: new(bytes.Buffer), done: make(chan error, 1)}
	var ctx context.Context
	ctx, r.cancel = context.WithTimeout(context.Background(), timeout)
	r.cmd = exec.CommandContext(ctx, tcsBin, "run", scen, "--out", r.out, "--quiet", "--wait", "10m")
	env := slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "PATH=") })
	r.cmd.Env = append(env, "PATH="+lang.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	r.cmd.Stdout, r.cmd.Stderr = r.buf, r.buf
	if err := r.cmd.Start(); err != nil {
		r.cancel()
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		r.cancel()
		<-r.done
	})
	return r
}

// wait waits for tcs to exit and reads its summary.
func (r *chaosRun) wait(t *testing.T) result {
	t.Helper()
	err := <-r.done
	r.done <- err // for the cleanup
	res := result{out: r.buf.String(), outDir: r.out}
	if ee, ok := err.(*exec.ExitError); ok {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("tcs run %s: %v\n%s", r.scen, err, res.out)
	}
	if res.code == -1 {
		t.Fatalf("tcs run %s was killed (its time was up?)\n%s", r.scen, res.out)
	}
	if _, err := os.Stat(filepath.Join(r.out, "summary.json")); err != nil {
		t.Fatalf("tcs run %s exited %d without a summary\n%s\n%s", r.scen, res.code, res.out, warnings(r.out))
	}
	res.sum = readSummary(t, r.out)
	return res
}

// running says whether tcs has not exited yet.
func (r *chaosRun) running() bool {
	select {
	case err := <-r.done:
		r.done <- err
		return false
	default:
		return true
	}
}

// chaosEvent is one "chaos: event key=value ..." line of a chaos log.
type chaosEvent struct {
	name string
	kv   map[string]string
}

// chaosEvents reads the events of the chaos log at path.
func chaosEvents(path string) []chaosEvent {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var evs []chaosEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "chaos: ")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		ev := chaosEvent{name: fields[0], kv: map[string]string{}}
		for _, f := range fields[1:] {
			if k, v, ok := strings.Cut(f, "="); ok {
				ev.kv[k] = v
			}
		}
		evs = append(evs, ev)
	}
	return evs
}

// event returns the first event called name, if any.
func event(evs []chaosEvent, name string) (chaosEvent, bool) {
	for _, e := range evs {
		if e.name == name {
			return e, true
		}
	}
	return chaosEvent{}, false
}

// waitEvent waits until the chaos log at path has event name (false if
// the run ended first, or after a minute).
func (r *chaosRun) waitEvent(path, name string) (chaosEvent, bool) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		running := r.running()
		if e, ok := event(chaosEvents(path), name); ok {
			return e, true
		}
		if !running {
			return chaosEvent{}, false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return chaosEvent{}, false
}

// checkChaos checks what a run of scenario scen left in res (DESIGN §7),
// and ends what it left alive: summary.json is complete and consistent
// with the scenario, run.mcap is complete, reads to its end and agrees with
// the summary, and no process of the run (tcs's clients, the
// processes the chaos client says it forked, any orphan of the run, any
// process of the chaos or tcs binaries) is alive or has a task at a
// real-time priority that rtBefore did not have.
func checkChaos(t *testing.T, scen string, res result, rtBefore map[task]string) {
	t.Helper()
	if strings.Contains(res.out, "panic:") || strings.Contains(res.out, "goroutine ") {
		t.Errorf("tcs panicked:\n%s", res.out)
	}
	sc, err := config.Load(scen)
	if err != nil {
		t.Fatal(err)
	}
	checkChaosSummary(t, sc, res.sum)
	checkChaosRecording(t, filepath.Join(res.outDir, "run.mcap"), res.sum)
	checkChaosLeft(t, res.outDir, rtBefore)
}

// checkChaosSummary checks that summary s is complete and consistent with
// scenario sc.
func checkChaosSummary(t *testing.T, sc *config.Scenario, s *report.Summary) {
	t.Helper()
	if s.Ended == report.EndRunning {
		t.Errorf("summary.json: ended is empty")
	}
	if s.Scenario != sc.Name || s.Mode != sc.Mode.String() {
		t.Errorf("summary.json: scenario %q mode %q, want %q %q", s.Scenario, s.Mode, sc.Name, sc.Mode)
	}
	if dur := sc.Duration.Seconds(); s.VirtualS < 0 || s.VirtualS > dur+sc.Dynamics.Step.Seconds() {
		t.Errorf("summary.json: virtual_s %g outside [0, %g]", s.VirtualS, dur)
	}
	if s.Recording == nil {
		t.Errorf("summary.json: no recording")
	}
	var want []config.Client
	for _, rb := range sc.Robots {
		want = append(want, rb.Clients...)
	}
	if len(s.Clients) != len(want) {
		t.Fatalf("summary.json: %d clients, the scenario has %d", len(s.Clients), len(want))
	}
	for i, c := range s.Clients {
		w := want[i]
		if c.Name != w.Name || c.Class != w.Class.String() {
			t.Errorf("summary.json: client %d is %q (%s), want %q (%s)", i, c.Name, c.Class, w.Name, w.Class)
		}
		if _, err := os.Stat(c.Log); err != nil {
			t.Errorf("%s: log: %v", c.Name, err)
		}
		if c.CPUS < 0 || c.ProgressS < 0 || c.LeakS < 0 {
			t.Errorf("%s: negative cpu_s %g, progress_s %g or leak_s %g", c.Name, c.CPUS, c.ProgressS, c.LeakS)
		}
		if w.Class != config.ClassPeriodic {
			continue
		}
		l := c.PeriodsLost
		if l == nil {
			t.Errorf("%s: no periods_lost", c.Name)
			continue
		}
		if c.Activations-c.ActivationsExtra+l.Total != c.Periods {
			t.Errorf("%s: %d activations (%d extra) + %d lost ≠ %d periods", c.Name, c.Activations, c.ActivationsExtra, l.Total, c.Periods)
		}
		if l.BeforeStart+l.AfterExit+l.Overrun+l.Host != l.Total {
			t.Errorf("%s: lost causes %+v do not add up to their total", c.Name, *l)
		}
		if max := int64(s.VirtualS/w.Period.Seconds()+1e-9) + 1; c.Periods > max {
			t.Errorf("%s: %d periods in %g s at %v", c.Name, c.Periods, s.VirtualS, w.Period)
		}
	}
}

// checkChaosRecording checks that the recording at path is complete, reads
// to its end, and holds what summary s says it does.
func checkChaosRecording(t *testing.T, path string, s *report.Summary) {
	t.Helper()
	counts := map[string]int64{}
	f, err := record.Read(path, func(ch *record.ReadChannel, m *mcap.Message) error {
		counts[ch.Topic]++
		return nil
	})
	if err != nil {
		t.Errorf("run.mcap: %v", err)
		return
	}
	if !f.Complete {
		t.Errorf("run.mcap not complete: %v", f.TruncatedErr)
	}
	if s.Recording == nil {
		return
	}
	if f.Messages != s.Recording.Messages {
		t.Errorf("run.mcap holds %d messages, summary.json says %d", f.Messages, s.Recording.Messages)
	}
	for _, tp := range s.Recording.Topics {
		if counts[tp.Topic] != tp.Messages {
			t.Errorf("run.mcap: %s has %d messages, summary.json says %d", tp.Topic, counts[tp.Topic], tp.Messages)
		}
	}
	if _, ok := f.Attachments["summary.json"]; !ok {
		t.Errorf("run.mcap has no summary.json attachment")
	}
	if got := f.Metadata["tcs"]["ended"]; got != s.Ended {
		t.Errorf("run.mcap metadata says ended %q, summary.json %q", got, s.Ended)
	}
}

// checkChaosLeft checks, within 5 s, that no process of the run in out is
// alive and that no task of it is at a real-time priority that rtBefore
// did not list; then it ends what is left (SIGKILL by pid), so that the
// next run starts clean.
func checkChaosLeft(t *testing.T, out string, rtBefore map[task]string) {
	t.Helper()
	pids := childPids(t, out)
	logs, _ := filepath.Glob(filepath.Join(out, "logs", "*.log"))
	for _, l := range logs {
		for _, e := range chaosEvents(l) {
			if e.name != "child" && e.name != "forked" {
				continue
			}
			for _, k := range []string{"pid", "leader"} {
				if pid, err := strconv.Atoi(e.kv[k]); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	var live map[int]string
	deadline := time.Now().Add(5 * time.Second)
	for {
		live = runProcs(pids)
		for _, pid := range allPids() {
			if ofChaos(pid) && alive(pid) {
				live[pid] = "chaos client"
			}
		}
		if len(live) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for pid, desc := range live {
		st, err := linux.ReadStat(pid, 0)
		if err == nil {
			desc = describe(pid, st)
		}
		t.Errorf("alive after the run: %d %s", pid, desc)
	}
	for tk, desc := range rtTasks() {
		if _, ok := rtBefore[tk]; ok {
			continue
		}
		if slices.Contains(pids, tk.pid) || live[tk.pid] != "" || ofThisTest(tk.pid) || ofChaos(tk.pid) {
			t.Errorf("at a real-time priority after the run: %s", desc)
		}
	}
	for pid := range live {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	if len(live) > 0 {
		time.Sleep(100 * time.Millisecond)
		runProcs(nil) // reaps the orphans that were ours
	}
}

// allPids lists every process on the machine.
func allPids() []int {
	pids, _ := linux.Pids()
	return pids
}

// checkWellBehaved checks the accounting of the well-behaved controller pd
// (1 kHz) of a run that may have ended early: every period up to the end
// began an activation, or was lost before its start (its start-up's CPU is
// charged: a Go client's is tens of ms).
func checkWellBehaved(t *testing.T, s *report.Summary) {
	t.Helper()
	pd := client(t, s, "pd")
	l := pd.PeriodsLost
	if l == nil {
		t.Fatalf("pd: no periods_lost")
	}
	if l.Overrun != 0 || l.AfterExit != 0 || l.BeforeStart > 100 {
		t.Errorf("pd: periods lost %+v of %d: want none by overrun or exit", *l, pd.Periods)
	}
	if pd.ExitCode != nil {
		t.Errorf("pd: exited with %d", *pd.ExitCode)
	}
}

// TestChaosSpin: a native client that says hello and computes forever on
// a robot of its own. In consistent mode it is preempted at every quantum
// and charged: it keeps its robot's clock with the world, begins no
// activation after its first, and the controller beside it keeps every
// period. In lockstep (where its computation is free, so the
// world waits for it) the watchdog ends the run naming it; the plain
// spinner of TestWatchdogEndsAStalledRun is the same case without the
// protocol.
func TestChaosSpin(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		for _, mode := range []string{"consistent", "lockstep"} {
			t.Run(lang.name+"/"+mode, func(t *testing.T) {
				scen := chaosScenario(t, "spin.yaml", "mode: consistent", "mode: "+mode)
				run := startChaos(t, lang, scen, 2*time.Minute)
				res := run.wait(t)
				t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
				checkChaos(t, scen, res, rtBefore)
				if _, ok := event(chaosEvents(filepath.Join(res.outDir, "logs", "chaos.log")), "spin"); !ok {
					t.Fatalf("the chaos client never began to spin")
				}
				s := res.sum
				chaos := client(t, s, "chaos")
				if mode == "lockstep" {
					if res.code == 0 || !strings.HasPrefix(s.Ended, report.EndStalled) || !strings.Contains(s.Ended, `client "chaos"`) {
						t.Errorf("exit %d, ended %q: want a stall naming client \"chaos\"", res.code, s.Ended)
					}
					return
				}
				if res.code != 0 || s.Ended != report.EndCompleted {
					t.Fatalf("exit %d, ended %q", res.code, s.Ended)
				}
				checkPeriods(t, client(t, s, "pd"), 1001)
				// Charged: a runnable client is never behind the world.
				if chaos.ProgressS < s.VirtualS {
					t.Errorf("chaos: progress %g s behind the world's %g s", chaos.ProgressS, s.VirtualS)
				}
				// Its first activation never ends (or, as it never asked
				// for one, never began).
				if chaos.Activations > 1 {
					t.Errorf("chaos: %d activations: want at most one", chaos.Activations)
				}
				t.Logf("chaos: %.3f s CPU, progress %.3f s, %d activations of %d periods", chaos.CPUS, chaos.ProgressS, chaos.Activations, chaos.Periods)
			})
		}
	}
}

// TestChaosFlood: a best-effort client posts 100,000 messages per second of
// its own CPU on channel 1, which the controller beside it takes its
// target from (tcs client pd --plan). The run completes, the controller
// keeps every period, every message the client wrote reached tcs (it is
// recorded on /tcs/channel/1 or counted as dropped by the recorder), in the
// order written, stamped in order.
func TestChaosFlood(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		t.Run(lang.name, func(t *testing.T) {
			scen := chaosScenario(t, "flood.yaml")
			res := startChaos(t, lang, scen, 2*time.Minute).wait(t)
			t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
			checkChaos(t, scen, res, rtBefore)
			s := res.sum
			if res.code != 0 || s.Ended != report.EndCompleted {
				t.Fatalf("exit %d, ended %q", res.code, s.Ended)
			}
			checkPeriods(t, client(t, s, "pd"), 1001)
			var sent int64
			for _, e := range chaosEvents(filepath.Join(res.outDir, "logs", "chaos.log")) {
				if e.name == "flooded" {
					n, _ := strconv.ParseInt(e.kv["sent"], 10, 64)
					sent = max(sent, n)
				}
			}
			var recorded, dropped int64
			for _, tp := range s.Recording.Topics {
				if tp.Topic == "/tcs/channel/1" {
					recorded, dropped = tp.Messages, tp.Dropped
				}
			}
			seqs := floodSeqs(t, filepath.Join(res.outDir, "run.mcap"))
			chaos := client(t, s, "chaos")
			rate := float64(recorded+dropped) / max(chaos.CPUS, 1e-9)
			t.Logf("flood: %d messages logged sent, %d taken by tcs (%d recorded, %d dropped by the recorder) in %.3f s of the client's CPU: %.0f per CPU second",
				sent, recorded+dropped, recorded, dropped, chaos.CPUS, rate)
			if sent < 10_000 {
				t.Fatalf("the client logged %d messages sent: it did not flood", sent)
			}
			if recorded+dropped < sent {
				t.Errorf("tcs took %d messages, the client had written %d", recorded+dropped, sent)
			}
			// The client paces itself by its CPU clock, and is charged
			// that CPU: about 100,000 messages per second of it, less
			// what a write costs.
			if rate < 50_000 {
				t.Errorf("%.0f messages per second of the client's CPU, want about 100,000", rate)
			}
			if int64(len(seqs)) != recorded {
				t.Errorf("%d messages read on /tcs/channel/1, summary says %d recorded", len(seqs), recorded)
			}
			if dropped == 0 && int64(len(seqs)) > 0 && seqs[len(seqs)-1] != int64(len(seqs)) {
				t.Errorf("nothing dropped, but the last sequence number is %d of %d messages", seqs[len(seqs)-1], len(seqs))
			}
		})
	}
}

// floodSeqs reads the sequence numbers of the flood's messages on
// /tcs/channel/1 ([π, seq, cpu]) and checks they increase and their log
// times (stamps) do not decrease.
func floodSeqs(t *testing.T, path string) []int64 {
	t.Helper()
	var seqs []int64
	var last uint64
	_, err := record.Read(path, func(ch *record.ReadChannel, m *mcap.Message) error {
		if ch.Topic != "/tcs/channel/1" {
			return nil
		}
		r := cdr.NewReader(m.Data)
		if dims := r.Len(4); dims != 0 {
			return fmt.Errorf("message with %d layout dims", dims)
		}
		r.Uint32() // data_offset
		if n := r.Len(8); n != 3 {
			return fmt.Errorf("message of %d values, want 3", n)
		}
		_, seq := r.Float64(), r.Float64()
		if r.Err() != nil {
			return r.Err()
		}
		if k := int64(seq); len(seqs) > 0 && k <= seqs[len(seqs)-1] {
			return fmt.Errorf("sequence number %d after %d", k, seqs[len(seqs)-1])
		}
		if m.LogTime < last {
			return fmt.Errorf("message %d stamped %d ns after one stamped %d", int64(seq), m.LogTime, last)
		}
		last = m.LogTime
		seqs = append(seqs, int64(seq))
		return nil
	})
	if err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return seqs
}

// TestChaosThreads: a periodic native client that starts 1,000 threads,
// each blocked for good, then runs as a controller: the run completes, the
// client and the controller beside it keep every period after their
// start.
func TestChaosThreads(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		t.Run(lang.name, func(t *testing.T) {
			scen := chaosScenario(t, "threads.yaml")
			res := startChaos(t, lang, scen, 2*time.Minute).wait(t)
			t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
			checkChaos(t, scen, res, rtBefore)
			s := res.sum
			if res.code != 0 || s.Ended != report.EndCompleted {
				t.Fatalf("exit %d, ended %q", res.code, s.Ended)
			}
			e, ok := event(chaosEvents(filepath.Join(res.outDir, "logs", "chaos.log")), "threads")
			if n, _ := strconv.Atoi(e.kv["threads"]); !ok || n < 1001 {
				t.Fatalf("the chaos client did not start its threads: %v", e.kv)
			}
			t.Logf("chaos client: %s threads", e.kv["threads"])
			checkPeriods(t, client(t, s, "pd"), 4001)
			chaos := client(t, s, "chaos")
			if l := chaos.PeriodsLost; l.Overrun != 0 || l.AfterExit != 0 || chaos.Activations < chaos.Periods/2 {
				t.Errorf("chaos: %d activations of %d periods, lost %+v: want every period after its start-up", chaos.Activations, chaos.Periods, *l)
			}
		})
	}
}

// TestChaosFork: after three activations the chaos client forks a child
// that stays in its process group and, by a double fork and setsid, a
// grandchild in a session of its own; both sleep 30 s. Then it runs on to
// the end of the run (stay) or exits 0 at once (exit; on_exit: continue);
// or it runs on while both children first compute for 8 s of wall time,
// longer than the scenario's stall_timeout (spin). The run completes, the
// controller keeps every period, and once tcs has exited neither child is
// alive (issue 19: the run's cgroup ends every descendant). The children
// are none of tcs's clients: spinning, they must not hold the simulation
// CPU from the clients (they are born at the policy and priority the test
// logs: the forking thread's, SCHED_FIFO ℓ1, on the simulation CPU).
func TestChaosFork(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		for _, then := range []string{"stay", "exit", "spin"} {
			t.Run(lang.name+"/"+then, func(t *testing.T) {
				flags := "--then, " + then
				if then == "spin" {
					flags = "--then, stay, --spin, 8s"
				}
				scen := chaosScenario(t, "fork.yaml", "--then, stay", flags)
				res := startChaos(t, lang, scen, 2*time.Minute).wait(t)
				t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
				evs := chaosEvents(filepath.Join(res.outDir, "logs", "chaos.log"))
				forked := map[string]chaosEvent{}
				for _, e := range evs {
					switch e.name {
					case "forked":
						forked[e.kv["kind"]] = e
						t.Logf("forked: %v", e.kv)
					case "child": // when it got to run
						if e.kv["kind"] == "session" {
							forked["grandchild"] = e
						}
						t.Logf("child: %v", e.kv)
					}
				}
				hello, _ := event(evs, "hello")
				checkChaos(t, scen, res, rtBefore)
				g, okg := forked["group"]
				leader, okl := forked["leader"]
				if !okg || !okl {
					t.Fatalf("the chaos client did not fork both children: %v", forked)
				}
				if g.kv["pgid"] != hello.kv["pid"] {
					t.Errorf("the group child is in process group %s, not the client's %s", g.kv["pgid"], hello.kv["pid"])
				}
				if gc, ok := forked["grandchild"]; !ok {
					// Raised with the client, the kids share its turns, the
					// one that used CPU longest ago first: the leader runs
					// beside a child that computes and forks the
					// grandchild, which runs in its turn. Once the client
					// exited (exit), they wait at ℓ3 for the run's end.
					if then == "exit" {
						t.Logf("the session grandchild never ran during the run")
					} else {
						t.Errorf("the session grandchild never ran during the run")
					}
				} else if gc.kv["sid"] != leader.kv["pid"] || gc.kv["pgid"] != leader.kv["pid"] {
					t.Errorf("the session grandchild is not in its leader's session and group: %v", gc.kv)
				}
				s := res.sum
				if res.code != 0 || s.Ended != report.EndCompleted {
					t.Fatalf("exit %d, ended %q", res.code, s.Ended)
				}
				checkPeriods(t, client(t, s, "pd"), 1001)
				chaos := client(t, s, "chaos")
				if then == "exit" && (chaos.ExitCode == nil || *chaos.ExitCode != 0) {
					t.Errorf("chaos: exit code %s, want 0", fmtPtr(chaos.ExitCode))
				}
				// The children, adopted, are charged to their client: one
				// that spins through the run costs it far more than its
				// own 100 activations of a few µs (without adoption: ms).
				if then == "spin" && chaos.CPUS < 0.1 {
					t.Errorf("chaos: cpu_s %g with children that spin: their CPU was not charged to it", chaos.CPUS)
				}
			})
		}
	}
}
