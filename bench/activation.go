package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/report"
)

// The client kinds Activation measures: every kind of client tcs runs.
const (
	KindC        = "c"        // native C (controllers/c/pd.c, tcs_native.h)
	KindGo       = "go"       // native Go (tcs client pd)
	KindGoroslib = "goroslib" // ROS 1 in Go (tcs node pd)
	KindRoscpp   = "roscpp"   // ROS 1 (test/controllers/roscpp/pd.cpp)
	KindRospy    = "rospy"    // ROS 1 (test/controllers/rospy/pd.py)
	KindRclcpp   = "rclcpp"   // ROS 2 (test/controllers/ros2/rclcpp_pd.cpp, create_timer)
	KindRclpy    = "rclpy"    // ROS 2 (test/controllers/ros2/rclpy_pd.py)
	// KindROS1Stack is the mixed ROS 1 stack: on one robot, a goroslib PD
	// controller and a roscpp ros::Timer node at 200 Hz and a rospy
	// planner computing 100 ms per plan best-effort below them. It runs
	// once, whatever the client counts.
	KindROS1Stack = "ros1-stack"
)

// ActivationKinds are the kinds Activation measures by default, in the
// order of its table. Native C comes first: the others' ratios are to it.
var ActivationKinds = []string{KindC, KindGo, KindGoroslib, KindRoscpp, KindRospy, KindRclcpp, KindRclpy, KindROS1Stack}

// ActivationOpts configures Activation. Zero values take the documented
// defaults.
type ActivationOpts struct {
	// Clients are the client counts; each kind runs once at each. Default
	// 4, 16 and 64.
	Clients []int
	// Kinds are the kinds to measure (ActivationKinds' names). Default
	// ActivationKinds.
	Kinds []string
	// Duration is the virtual time of each run of a ROS kind. Default 3 s.
	Duration time.Duration
	// NativeDuration is the virtual time of each run of a native kind (C,
	// Go). Default 10 × Duration: 3 s of 4 native clients last 30-100 ms
	// of wall, so their figures would be mostly the clients' start-up (a
	// Go client's runtime threads stay awake and raised until the
	// dormancy looks find them idle), not the dispatch cycle the ratios
	// compare.
	NativeDuration time.Duration
	// Period is every controller's period. Default 10 ms (100 Hz).
	Period time.Duration
	// Quantum is the runs' quantum q. Default 1 ms.
	Quantum time.Duration
	// Step is the pendulum's integration step. Default 1 ms, as in
	// config/pendulum.yaml.
	Step time.Duration
	// Samples is the ROS controllers' samples setting (config.Samples'
	// names): "at_activation" (default: each activation gets the newest
	// sample, as a native client's does with its reply) or "each" (every
	// step's sample at its instant, a dispatch each).
	Samples string
	RunOpts
}

// RunOpts is what every bench made of whole `tcs run`s takes besides its
// workload (ActivationOpts, PursuitOpts, SoakOpts).
type RunOpts struct {
	// Src is the tcs source tree, where the controllers' sources are.
	// Default: the first folder holding tcs's go.mod upward from the
	// working directory, then from the tcs binary's folder.
	Src string
	// Results is the folder the results are written to; for the JSON
	// benches "-" writes none. Default Src/results/<the bench's folder>.
	Results string
	// Keep keeps the runs' folder even when every run succeeded (a failed
	// run always keeps it).
	Keep bool
	// Wait is how long each run waits for another run holding the
	// simulation CPU. Default 2 min (a soak's: 10 min).
	Wait time.Duration
	// SelfExe is the tcs binary that runs the scenarios (tcs run). Default
	// os.Executable().
	SelfExe string
	// Progress receives a line as each run starts and ends. Default none.
	Progress io.Writer
}

