package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PursuitOpts configures Pursuit. Zero values take the documented
// defaults.
type PursuitOpts struct {
	// Trials is the number of runs. Default 2.
	Trials int
	// Duration is each run's virtual time. Default 20 s.
	Duration time.Duration
	// Period is both controllers' period. Default 10 ms (100 Hz).
	Period time.Duration
	// Quantum is the runs' quantum q. Default 10 ms.
	Quantum time.Duration
	// Step is the world's step. Default 10 ms, as config/pursuit.yaml's.
	Step time.Duration
	// Chunk is the CPU time the planner computes per plan. Default 1 s.
	Chunk time.Duration
	// RunOpts: Results defaults to Src/results/bench.
	RunOpts
}

// withDefaults fills PursuitOpts' zero values (Src and SelfExe aside).
func (o PursuitOpts) withDefaults() PursuitOpts {
	if o.Trials <= 0 {
		o.Trials = 2
	}
	if o.Duration <= 0 {
		o.Duration = 20 * time.Second
	}
	if o.Period <= 0 {
		o.Period = 10 * time.Millisecond
	}
	if o.Quantum <= 0 {
		o.Quantum = 10 * time.Millisecond
	}
	if o.Step <= 0 {
		o.Step = 10 * time.Millisecond
	}
	if o.Chunk <= 0 {
		o.Chunk = time.Second
	}
	o.RunOpts = o.RunOpts.withDefaults(2 * time.Minute)
	return o
}

// The targets Pursuit judges its runs by: the coordinator's CPU per
// controller activation and its share of all CPU, every CPU of tcs's
// counted (overhead.coordinator_s, overhead.fraction).
const (
	PursuitTargetUSPerActivation = 50
	PursuitTargetFraction        = 0.01
)

// PursuitResult is what Pursuit measured, as written to its JSON file.
// Each trial is an ActivationCase of kind "c" with 3 clients; its
// activations are the two controllers'.
type PursuitResult struct {
	ResultHead         // Bench "pursuit"
	Mode       string  `json:"mode"` // consistent
	PeriodS    float64 `json:"period_s"`
	QuantumS   float64 `json:"quantum_s"`
	StepS      float64 `json:"step_s"`
	ChunkS     float64 `json:"chunk_s"`
	// DurationS is each trial's virtual time.
	DurationS float64 `json:"duration_s"`
	// TargetUSPerActivation and TargetFraction are the targets; Met says
	// whether every trial met both.
	TargetUSPerActivation float64          `json:"target_us_per_activation"`
	TargetFraction        float64          `json:"target_fraction"`
	Met                   bool             `json:"met"`
	WallS                 float64          `json:"wall_s"`
	Trials                []ActivationCase `json:"trials"`
}

