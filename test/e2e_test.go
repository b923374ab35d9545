// Package test holds tcs's end-to-end suites: the real tcs binary runs real
// scenarios with real processes at real SCHED_FIFO priorities, and the tests
// read what a user would read (summary.json, logs, exit codes).
package test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/msgs/cdr"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

var tcsBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tcs-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Clients that run as another user (privilege_test.go) exec tcs's
	// trampoline from here.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tcsBin = filepath.Join(dir, "tcs")
	build := exec.Command("go", "build", "-o", tcsBin, "../cmd/tcs")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tcs:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needRT skips a test on a machine where tcs cannot run: no SCHED_FIFO or a
// single CPU. CI installs and runs as root, so there they run.
func needRT(t *testing.T) {
	t.Helper()
	if err := linux.CheckFIFO(80); err != nil {
		t.Skipf("SCHED_FIFO not permitted here: %v", err)
	}
	if cpus, err := linux.OnlineCPUs(); err != nil || len(cpus) < 2 {
		t.Skipf("tcs needs 2 online CPUs: %v %v", cpus, err)
	}
}

type result struct {
	sum    *report.Summary
	out    string // stdout + stderr
	code   int
	outDir string
}

// runTCS runs `tcs run` with args and reads the summary it wrote.
func runTCS(t *testing.T, timeout time.Duration, args ...string) result {
	t.Helper()
	return runTCSEnv(t, nil, timeout, args...)
}

// runTCSEnv is runTCS with the environment env (nil: the test's).
func runTCSEnv(t *testing.T, env []string, timeout time.Duration, args ...string) result {
	t.Helper()
	return runTCSWith(t, tcsBin, env, timeout, args...)
}

func runTCSWith(t *testing.T, bin string, env []string, timeout time.Duration, args ...string) result {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := append([]string{"run"}, args...)
	argv = append(argv, "--out", out, "--quiet", "--wait", "10m")
	cmd := exec.CommandContext(ctx, bin, argv...)
	// A run that does not finish in time is asked for its goroutines'
	// stacks (SIGQUIT) and killed 30 s later: a hang leaves them, and
	// the last lines of its tcs.log, in the failure.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Env = env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("tcs %v did not finish within %s\n%s\nlast lines of its tcs.log:\n%s", argv, timeout, buf.String(), tail(filepath.Join(out, "tcs.log"), 40))
	}
	r := result{out: buf.String(), outDir: out}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("tcs %v: %v\n%s", argv, err, buf.String())
	}
	r.sum = readSummary(t, out)
	t.Logf("tcs %s\n%s%s", strings.Join(args, " "), r.out, warnings(out))
	return r
}

// warnings returns the warnings and errors of a run's tcs.log (late
// activations and the dispatches before them, overrun slices, steal),
// which explain a failure: the first 5 of each message, and how many more
// there were, so that one frequent warning does not hide the others.
func warnings(out string) string {
	b, err := os.ReadFile(filepath.Join(out, "tcs.log"))
	if err != nil {
		return ""
	}
	var w strings.Builder
	seen := map[string]int{}
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `"level":"warn"`) && !strings.Contains(line, `"level":"error"`) {
			continue
		}
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal([]byte(line), &e)
		if seen[e.Message] == 0 {
			order = append(order, e.Message)
		}
		if seen[e.Message]++; seen[e.Message] <= 5 {
			w.WriteString("tcs.log: " + line + "\n")
		}
	}
	for _, m := range order {
		if n := seen[m]; n > 5 {
			fmt.Fprintf(&w, "tcs.log: %d more like %q\n", n-5, m)
		}
	}
	return w.String()
}

// interrupt sends SIGINT to tcs and waits (up to 30 s) for it to exit.
func interrupt(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("tcs did not stop within 30 s of SIGINT\n%s", out.String())
	}
}

func readSummary(t *testing.T, dir string) *report.Summary {
	t.Helper()
	var s report.Summary
	readJSON(t, filepath.Join(dir, "summary.json"), &s)
	return &s
}

// readJSON decodes the JSON file at path into v, failing the test if it
// is missing or malformed.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// runCompleted runs `tcs run` and fails unless the run completed.
func runCompleted(t *testing.T, timeout time.Duration, args ...string) *report.Summary {
	t.Helper()
	r := runTCS(t, timeout, args...)
	if r.code != 0 || r.sum.Ended != report.EndCompleted {
		t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
	}
	return r.sum
}