// withDefaults fills RunOpts' zero values (Src, Results and SelfExe
// aside) with wait as Wait's default.
func (o RunOpts) withDefaults(wait time.Duration) RunOpts {
	if o.Wait <= 0 {
		o.Wait = wait
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// withDefaults fills ActivationOpts' zero values (Src and SelfExe aside).
func (o ActivationOpts) withDefaults() ActivationOpts {
	if len(o.Clients) == 0 {
		o.Clients = []int{4, 16, 64}
	}
	if len(o.Kinds) == 0 {
		o.Kinds = ActivationKinds
	}
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if o.NativeDuration <= 0 {
		o.NativeDuration = 10 * o.Duration
	}
	if o.Period <= 0 {
		o.Period = 10 * time.Millisecond
	}
	if o.Quantum <= 0 {
		o.Quantum = time.Millisecond
	}
	if o.Step <= 0 {
		o.Step = time.Millisecond
	}
	if o.Samples == "" {
		o.Samples = config.SamplesAtActivation.String()
	}
	o.RunOpts = o.RunOpts.withDefaults(2 * time.Minute)
	return o
}

// The status of an ActivationCase.
const (
	CaseOK      = "ok"
	CaseSkipped = "skipped" // the kind cannot run here; Reason says why
	CaseFailed  = "failed"  // Reason says how, and which folder has the logs
)

// ActivationCase is one run: one kind at one client count. Costs are the
// coordinator's CPU in µs; "All" ones count all of tcs's CPU, on every
// CPU (summary.json's overhead.coordinator_s), the others only its CPU on
// the simulation CPU (overhead.sim_s).
// Ratios are to native C at the same client count (0 when it has none).
type ActivationCase struct {
	Kind    string `json:"kind"`
	Clients int    `json:"clients"`
	// DurationS is the run's virtual time (ActivationOpts.Duration or
	// NativeDuration).
	DurationS float64 `json:"duration_s"`
	Status    string  `json:"status"`
	Reason    string  `json:"reason,omitempty"`
	// RunDir is the run's folder (scenario, summary.json, logs); it is
	// removed after a bench whose runs all succeeded, unless kept.
	RunDir string `json:"run_dir,omitempty"`
	// Ended is the run's summary.json ended.
	Ended string `json:"ended,omitempty"`

	// Activations is the sum of the clients' activations,
	// ActivationsMin the fewest of one client.
	Activations    int64 `json:"activations"`
	ActivationsMin int64 `json:"activations_min"`
	Dispatches     int64 `json:"dispatches"`
	// Deliveries is the sum of the clients' ROS deliveries (sensor
	// messages written into their sockets).
	Deliveries int64 `json:"deliveries,omitempty"`

	// CoordinatorS, SimS, ThreadsS: summary.json's overhead (all of
	// tcs's CPU, and its parts).
	CoordinatorS float64 `json:"coordinator_s"`
	SimS         float64 `json:"sim_s"`
	ThreadsS     float64 `json:"threads_s"`
	ClientsS     float64 `json:"clients_s"`
	DynamicsS    float64 `json:"dynamics_s"`
	VirtualS     float64 `json:"virtual_s"`
	WallS        float64 `json:"wall_s"`
	// RTF is summary.json's rtf; IdealRTF is virtual_s / (clients_s +
	// dynamics_s), the rtf with a coordinator that cost nothing.
	RTF      float64 `json:"rtf"`
	IdealRTF float64 `json:"ideal_rtf"`

	USPerActivation    float64 `json:"coordinator_us_per_activation"`
	AllUSPerActivation float64 `json:"coordinator_all_us_per_activation"`
	USPerDispatch      float64 `json:"coordinator_us_per_dispatch"`
	AllUSPerDispatch   float64 `json:"coordinator_all_us_per_dispatch"`

	RatioCPerActivation    float64 `json:"ratio_c_per_activation"`
	RatioCAllPerActivation float64 `json:"ratio_c_all_per_activation"`
	RatioCPerDispatch      float64 `json:"ratio_c_per_dispatch"`
	RatioCAllPerDispatch   float64 `json:"ratio_c_all_per_dispatch"`

	// OverheadFraction is summary.json's overhead.sim_fraction (the
	// simulation CPU's share); OverheadFractionAll its overhead.fraction
	// (all of tcs's CPU: threads_s counted).
	OverheadFraction    float64 `json:"overhead_fraction"`
	OverheadFractionAll float64 `json:"overhead_fraction_all"`

	DeadlineMisses     int64 `json:"deadline_misses"`
	DeadlineMissesHost int64 `json:"deadline_misses_host"`
	// ActivationsBegunLate is the sum of the clients' summary.json
	// activations_begun_late: activations tcs began late (must be 0).
	ActivationsBegunLate int64   `json:"activations_begun_late"`
	DriftMaxS            float64 `json:"drift_max_s"`
	DriftP99S            float64 `json:"drift_p99_s"`
	WallCostPollingS     float64 `json:"wall_cost_polling_s,omitempty"`
	HostOverrunS         float64 `json:"host_overrun_s,omitempty"`
}

// ResultHead is what a bench's JSON result begins with.
type ResultHead struct {
	Bench string `json:"bench"`
	// Date (YYYY-MM-DD) and Commit (the tcs binary's, from its build
	// information, else the source tree's) name the JSON file.
	Date     string `json:"date"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified,omitempty"` // the binary was built from a modified tree
	// Host describes the machine (CPUs, kernel).
	Host string `json:"host"`
}

// newHead is the head of bench's result started at start, with the
// commit of the tcs binary or of the source tree src.
func newHead(bench, src string, start time.Time) ResultHead {
	h := ResultHead{Bench: bench, Date: start.Format("2006-01-02"), Host: hostLine()}
	h.Commit, h.Modified = commitOf(src)
	return h
}

// file is the result's JSON file name: <bench>-<date>-<commit>.json, the
// commit shortened to 7 hex digits ("unknown" when there is none).
func (h ResultHead) file() string {
	c := h.Commit
	if len(c) > 7 {
		c = c[:7]
	}
	if c == "" {
		c = "unknown"
	}
	return h.Bench + "-" + h.Date + "-" + c + ".json"
}

// write writes the result v, whose head h is, as indented JSON to
// dir/h.file() (see writeNewFile) and returns the path; errors start
// with "bench <h.Bench>".
func (h ResultHead) write(dir string, v any) (string, error) {
	what := "bench " + h.Bench
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("%s: encode the results: %w", what, err)
	}
	return writeNewFile(what, dir, h.file(), append(b, '\n'))
}

// ActivationResult is what Activation measured, as written to its JSON
// file.
type ActivationResult struct {
	ResultHead // Bench "activation"

	Mode      string  `json:"mode"` // consistent
	PeriodS   float64 `json:"period_s"`
	QuantumS  float64 `json:"quantum_s"`
	StepS     float64 `json:"step_s"`
	Samples   string  `json:"samples"`    // the ROS controllers' samples setting
	DurationS float64 `json:"duration_s"` // of the ROS kinds' runs
	// NativeDurationS is the virtual time of the native kinds' runs.
	NativeDurationS float64  `json:"native_duration_s"`
	Clients         []int    `json:"clients"`
	Kinds           []string `json:"kinds"`
	ROS2Prefix      string   `json:"ros2_prefix,omitempty"`
	// WallS is the whole bench's wall time (builds included).
	WallS float64          `json:"wall_s"`
	Cases []ActivationCase `json:"cases"`
}

// Activation measures what the coordinator's CPU costs per client
// activation and per dispatch for every kind of client tcs runs (native
// C, native Go, goroslib, roscpp, rospy and, in a tcs built with the ros2
// tag and a ROS 2 Jazzy at $TCS_ROS2_PREFIX, /opt/ros/jazzy or
// /opt/ros2-jazzy-min, rclcpp and rclpy), on the same world, at each
// client count of o.Clients.
//
// Each run is `tcs run` (o.SelfExe, --no-record) of a scenario it writes:
// n robots, each a pendulum body with one client, a periodic PD
// controller at o.Period — the project's own controllers
// (controllers/c/pd.c, `tcs client pd`, `tcs node pd`,
// test/controllers/{roscpp,rospy,ros2}), built as the tests build them
// (see prepareKind) — with quantum o.Quantum in consistent mode for
// o.Duration of virtual time. The ROS kinds get one JointState per world
// step (o.Step), the native ones their observation with each activation:
// that difference is part of what is measured. From each run's
// summary.json it takes tcs's CPU on the simulation CPU (overhead.sim_s)
// and on every CPU (overhead.coordinator_s), and divides
// by the clients' activations and by the dispatches.
//
// It writes a table to w and the same as JSON to
// o.Results/activation-<date>-<commit>.json. A kind that cannot run here
// is a row saying why, never left out. A run that fails is a row naming
// its folder, which is kept, and the error at the end lists them. The
// runs' folder (in the temporary directory) is removed when every run
// succeeded, unless o.Keep. When ctx ends, the run under way is stopped
// (SIGTERM: tcs stops its clients), the runs not made are left out, and
// no JSON is written.
func Activation(ctx context.Context, w io.Writer, o ActivationOpts) (*ActivationResult, error) {
	o = o.withDefaults()
	start := time.Now()
	for _, k := range o.Kinds {
		if !slices.Contains(ActivationKinds, k) {
			return nil, fmt.Errorf("bench activation: no client kind %q (the kinds are %s)", k, strings.Join(ActivationKinds, ", "))
		}
	}
	for _, n := range o.Clients {
		if n < 1 {
			return nil, fmt.Errorf("bench activation: %d clients: want at least 1", n)
		}
	}
	if err := runPrereqs("bench activation", &o.SelfExe, &o.Src); err != nil {
		return nil, err
	}
	if o.Results == "" {
		o.Results = filepath.Join(o.Src, "results", "bench")
	}
	runs, err := os.MkdirTemp("", "tcs-bench-activation-")
	if err != nil {
		return nil, fmt.Errorf("bench activation: %w", err)
	}

	res := &ActivationResult{ResultHead: newHead("activation", o.Src, start), Mode: "consistent",
		PeriodS: o.Period.Seconds(), QuantumS: o.Quantum.Seconds(), StepS: o.Step.Seconds(), Samples: o.Samples,
		DurationS: o.Duration.Seconds(), NativeDurationS: o.NativeDuration.Seconds(), Clients: o.Clients, Kinds: o.Kinds}

	// Each kind's command line (built first: a build that fails fails
	// every run of its kind, naming the folder).
	kinds := map[string]*activationKind{}
	for _, k := range o.Kinds {
		fmt.Fprintf(o.Progress, "bench activation: prepare %s\n", k)
		kinds[k] = prepareKind(k, o.Src, filepath.Join(runs, "build", k))
		if kinds[k].ros2Prefix != "" {
			res.ROS2Prefix = kinds[k].ros2Prefix
		}
	}
	var failed []string
	var todo []caseKey
	for _, n := range o.Clients {
		for _, k := range o.Kinds {
			if k != KindROS1Stack {
				todo = append(todo, caseKey{k, n})
			}
		}
	}
	if slices.Contains(o.Kinds, KindROS1Stack) {
		todo = append(todo, caseKey{KindROS1Stack, len(stackClients)})
	}
	for _, t := range todo {
		if ctx.Err() != nil {
			break
		}
		k, n := t.kind, t.clients
		c := runCase(ctx, kinds[k], n, o, runs)
		switch c.Status {
		case CaseFailed:
			failed = append(failed, fmt.Sprintf("%s × %d: %s", k, n, c.Reason))
			fmt.Fprintf(o.Progress, "bench activation: %s × %d: failed: %s\n", k, n, c.Reason)
		case CaseSkipped:
			fmt.Fprintf(o.Progress, "bench activation: %s × %d: skipped: %s\n", k, n, c.Reason)
		default:
			fmt.Fprintf(o.Progress, "bench activation: %s × %d: %.1f µs per activation, %.1f per dispatch, %.1f s wall\n",
				k, n, c.USPerActivation, c.USPerDispatch, c.WallS)
		}
		res.Cases = append(res.Cases, c)
	}
	setRatios(res.Cases)
	res.WallS = time.Since(start).Seconds()
	writeActivationTable(w, res)

	var errs []error
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("bench activation: interrupted (%w): no JSON written", context.Cause(ctx)))
	} else if o.Results != "-" {
		path, err := res.write(o.Results, res)
		if err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(w, "json: %s\n", path)
		}
	}
	if len(failed) > 0 || o.Keep {
		fmt.Fprintf(w, "runs: %s (kept)\n", runs)
	} else if err := os.RemoveAll(runs); err != nil {
		errs = append(errs, fmt.Errorf("bench activation: remove the runs: %w", err))
	}
	if len(failed) > 0 {
		runs := "runs"
		if len(failed) == 1 {
			runs = "run"
		}
		errs = append([]error{fmt.Errorf("bench activation: %d %s failed:\n  %s", len(failed), runs, strings.Join(failed, "\n  "))}, errs...)
	}
	return res, errors.Join(errs...)
}