// Pursuit measures the coordinator's cost on paper 000's pursuit workload
// with native C clients, the workload the papers' original coordinator
// was compared on: robot prey runs a 100 Hz controller
// (controllers/c/pd.c); robot predator runs a 100 Hz controller that
// takes its target from the newest plan (pd.c --plan, priority 10) and a
// best-effort planner that never sleeps and writes a plan per o.Chunk of
// its CPU (controllers/c/planner.c, priority 0), in consistent mode with
// quantum o.Quantum, each robot driving a pendulum (the world is not what
// is measured). The planner keeps the simulation CPU busy, so the
// coordinator's share of the CPU is what it takes from the robot's
// computation.
//
// Each trial is `tcs run` (o.SelfExe, --no-record) of the scenario. It
// prints a table of the trials with the targets (≤ 50 µs of tcs's CPU per
// controller activation and ≤ 1 % of all CPU, every CPU counted) and
// writes the same as JSON to o.Results/pursuit-<date>-<commit>.json.
// Runs are kept as Activation keeps them; when ctx ends the run under way
// is stopped and no JSON is written.
func Pursuit(ctx context.Context, w io.Writer, o PursuitOpts) (*PursuitResult, error) {
	o = o.withDefaults()
	start := time.Now()
	if err := runPrereqs("bench pursuit", &o.SelfExe, &o.Src); err != nil {
		return nil, err
	}
	if o.Src == "" {
		return nil, errors.New("bench pursuit: no tcs source tree here (controllers/c's sources): run from the repository or give -src")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		return nil, errors.New("bench pursuit: gcc missing (apt-get install gcc libc6-dev)")
	}
	if o.Results == "" {
		o.Results = filepath.Join(o.Src, "results", "bench")
	}
	runs, err := os.MkdirTemp("", "tcs-bench-pursuit-")
	if err != nil {
		return nil, fmt.Errorf("bench pursuit: %w", err)
	}
	res := &PursuitResult{ResultHead: newHead("pursuit", o.Src, start), Mode: "consistent",
		PeriodS: o.Period.Seconds(), QuantumS: o.Quantum.Seconds(), StepS: o.Step.Seconds(), ChunkS: o.Chunk.Seconds(),
		DurationS: o.Duration.Seconds(), TargetUSPerActivation: PursuitTargetUSPerActivation, TargetFraction: PursuitTargetFraction}

	build := filepath.Join(runs, "build")
	native := filepath.Join(o.Src, "coordinator", "native")
	pd, planner := filepath.Join(build, "pd"), filepath.Join(build, "planner")
	for _, b := range []struct{ what, bin, src string }{{"native C pd", pd, "pd.c"}, {"native C planner", planner, "planner.c"}} {
		fmt.Fprintf(o.Progress, "bench pursuit: build %s\n", b.what)
		if err := buildIn(build, b.what, "gcc", "-O2", "-Wall", "-std=gnu11", "-I", native, "-o", b.bin,
			filepath.Join(o.Src, "controllers", "c", b.src), "-lm"); err != nil {
			return nil, fmt.Errorf("bench pursuit: %w (folder %s kept)", err, runs)
		}
	}
	var failed []string
	for k := 1; k <= o.Trials && ctx.Err() == nil; k++ {
		c := pursuitTrial(ctx, k, pd, planner, o, runs)
		if c.Status != CaseOK {
			failed = append(failed, fmt.Sprintf("trial %d: %s", k, c.Reason))
			fmt.Fprintf(o.Progress, "bench pursuit: trial %d: failed: %s\n", k, c.Reason)
		} else {
			fmt.Fprintf(o.Progress, "bench pursuit: trial %d: %.1f µs per activation, %.2f %% of the CPU (all counted), %.1f s wall\n",
				k, c.AllUSPerActivation, 100*c.OverheadFractionAll, c.WallS)
		}
		res.Trials = append(res.Trials, c)
	}
	res.Met = pursuitMet(res.Trials)
	res.WallS = time.Since(start).Seconds()
	writePursuitTable(w, res)

	var errs []error
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("bench pursuit: interrupted (%w): no JSON written", context.Cause(ctx)))
	} else if o.Results != "-" {
		if path, err := res.write(o.Results, res); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(w, "json: %s\n", path)
		}
	}
	if len(failed) > 0 || o.Keep {
		fmt.Fprintf(w, "runs: %s (kept)\n", runs)
	} else if err := os.RemoveAll(runs); err != nil {
		errs = append(errs, fmt.Errorf("bench pursuit: remove the runs: %w", err))
	}
	if len(failed) > 0 {
		errs = append([]error{fmt.Errorf("bench pursuit: %d of %d trials failed:\n  %s", len(failed), o.Trials,
			strings.Join(failed, "\n  "))}, errs...)
	}
	return res, errors.Join(errs...)
}

// pursuitTrial runs trial k in runs/trial-k and reads its summary; the
// planner has no activations, so the per-activation figures are per
// controller activation.
func pursuitTrial(ctx context.Context, k int, pd, planner string, o PursuitOpts, runs string) ActivationCase {
	c := ActivationCase{Kind: KindC, Clients: 3, RunDir: filepath.Join(runs, fmt.Sprintf("trial-%d", k))}
	return runScenario(ctx, c, pursuitScenario(pd, planner, o), os.Environ(), o.RunOpts,
		pursuitWall(o)+2*time.Minute, fmt.Sprintf("bench pursuit: trial %d", k))
}