func client(t *testing.T, s *report.Summary, name string) report.ClientSummary {
	t.Helper()
	for _, c := range s.Clients {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no client %q in the summary", name)
	return report.ClientSummary{}
}

// The acceptance run of the coordinator core: a native PD controller at
// 1 kHz on the pendulum for 10 s of virtual time.
func TestPendulum(t *testing.T) {
	needRT(t)
	s := runCompleted(t, 3*time.Minute, "../config/pendulum.yaml")
	pd := client(t, s, "pd")
	checkPeriods(t, pd, 10001)
	if pd.PeriodError > 0.001 {
		t.Errorf("period_error = %g > 0.001", pd.PeriodError)
	}
	// A miss after a dispatch the host delayed by over 200 µs is the
	// host's (deadline_misses_host), as in the other acceptance runs.
	if own := pd.DeadlineMisses - pd.DeadlineMissesHost; own != 0 {
		t.Errorf("deadline_misses = %d (%d after a host-delayed timer), want 0 of its own", pd.DeadlineMisses, pd.DeadlineMissesHost)
	}
	if lim := s.QuantumS + 0.0002; s.DriftP99S > lim {
		t.Errorf("drift_p99_s = %g > quantum + 0.2 ms = %g", s.DriftP99S, lim)
	}
	if lim := 0.001 * s.Overhead.ClientsS; s.LeakS > lim {
		t.Errorf("leak_s = %g > 0.001 × clients_s = %g", s.LeakS, lim)
	}
	// An activation is one round trip (WriteIdle; the sample comes with
	// the reply): one dispatch each, plus the start-up's 1 ms slices and
	// a few percent (a Read when the world lags, a slice cut by the host).
	if lim := pd.Activations + pd.PeriodsLost.BeforeStart + pd.Activations/50 + 10; s.Dispatches > lim {
		t.Errorf("%d dispatches for %d activations: more than one round trip an activation", s.Dispatches, pd.Activations)
	}
	t.Logf("coordinator %.1f µs per activation; Δ p99 %.1f µs max %.1f µs; leak %.1f µs",
		s.CoordinatorPerActivationUS, s.DriftP99S*1e6, s.DriftMaxS*1e6, s.LeakS*1e6)
	checkBalanced(t, s, 0)
}

// checkPeriods asserts the exact accounting of a periodic client's
// periods: the run has periods activation instants (a completed run of
// duration D at period P: 0, P, .., D, D/P + 1 of them), each of which began an
// activation or is lost with its cause; none is lost by the client's own
// overrun (the controllers of these tests compute well within a period),
// and at most a tenth before its start (its start-up's CPU is charged).
func checkPeriods(t *testing.T, c report.ClientSummary, periods int64) {
	t.Helper()
	l := c.PeriodsLost
	if l == nil {
		t.Fatalf("%s: no periods_lost in the summary", c.Name)
	}
	if c.Periods != periods {
		t.Errorf("%s: periods = %d, want %d", c.Name, c.Periods, periods)
	}
	if c.Activations-c.ActivationsExtra+l.Total != c.Periods {
		t.Errorf("%s: %d activations (%d extra) + %d lost ≠ %d periods", c.Name, c.Activations, c.ActivationsExtra, l.Total, c.Periods)
	}
	if l.BeforeStart+l.AfterExit+l.Overrun+l.Host != l.Total {
		t.Errorf("%s: lost causes %+v do not add up to their total", c.Name, *l)
	}
	if l.Overrun != 0 || l.AfterExit != 0 || l.BeforeStart > periods/10 {
		t.Errorf("%s: periods lost %+v: want none by overrun or exit, at most %d before start", c.Name, *l, periods/10)
	}
	// The contract begins an activation at its instant when its client is
	// idle there: one begun late anyway is tcs's fault, on any machine.
	if c.ActivationsBegunLate != 0 {
		t.Errorf("%s: %d activations begun late although it was idle at their instant (tcs's fault)", c.Name, c.ActivationsBegunLate)
	}
	t.Logf("%s: %d activations of %d periods, lost %+v, %d misses (%d the host's)", c.Name, c.Activations, c.Periods, *l,
		c.DeadlineMisses, c.DeadlineMissesHost)
}

// checkNodeMisses bounds the deadline misses of a real ROS node, c. What tcs
// owes it checkPeriods asserts: every activation at its instant while the
// node was idle there. A miss beyond that is the node's own load: a Python
// executor's callbacks running across its timer's instant, a runtime's
// pause, the host's stall charged to it. How often that happens is a
// property of the machine the test runs on, so it is logged; more than one
// activation in 100 would be a node computing for tcs (spinning on a clock
// it cannot see, a poll charged as work), which is an error.
func checkNodeMisses(t *testing.T, c report.ClientSummary) {
	t.Helper()
	own := c.DeadlineMisses - c.DeadlineMissesHost
	if lim := c.Activations / 100; own > lim {
		t.Errorf("%s: deadline_misses = %d (%d after a host-delayed timer), want at most %d of the node's own (1 %% of %d activations)",
			c.Name, c.DeadlineMisses, c.DeadlineMissesHost, lim, c.Activations)
	} else if c.DeadlineMisses > 0 {
		t.Logf("%s: deadline_misses = %d (%d after a host-delayed timer): the node's own load", c.Name, c.DeadlineMisses, c.DeadlineMissesHost)
	}
}

// checkBalanced asserts that body b's pendulum ends upright and still: the
// controller really controlled the world.
func checkBalanced(t *testing.T, s *report.Summary, b int) {
	t.Helper()
	if len(s.World) <= b || len(s.World[b].Obs) < 2 {
		t.Fatalf("no final state of body %d in the summary", b)
	}
	theta, omega := s.World[b].Obs[0], s.World[b].Obs[1]
	if d := math.Abs(math.Remainder(theta-math.Pi, 2*math.Pi)); d > 0.05 || math.Abs(omega) > 0.1 {
		t.Errorf("pendulum %d ends at θ=%.3f rad, θ̇=%.3f rad/s: not balanced upright", b, theta, omega)
	}
}

// The same acceptance run with the C controller (tcs_native.h), compiled
// here with gcc.
func TestPendulumC(t *testing.T) {
	needRT(t)
	dir := t.TempDir()
	bin := buildNativeC(t, dir, "../controllers/c/pd.c", "-lm")
	src, err := os.ReadFile("../config/pendulum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(dir, "pendulum-c.yaml")
	if err := os.WriteFile(scen, bytes.Replace(src, []byte("cmd: [tcs, client, pd]"), []byte("cmd: ["+bin+"]"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runCompleted(t, 3*time.Minute, scen)
	pd := client(t, s, "pd")
	// A miss after a dispatch the host cut short (its timer interrupt came
	// over 200 µs late) is the host's, reported apart, as in the ROS 1
	// tests.
	checkPeriods(t, pd, 10001)
	if own := pd.DeadlineMisses - pd.DeadlineMissesHost; pd.PeriodError > 0.001 || own != 0 {
		t.Errorf("C pd: period_error %g, misses %d (%d after a host-delayed timer)",
			pd.PeriodError, pd.DeadlineMisses, pd.DeadlineMissesHost)
	}
	checkBalanced(t, s, 0)
}

// buildNativeC compiles the native C client src (tcs_native.h on the
// include path, then the extra flags) into dir with gcc and returns the
// binary's path; it skips the test when gcc is not installed.
func buildNativeC(t *testing.T, dir, src string, extra ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c"))
	args := append([]string{"-O2", "-Wall", "-std=gnu11", "-I", "../coordinator/native", "-o", bin, src}, extra...)
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, out)
	}
	return bin
}

// Two robots, one with a best-effort planner that never sleeps under its
// controller: the controller never misses, Δ stays within a quantum, the
// coordination's cost is reported (see checkConsistent).
func TestTwoRobots(t *testing.T) {
	needRT(t)
	r := runTCS(t, 5*time.Minute, "../config/two-robots.yaml")
	if r.code != 0 || r.sum.Ended != report.EndCompleted {
		t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
	}
	checkConsistent(t, r.sum)
	checkBalanced(t, r.sum, 1) // beta's controller has its CPU to itself
	checkPlanStamps(t, filepath.Join(r.outDir, "run.mcap"), int64(r.sum.HostOverrunS*1e9))
}

// checkPlanStamps checks the stamps of the planner's plans in a
// two-robots recording (/tcs/channel/1, log time = stamp): between two
// plans robot alpha's clock advanced by the CPU its clients used, which
// is the planner's own thread CPU between them (the plan's second value)
// plus what its controller used (read from the controller's activation
// records on /tcs/progress, each with the CPU charged to it before the
// activation began) plus the little the planner's runtime threads used. A
// stamp taken at the end of the slice instead of at the write would be off
// by up to a quantum (5 ms). The CPU a client used past a slice whose
// timer the host delayed is not charged (host_overrun_s, overrun): the
// planner's clock may run ahead of the stamps by that much.
func checkPlanStamps(t *testing.T, path string, overrun int64) {
	t.Helper()
	type plan struct{ stamp, cpu int64 }
	type act struct{ begin, cpu int64 }
	var plans []plan
	var acts []act
	var pr record.ClientProgress
	_, err := record.Read(path, func(ch *record.ReadChannel, m *mcap.Message) error {
		switch ch.Topic {
		case record.TopicProgress:
			if err := pr.Decode(m.Data); err != nil {
				return err
			}
			if pr.Event == record.EventActivation && pr.Client == "alpha_pd" {
				acts = append(acts, act{pr.BeginNs, pr.CPUNs})
			}
			return nil
		case "/tcs/channel/1":
		default:
			return nil
		}
		r := cdr.NewReader(m.Data)
		if dims := r.Len(4); dims != 0 {
			return fmt.Errorf("plan with %d layout dims", dims)
		}
		r.Uint32() // data_offset
		if n := r.Len(8); n != 3 {
			return fmt.Errorf("plan of %d values, want 3", n)
		}
		_, cpu := r.Float64(), r.Float64()
		if r.Err() != nil {
			return r.Err()
		}
		plans = append(plans, plan{int64(m.LogTime), int64(math.Round(cpu * 1e9))})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) < 100 || len(acts) < 100 {
		t.Fatalf("%d plans and %d controller activations recorded, want hundreds", len(plans), len(acts))
	}
	slices.SortFunc(acts, func(a, b act) int { return cmp.Compare(a.begin, b.begin) })
	// ctrl is at least the controller's CPU between instants a and b: the
	// CPU charged to it from the last activation that began at or before a
	// to the first that began at or after b (its CPU between activations,
	// its runtime threads', is in it too); ok is false past the last one.
	ctrl := func(a, b int64) (int64, bool) {
		i := sort.Search(len(acts), func(i int) bool { return acts[i].begin > a }) - 1
		j := sort.Search(len(acts), func(j int) bool { return acts[j].begin >= b })
		if j == len(acts) {
			return 0, false
		}
		if i < 0 {
			return acts[j].cpu, true
		}
		return acts[j].cpu - acts[i].cpu, true
	}
	// The stamp is taken a few µs after the planner read its clock (its
	// write's own CPU, a syscall or a post); that varies by µs from plan to
	// plan, so the step may fall that far short of the CPU step. Above the
	// planner's and the controller's CPU, only the planner's runtime threads
	// (its Go scheduler's monitor, tens of µs per plan): 200 µs still
	// catches stamps that are off by a fraction of a 5 ms slice.
	const short, slack = 20_000, 200_000
	ds := make([]int64, 0, len(plans))
	rs := make([]int64, 0, len(plans))
	for k := 1; k < len(plans); k++ {
		d := (plans[k].stamp - plans[k-1].stamp) - (plans[k].cpu - plans[k-1].cpu)
		c, ok := ctrl(plans[k-1].stamp, plans[k].stamp)
		if !ok {
			break
		}
		ds, rs = append(ds, d), append(rs, d-c)
		if d < -overrun-short || d-c > slack {
			t.Errorf("plans %d and %d: stamps %d apart, the planner's CPU %d, the controller's at most %d: %d ns not explained",
				k-1, k, plans[k].stamp-plans[k-1].stamp, plans[k].cpu-plans[k-1].cpu, c, d-c)
		}
	}
	slices.Sort(ds)
	slices.Sort(rs)
	t.Logf("%d plans: stamp step minus the planner's CPU step: min %d, p50 %d, max %d ns; less the controller's CPU: p50 %d, max %d ns (host overrun %d ns)",
		len(ds)+1, ds[0], ds[len(ds)/2], ds[len(ds)-1], rs[len(rs)/2], rs[len(rs)-1], overrun)
}

func checkConsistent(t *testing.T, s *report.Summary) {
	t.Helper()
	// As in the ROS 1 tests: a miss right after a timer the host delayed
	// over 200 µs (the host held the vCPU while the client ran, and the
	// guest charged that to the client) is reported apart and logged; the
	// client's own misses must be 0.
	for _, c := range s.Clients {
		if c.Class != "periodic" {
			continue
		}
		if own := c.DeadlineMisses - c.DeadlineMissesHost; own != 0 {
			t.Errorf("%s: %d deadline misses (%d after a host-delayed timer), want 0 of its own", c.Name, c.DeadlineMisses, c.DeadlineMissesHost)
		} else if c.DeadlineMisses > 0 {
			t.Logf("%s: %d deadline misses, all after a host-delayed timer", c.Name, c.DeadlineMisses)
		}
	}
	if lim := s.QuantumS + 0.0002; s.DriftP99S > lim {
		t.Errorf("drift_p99_s = %g > quantum + 0.2 ms = %g", s.DriftP99S, lim)
	}
	// The coordination's cost is a performance figure that depends on the
	// host's load, not a bound that holds on a noisy host (the target is
	// 0.01): it is logged here and in every run's summary, not asserted.
	t.Logf("overhead.fraction = %.4f (target 0.01; coordinator %.3f s, clients %.3f s)",
		s.Overhead.Fraction, s.Overhead.CoordinatorS, s.Overhead.ClientsS)
	if lim := 0.001 * s.Overhead.ClientsS; s.LeakS > lim {
		t.Errorf("leak_s = %g > 0.001 × clients_s = %g", s.LeakS, lim)
	}
}

// Lockstep: computation costs no virtual time, so Δ grows with the CPU the
// planner burns; consistent mode's Δ does not grow with the run's length.
func TestDriftByMode(t *testing.T) {
	needRT(t)
	lock1 := runTCS(t, 5*time.Minute, "../config/two-robots.yaml", "--mode", "lockstep", "--duration", "0.1s").sum
	lock2 := runTCS(t, 5*time.Minute, "../config/two-robots.yaml", "--mode", "lockstep", "--duration", "0.2s").sum
	for _, s := range []*report.Summary{lock1, lock2} {
		if s.Ended != report.EndCompleted {
			t.Fatalf("lockstep run ended %q", s.Ended)
		}
		planner := client(t, s, "alpha_planner")
		// Δ is the planner's real progress beyond the world: its CPU less
		// the virtual time (within a quantum).
		if want := planner.CPUS - s.VirtualS; s.DriftMaxS < 0.9*want {
			t.Errorf("lockstep Δmax %.3f s, want ≈ planner CPU − virtual time = %.3f s", s.DriftMaxS, want)
		}
	}
	if lock2.DriftMaxS < 1.6*lock1.DriftMaxS {
		t.Errorf("lockstep Δ did not grow with the run: %.3f s after 0.1 s, %.3f s after 0.2 s", lock1.DriftMaxS, lock2.DriftMaxS)
	}
	t.Logf("lockstep Δmax: %.3f s after 0.1 s virtual, %.3f s after 0.2 s", lock1.DriftMaxS, lock2.DriftMaxS)

	short := runTCS(t, 5*time.Minute, "../config/two-robots.yaml", "--duration", "10s").sum
	durLong := "100s"
	if testing.Short() {
		durLong = "30s"
	}
	long := runTCS(t, 10*time.Minute, "../config/two-robots.yaml", "--duration", durLong).sum
	for _, s := range []*report.Summary{short, long} {
		checkConsistent(t, s)
	}
	t.Logf("consistent Δ p99 / max: %.1f / %.1f µs after 10 s, %.1f / %.1f µs after %s",
		short.DriftP99S*1e6, short.DriftMaxS*1e6, long.DriftP99S*1e6, long.DriftMaxS*1e6, durLong)
}

// A client that crashes is reported with its exit code and log path, and the
// run ends cleanly with a summary.
func TestCrashIsReported(t *testing.T) {
	needRT(t)
	r := runTCS(t, 2*time.Minute, "testdata/crash.yaml")
	if r.code == 0 {
		t.Fatalf("tcs exited 0 after a client crashed")
	}
	pd := client(t, r.sum, "pd")
	if pd.ExitCode == nil || *pd.ExitCode != 3 {
		t.Fatalf("exit_code = %v, want 3", pd.ExitCode)
	}
	if want := report.EndClientExited("pd", 3); r.sum.Ended != want {
		t.Errorf("ended = %q, want %q", r.sum.Ended, want)
	}
	if _, err := os.Stat(pd.Log); err != nil {
		t.Errorf("log %s: %v", pd.Log, err)
	}
	if !strings.Contains(r.out, "pd") || !strings.Contains(r.out, pd.Log) {
		t.Errorf("the closing table does not name the client and its log:\n%s", r.out)
	}
}

// startLong starts tcs on the long scenario and waits until its clients run.
func startLong(t *testing.T) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(tcsBin, "run", "testdata/long.yaml", "--out", out, "--quiet", "--wait", "10m")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	deadline := time.Now().Add(11 * time.Minute)
	for time.Now().Before(deadline) {
		if pids := childPids(t, out); len(pids) >= 3 {
			time.Sleep(500 * time.Millisecond)
			return cmd, out, &buf
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("tcs did not start its clients:\n%s", buf.String())
	return nil, "", nil
}

// childPids reads the pids of the clients from tcs.log.
func childPids(t *testing.T, out string) []int {
	f, err := os.Open(filepath.Join(out, "tcs.log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Message string `json:"message"`
			Pid     int    `json:"pid"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Message {
		case "started":
			pids = append(pids, line.Pid)
		}
	}
	return pids
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	st, err := linux.ParseStat(b)
	return err == nil && st.State != 'Z' && st.State != 'X'
}

// realtime reports whether any thread of a live (not zombie) pid runs at a
// real-time policy.
func realtime(pid int) bool {
	if !alive(pid) {
		return false
	}
	tids, err := linux.Tasks(pid)
	if err != nil {
		return false
	}
	for _, tid := range tids {
		if pol, _, err := linux.Policy(tid); err == nil && pol != 0 {
			return true
		}
	}
	return false
}

// SIGINT ends the children, drops every priority and writes the summary.
func TestSIGINTWritesSummary(t *testing.T) {
	needRT(t)
	cmd, out, buf := startLong(t)
	pids := childPids(t, out)
	interrupt(t, cmd, buf)
	s := readSummary(t, out)
	if s.Ended != report.EndInterrupted {
		t.Errorf("ended = %q, want %q", s.Ended, report.EndInterrupted)
	}
	if s.VirtualS <= 0 {
		t.Errorf("virtual_s = %g after running", s.VirtualS)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("child %d still alive after SIGINT", pid)
		}
	}
}

// SIGKILL to tcs leaves no child alive and nothing at real-time priority.
func TestSIGKILLLeavesNothing(t *testing.T) {
	needRT(t)
	cmd, out, _ := startLong(t)
	pids := childPids(t, out)
	tcsPid := cmd.Process.Pid
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
	checkNothingLeft(t, append(pids, tcsPid), "after SIGKILL of tcs")
}

// checkNothingLeft asserts that, within 5 s, none of pids is alive or at a
// real-time priority.
func checkNothingLeft(t *testing.T, pids []int, when string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d alive %s", pid, when)
		}
		if realtime(pid) {
			t.Errorf("process %d still at real-time priority %s", pid, when)
		}
	}
}

// tcs check names the file, the line, the field and what would be valid.
func TestCheckNamesFieldAndFix(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src := "duration: 10s\ndynamics: {model: pendulum, step: 1ms}\nrobots:\n  - name: arm\n    clients:\n      - name: pd\n        cmd: [tcs, client, pd]\n        class: periodic\n        period: fast\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	outp, err := exec.Command(tcsBin, "check", bad).CombinedOutput()
	if err == nil {
		t.Fatalf("tcs check accepted a bad file:\n%s", outp)
	}
	msg := string(outp)
	for _, want := range []string{bad + ":9", "robots[0].clients[0].period", "fast"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	outp, err = exec.Command(tcsBin, "check", "../config/pendulum.yaml", "../config/two-robots.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("tcs check on the examples: %v\n%s", err, outp)
	}
}

// Free mode (Gazebo + use_sim_time): the clients run ungated while the world
// steps at wall-clock pace, held to the real-time factor.
func TestFreeModePacesTheWorld(t *testing.T) {
	needRT(t)
	s := runCompleted(t, 2*time.Minute, "../config/pendulum.yaml", "--mode", "free", "--duration", "2s")
	if s.Mode != "free" {
		t.Fatalf("mode %q", s.Mode)
	}
	// free.rtf defaults to 1: 2 s of virtual time take about 2 s of wall time.
	if s.WallS < 1.9 || s.WallS > 3 {
		t.Errorf("wall_s = %.3f for 2 s of virtual time at rtf 1", s.WallS)
	}
	pd := client(t, s, "pd")
	if pd.Activations < 1900 {
		t.Errorf("activations = %d in 2 s at 1 kHz", pd.Activations)
	}
	if pd.CPUS <= 0 {
		t.Errorf("free mode did not account the controller's CPU: cpu_s = %g", pd.CPUS)
	}
}

// A client that never blocks in lockstep (where its computation costs
// nothing, so the world waits for it forever): the watchdog sees virtual
// time stand still for stall_timeout, names the client and its thread, and
// the run ends "stalled" with a non-zero exit, nothing left alive or at
// real-time priority.
func TestWatchdogEndsAStalledRun(t *testing.T) {
	needRT(t)
	scen := filepath.Join(t.TempDir(), "spin.yaml")
	if err := os.WriteFile(scen, []byte(`name: spin
mode: lockstep
duration: 5s
quantum: 1ms
stall_timeout: 2s
dynamics: {model: pendulum, step: 1ms}
robots:
  - name: arm
    clients:
      - {name: pd, cmd: [tcs, client, pd], api: native, class: periodic, period: 1ms, priority: 20}
      - {name: spin, cmd: [tcs, client, spin], api: plain, class: periodic, period: 10ms, priority: 10}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	r := runTCS(t, time.Minute, scen)
	took := time.Since(t0)
	if r.code == 0 {
		t.Errorf("tcs exited 0 after a stall")
	}
	if !strings.HasPrefix(r.sum.Ended, report.EndStalled) || !strings.Contains(r.sum.Ended, `client "spin"`) {
		t.Errorf("ended %q: want a stall naming client \"spin\"", r.sum.Ended)
	}
	if took > 20*time.Second {
		t.Errorf("tcs took %v to end a run stalled for 2 s", took)
	}
	checkNothingLeft(t, childPids(t, r.outDir), "after the run stalled")
}

// 64 native controllers at 100 Hz, each on a robot of its own (q = 5 ms),
// for 10 s of virtual time: the run completes (it once hung at t = 0, the
// coordinator asleep on the exec locks of a client it had preempted in its
// exec), with every period accounted for and Δ within the contract.
func TestSixtyFourNativeClients(t *testing.T) {
	needRT(t)
	var b strings.Builder
	b.WriteString("name: sixty-four\nduration: 10s\nquantum: 5ms\nstall_timeout: 10s\ndynamics: {model: pendulum, step: 1ms}\nrobots:\n")
	for i := 0; i < 64; i++ {
		fmt.Fprintf(&b, "  - {name: r%d, clients: [{name: c%d, cmd: [tcs, client, pd], api: native, class: periodic, period: 10ms, priority: 10}]}\n", i, i)
	}
	scen := filepath.Join(t.TempDir(), "sixty-four.yaml")
	if err := os.WriteFile(scen, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runCompleted(t, 3*time.Minute, scen)
	if len(s.Clients) != 64 {
		t.Fatalf("%d clients in the summary", len(s.Clients))
	}
	var acts, lost, before int64
	for _, c := range s.Clients {
		checkPeriods(t, c, 1001)
		acts += c.Activations
		lost += c.PeriodsLost.Total
		before = max(before, c.PeriodsLost.BeforeStart)
		if own := c.DeadlineMisses - c.DeadlineMissesHost; own != 0 {
			t.Errorf("%s: %d deadline misses of its own", c.Name, own)
		}
	}
	if lim := s.QuantumS + 0.0002; s.DriftP99S > lim {
		t.Errorf("drift_p99_s = %g > quantum + 0.2 ms = %g", s.DriftP99S, lim)
	}
	t.Logf("64 clients: %d activations + %d lost = %d periods; Δ p99 %.3g s, max %.3g s; wall %.2f s, coordinator %.1f µs per dispatch",
		acts, lost, acts+lost, s.DriftP99S, s.DriftMaxS, s.WallS, 1e6*s.Overhead.CoordinatorS/float64(max(s.Dispatches, 1)))
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