// caseKey is one run of Activation: a kind at a client count.
type caseKey struct {
	kind    string
	clients int
}

// runCase runs kind k with n clients in runs/<k>-<n> and reads its summary.
func runCase(ctx context.Context, k *activationKind, n int, o ActivationOpts, runs string) ActivationCase {
	c := ActivationCase{Kind: k.name, Clients: n, DurationS: o.durationOf(k).Seconds()}
	if k.skip != "" {
		c.Status, c.Reason = CaseSkipped, k.skip
		return c
	}
	if k.err != nil { // its build failed: the error names the build's log
		c.Status, c.Reason = CaseFailed, k.err.Error()
		return c
	}
	c.RunDir = filepath.Join(runs, fmt.Sprintf("%s-%d", k.name, n))
	master := ""
	if k.ros == rosOne {
		uri, err := masterURI()
		if err != nil {
			return failCase(c, "%v", err)
		}
		master = uri
	}
	sc := activationScenario(k, n, o, master)
	env := k.env
	if k.ros == rosTwo {
		// A DDS domain of the bench's own, off others' runs on the host.
		env = append(append([]string(nil), env...), fmt.Sprintf("ROS_DOMAIN_ID=%d", 60+os.Getpid()%40),
			"ROS_HOME="+filepath.Join(c.RunDir, "ros"), "ROS_LOG_DIR="+filepath.Join(c.RunDir, "ros", "log"))
	}
	return runScenario(ctx, c, sc.yaml, env, o.RunOpts, sc.bound,
		fmt.Sprintf("bench activation: %s × %d", k.name, n))
}