// pursuitWall is the workload's wall limit: as tcs run's default.
func pursuitWall(o PursuitOpts) time.Duration { return 30*time.Second + 20*o.Duration }

// pursuitScenario is the workload's scenario (see Pursuit) with the
// native C binaries pd and planner.
func pursuitScenario(pd, planner string, o PursuitOpts) string {
	q := strconv.Quote
	return fmt.Sprintf(`name: bench-pursuit
mode: consistent
duration: %v
quantum: %v
wall_limit: %v
dynamics:
  model: pendulum
  step: %v
robots:
  - name: prey
    clients:
      - name: prey
        cmd: [%s]
        api: native
        class: periodic
        period: %v
        priority: 10
  - name: predator
    clients:
      - name: controller
        cmd: [%s, "--plan"]
        api: native
        class: periodic
        period: %v
        priority: 10
        subscribes: [1]
      - name: planner
        cmd: [%s, "--chunk", %s]
        api: native
        class: best-effort
        priority: 0
`, o.Duration, o.Quantum, pursuitWall(o), o.Step, q(pd), o.Period, q(pd), o.Period,
		q(planner), q(strconv.FormatFloat(o.Chunk.Seconds(), 'g', -1, 64)))
}

// pursuitMet reports whether every trial succeeded and met both targets.
func pursuitMet(trials []ActivationCase) bool {
	for _, c := range trials {
		if c.Status != CaseOK || c.AllUSPerActivation > PursuitTargetUSPerActivation ||
			c.OverheadFractionAll > PursuitTargetFraction {
			return false
		}
	}
	return len(trials) > 0
}

// writePursuitTable prints res as a table, a row per trial, and the
// verdict on the targets.
func writePursuitTable(w io.Writer, res *PursuitResult) {
	fmt.Fprintf(w, "pursuit: paper 000's pursuit workload with native C clients: two %g Hz controllers (one taking plans) "+
		"and a planner computing %v per plan, world step %v, q %v, %s mode, %v virtual per trial\n",
		1/res.PeriodS, seconds(res.ChunkS), seconds(res.StepS), seconds(res.QuantumS), res.Mode, seconds(res.DurationS))
	fmt.Fprintln(w, "  sim: tcs on the simulation CPU (overhead.sim_s); all: tcs on every CPU (overhead.coordinator_s); "+
		"per controller activation; ovh: coordinator / (coordinator + clients + dynamics)")
	fmt.Fprintf(w, "%-6s %11s %10s  %7s %7s  %7s %7s  %7s %7s  %6s %9s %9s\n", "trial", "activations", "dispatches",
		"µs/act", "all", "µs/disp", "all", "ovh", "all", "rtf", "Δ p99", "misses")
	for i, c := range res.Trials {
		if c.Status != CaseOK {
			fmt.Fprintf(w, "%-6d  %s: %s\n", i+1, c.Status, c.Reason)
			continue
		}
		fmt.Fprintf(w, "%-6d %11d %10d  %7.1f %7.1f  %7.1f %7.1f  %6.2f%% %6.2f%%  %6.2f %9v %9s\n", i+1,
			c.Activations, c.Dispatches, c.USPerActivation, c.AllUSPerActivation, c.USPerDispatch, c.AllUSPerDispatch,
			100*c.OverheadFraction, 100*c.OverheadFractionAll, c.RTF, seconds(c.DriftP99S).Round(time.Microsecond),
			fmt.Sprintf("%d (%d)", c.DeadlineMisses, c.DeadlineMissesHost))
	}
	verdict := "not met"
	if res.Met {
		verdict = "met by every trial"
	}
	fmt.Fprintf(w, "targets: ≤ %g µs per activation and ≤ %g %% of the CPU, all counted: %s\n",
		res.TargetUSPerActivation, 100*res.TargetFraction, verdict)
	fmt.Fprintf(w, "wall time: %.1f s (%s)\n", res.WallS, res.Host)
}