// failCase is c failed for the reason given, which names its folder.
func failCase(c ActivationCase, format string, args ...any) ActivationCase {
	c.Status = CaseFailed
	c.Reason = fmt.Sprintf(format, args...) + "; logs in " + c.RunDir
	return c
}

// runScenario writes yaml as c.RunDir/scenario.yaml, runs it with env
// (runTCS, bounded to bound; label starts the progress line) and fills c
// from its summary.json (caseOf). A run that fails, or ends other than
// completed, is c failed, naming its folder and `tcs run`'s last error.
func runScenario(ctx context.Context, c ActivationCase, yaml string, env []string, o RunOpts, bound time.Duration, label string) ActivationCase {
	if err := os.MkdirAll(c.RunDir, 0o755); err != nil {
		return failCase(c, "%v", err)
	}
	scen := filepath.Join(c.RunDir, "scenario.yaml")
	if err := os.WriteFile(scen, []byte(yaml), 0o644); err != nil {
		return failCase(c, "%v", err)
	}
	fmt.Fprintf(o.Progress, "%s: tcs run %s (bounded to %v)\n", label, scen, bound)
	logPath := filepath.Join(c.RunDir, "bench.log")
	runErr := runTCS(ctx, o.SelfExe, scen, c.RunDir, env, o.Wait, bound, logPath)
	b, err := os.ReadFile(filepath.Join(c.RunDir, "summary.json"))
	if err != nil {
		if runErr == nil {
			runErr = err
		}
		why := runError(logPath)
		if why == "" {
			why = tailFile(logPath, 3)
		}
		return failCase(c, "tcs run: %v, no summary.json: %s", runErr, why)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return failCase(c, "summary.json: %v", err)
	}
	c = caseOf(c, &s)
	if s.Ended != report.EndCompleted {
		return failCase(c, "the run ended %q%s", s.Ended, suffix(": ", runError(logPath)))
	}
	if runErr != nil {
		return failCase(c, "tcs run: %v%s", runErr, suffix(": ", runError(logPath)))
	}
	return c
}

// runTCS runs `tcs run scen` into out with env, its output in logPath.
// A run still going after bound, or when ctx ends, is sent SIGTERM (tcs
// then stops its clients and writes its summary), and killed 30 s later.
func runTCS(ctx context.Context, exe, scen, out string, env []string, wait, bound time.Duration, logPath string) error {
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "run", scen, "--out", out, "--quiet", "--no-record", "--wait", wait.String())
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("still running after %v (stopped): %w", bound, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted (stopped): %w", err)
	}
	return err
}

// masterURI is a loopback URI nothing answers at: tcs starts its embedded
// master there.
func masterURI() (string, error) {
	uri, err := master.FreeURI()
	if err != nil {
		return "", fmt.Errorf("a port for the ROS master: %w", err)
	}
	return uri, nil
}

// runError returns the last error `tcs run` wrote to the log at path
// ("tcs run: ..." and the indented lines that go on with it, joined by
// "; "), "" when there is none.
func runError(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var last []string
	more := false // the lines go on with the last error
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "tcs run: "):
			last, more = []string{strings.TrimSuffix(strings.TrimSpace(l), ":")}, true
		case more && strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != "":
			last = append(last, strings.TrimSpace(l))
		default:
			more = false
		}
	}
	return strings.Join(last, "; ")
}

// suffix is sep + s, or "" when s is.
func suffix(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// tailFile returns the last n non-empty lines of the file at path, joined
// by " | ".
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// durationOf is the virtual time of a run of kind k.
func (o ActivationOpts) durationOf(k *activationKind) time.Duration {
	if k.ros == rosNone {
		return o.NativeDuration
	}
	return o.Duration
}

// activationRun is the scenario of one run and how long its `tcs run` may
// take.
type activationRun struct {
	yaml  string
	bound time.Duration
}

// activationScenario is the scenario of kind k with n clients: n robots
// (writeRobots), or the robots k writes itself (the mixed stack's). A ROS 1 run's master is master
// (tcs starts its own there). The wall limit (from virtual time 0) is
// 20 × duration + 30 s as by default, longer at over 10 clients (twice
// the duration per client: 16 rclpy nodes ran at an rtf of 0.06 here);
// the ROS start-up may take 30 s or 3 s per client; the run's bound is
// both and 2 minutes for the rest (the clients start and stop).
func activationScenario(k *activationKind, n int, o ActivationOpts, master string) activationRun {
	var b strings.Builder
	d := o.durationOf(k)
	wall := 30*time.Second + time.Duration(max(20, 2*n))*d
	startup := max(30*time.Second, time.Duration(n)*3*time.Second)
	fmt.Fprintf(&b, "name: activation-%s-%d\nmode: consistent\nduration: %v\nquantum: %v\nwall_limit: %v\n",
		k.name, n, d, o.Quantum, wall)
	switch k.ros {
	case rosOne:
		fmt.Fprintf(&b, "ros:\n  master: %s\n  startup_timeout: %v\n", master, startup)
	case rosTwo:
		fmt.Fprintf(&b, "ros:\n  transport: ros2\n  distro: jazzy\n  startup_timeout: %v\n", startup)
	}
	fmt.Fprintf(&b, "dynamics:\n  model: pendulum\n  step: %v\n  params: {mass: 1.0, length: 1.0, max_torque: 5.0}\nrobots:\n", o.Step)
	if k.robots != nil {
		b.WriteString(k.robots(o.Samples))
	} else {
		writeRobots(&b, k, n, o)
	}
	bound := wall + 2*time.Minute
	if k.ros != rosNone {
		bound += startup
	}
	return activationRun{yaml: b.String(), bound: bound}
}

// writeRobots writes n robots r00.. to b, robot j driving pendulum body j
// with one periodic client pdJJ running k's command line.
func writeRobots(b *strings.Builder, k *activationKind, n int, o ActivationOpts) {
	api := "native"
	if k.ros != rosNone {
		api = "ros"
	}
	cmd := quoteArgs(k.argv(o.Period)...)
	width := len(strconv.Itoa(n - 1))
	for j := range n {
		fmt.Fprintf(b, "  - name: r%0*d\n    clients:\n      - name: pd%0*d\n        cmd: [%s]\n        api: %s\n        class: periodic\n        period: %v\n",
			width, j, width, j, cmd, api, o.Period)
		if k.ros != rosNone {
			fmt.Fprintf(b, "        samples: %s\n", o.Samples)
		}
	}
}

// quoteArgs writes args as the items of a YAML flow sequence.
func quoteArgs(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return strings.Join(q, ", ")
}

// caseOf fills c's figures from summary s.
func caseOf(c ActivationCase, s *report.Summary) ActivationCase {
	c.Ended = s.Ended
	c.Dispatches = s.Dispatches
	o := s.Overhead
	c.CoordinatorS, c.SimS, c.ThreadsS = o.CoordinatorS, o.SimS, o.ThreadsS
	c.ClientsS, c.DynamicsS = s.Overhead.ClientsS, s.Overhead.DynamicsS
	c.VirtualS, c.WallS, c.RTF = s.VirtualS, s.WallS, s.RTF
	c.DriftMaxS, c.DriftP99S = s.DriftMaxS, s.DriftP99S
	c.WallCostPollingS, c.HostOverrunS = s.WallCostPollingS, s.HostOverrunS
	c.OverheadFraction, c.OverheadFractionAll = o.SimFraction, o.Fraction
	c.ActivationsMin = -1
	for _, cl := range s.Clients {
		c.Activations += cl.Activations
		c.Deliveries += cl.Deliveries
		c.DeadlineMisses += cl.DeadlineMisses
		c.DeadlineMissesHost += cl.DeadlineMissesHost
		c.ActivationsBegunLate += cl.ActivationsBegunLate
		if c.ActivationsMin < 0 || cl.Activations < c.ActivationsMin {
			c.ActivationsMin = cl.Activations
		}
	}
	c.ActivationsMin = max(c.ActivationsMin, 0)
	c.USPerActivation, c.AllUSPerActivation = perUS(c.SimS, c.Activations), perUS(c.CoordinatorS, c.Activations)
	c.USPerDispatch, c.AllUSPerDispatch = perUS(c.SimS, c.Dispatches), perUS(c.CoordinatorS, c.Dispatches)
	if d := c.ClientsS + c.DynamicsS; d > 0 {
		c.IdealRTF = c.VirtualS / d
	}
	c.Status = CaseOK
	return c
}

// perUS is s seconds per n in µs (0 for no n).
func perUS(s float64, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return s * 1e6 / float64(n)
}

// setRatios sets each successful case's ratios to the native C case of
// the same client count.
func setRatios(cases []ActivationCase) {
	ref := map[int]ActivationCase{}
	for _, c := range cases {
		if c.Kind == KindC && c.Status == CaseOK {
			ref[c.Clients] = c
		}
	}
	ratio := func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return a / b
	}
	for i := range cases {
		c := &cases[i]
		r, ok := ref[c.Clients]
		if !ok || c.Status != CaseOK {
			continue
		}
		c.RatioCPerActivation = ratio(c.USPerActivation, r.USPerActivation)
		c.RatioCAllPerActivation = ratio(c.AllUSPerActivation, r.AllUSPerActivation)
		c.RatioCPerDispatch = ratio(c.USPerDispatch, r.USPerDispatch)
		c.RatioCAllPerDispatch = ratio(c.AllUSPerDispatch, r.AllUSPerDispatch)
	}
}

// writeActivationTable prints res as a table, a row per case.
func writeActivationTable(w io.Writer, res *ActivationResult) {
	fmt.Fprintf(w, "activation: coordinator CPU per activation and per dispatch; each client a PD controller at %g Hz "+
		"on its own pendulum (one robot each), world step %v, q %v, %s mode, %v virtual per run (native kinds: %v); ROS samples: %s\n",
		1/res.PeriodS, seconds(res.StepS), seconds(res.QuantumS), res.Mode, seconds(res.DurationS), seconds(res.NativeDurationS), res.Samples)
	fmt.Fprintln(w, "  sim: overhead.sim_s (tcs on the simulation CPU); all: overhead.coordinator_s (tcs on every CPU: sim_s and threads_s)")
	fmt.Fprintln(w, "  ×C: ratio to native C at the same client count; ovh: coordinator / (coordinator + clients + dynamics);")
	fmt.Fprintln(w, "  rtf: virtual / wall; ideal: virtual / (clients' CPU + dynamics); misses: deadline misses (the host's among them;")
	fmt.Fprintln(w, "  then, if any, [activations tcs began late although the client was idle at its instant: a fault of tcs])")
	if slices.Contains(res.Kinds, KindROS1Stack) {
		fmt.Fprintf(w, "  %s: one robot: a goroslib PD controller and a roscpp ros::Timer node at %g Hz, a rospy planner "+
			"(100 ms of CPU per plan) best-effort below them\n", KindROS1Stack, float64(time.Second)/float64(stackPeriod))
	}
	// Each cost group: sim ×C all ×C, 7+1+6+1+7+1+6 wide.
	group := func(title string) string {
		const width = 29
		pad := width - utf8.RuneCountInString(title)
		return strings.Repeat("-", pad/2) + title + strings.Repeat("-", pad-pad/2)
	}
	fmt.Fprintf(w, "%-10s %7s %11s %11s  %s  %s  %s\n", "", "", "", "",
		group(" µs per activation "), group(" µs per dispatch "), "---- ovh ----")
	fmt.Fprintf(w, "%-10s %7s %11s %11s  %7s %6s %7s %6s  %7s %6s %7s %6s  %7s %7s %7s %7s %9s\n",
		"kind", "clients", "activations", "dispatches",
		"sim", "×C", "all", "×C", "sim", "×C", "all", "×C", "sim", "all", "rtf", "ideal", "misses")
	ratio := func(r float64) string {
		if r <= 0 {
			return "-"
		}
		return strconv.FormatFloat(r, 'f', 2, 64)
	}
	for _, c := range res.Cases {
		if c.Status != CaseOK {
			fmt.Fprintf(w, "%-10s %7d  %s: %s\n", c.Kind, c.Clients, c.Status, c.Reason)
			continue
		}
		fmt.Fprintf(w, "%-10s %7d %11d %11d  %7.1f %6s %7.1f %6s  %7.1f %6s %7.1f %6s  %6.1f%% %6.1f%% %7.2f %7.1f %9s\n",
			c.Kind, c.Clients, c.Activations, c.Dispatches,
			c.USPerActivation, ratio(c.RatioCPerActivation), c.AllUSPerActivation, ratio(c.RatioCAllPerActivation),
			c.USPerDispatch, ratio(c.RatioCPerDispatch), c.AllUSPerDispatch, ratio(c.RatioCAllPerDispatch),
			100*c.OverheadFraction, 100*c.OverheadFractionAll, c.RTF, c.IdealRTF,
			missCell(c.DeadlineMisses, c.DeadlineMissesHost, c.ActivationsBegunLate))
	}
	fmt.Fprintf(w, "wall time: %.1f s (%s)\n", res.WallS, res.Host)
}

// missCell prints a case's deadline misses, the host's among them, and the
// activations tcs began late when there are any.
func missCell(n, host, late int64) string {
	s := fmt.Sprintf("%d (%d)", n, host)
	if late > 0 {
		s += fmt.Sprintf(" [%d]", late)
	}
	return s
}

// seconds prints s seconds as a Go duration.
func seconds(s float64) time.Duration { return time.Duration(s * 1e9) }

// writeNewFile writes b to dir/name, or, when a bench of the same day and
// commit wrote that already, to the same name with -2, -3, ... before its
// extension (a result is never written over), and returns the path;
// errors start with what.
func writeNewFile(what, dir, name string, b []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	ext := filepath.Ext(name)
	for k := 1; ; k++ {
		path := filepath.Join(dir, name)
		if k > 1 {
			path = filepath.Join(dir, strings.TrimSuffix(name, ext)+"-"+strconv.Itoa(k)+ext)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		_, werr := f.Write(b)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("%s: %w", what, werr)
		}
		return path, nil
	}
}

// hostLine describes the machine: online CPUs and the kernel's release.
func hostLine() string {
	cpus, _ := linux.OnlineCPUs()
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		rel = []byte("?")
	}
	return fmt.Sprintf("%d online CPUs, Linux %s, %s", len(cpus), bytes.TrimSpace(rel), runtime.Version())
}

// runPrereqs checks what a benchmark of whole `tcs run`s needs (SCHED_FIFO,
// two CPUs) and fills in the tcs binary and the source tree when not
// given; errors start with what.
func runPrereqs(what string, selfExe, src *string) error {
	if *selfExe == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("%s: find the tcs binary: %w", what, err)
		}
		*selfExe = exe
	}
	if err := linux.CheckFIFO(80); err != nil {
		return fmt.Errorf("%s: tcs run needs SCHED_FIFO: %w", what, err)
	}
	// Any CPU will do here: the runs take the last online one.
	if err := linux.RequireCPUs(-1); errors.Is(err, linux.ErrOneCPU) {
		return fmt.Errorf("%s: %w", what, err)
	}
	if *src == "" {
		*src = findSource()
	} else if !isSource(*src) {
		return fmt.Errorf("%s: source tree %s: no go.mod of github.com/tcs-robotics/tcs there", what, *src)
	}
	return nil
}
