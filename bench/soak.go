package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/report"
)

// SoakKind is how many clients of one kind (ActivationKinds' names) a
// soak runs.
type SoakKind struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// DefaultSoakMix is the soak's 16 clients: native C and Go, and the three
// ROS 1 client libraries.
var DefaultSoakMix = []SoakKind{{KindC, 4}, {KindGo, 4}, {KindGoroslib, 4}, {KindRoscpp, 2}, {KindRospy, 2}}

// SoakOpts configures Soak. Zero values take the documented defaults.
type SoakOpts struct {
	// Minutes is the run's virtual duration in minutes; at max_rtf 1 it is
	// as much wall time (more if the run cannot keep up). Default 60.
	Minutes int
	// Every is the sampling period. Default 1 min: the samples are
	// "minutes" throughout.
	Every time.Duration
	// Warmup is how many samples at the start are left out of the fits
	// (start-up: the heap and the recording's buffers growing to their
	// working size). Default Minutes/10 (6 of 60, none of a short trial).
	// Negative: none.
	Warmup int
	// Mix is the clients, one per robot. Default DefaultSoakMix.
	Mix []SoakKind
	// Period is every controller's period (default 10 ms), Quantum the
	// run's quantum (default 1 ms), Step the pendulum's step (default
	// 5 ms: every ROS node is handed a JointState at each step).
	Period, Quantum, Step time.Duration
	// RunOpts: Results is the folder of the CSV, report and plot (default
	// Src/results/soak); Keep keeps the run's folder, whose recording is
	// about 3.5 GB per hour; Wait's default is 10 min; Progress receives
	// a line per sample.
	RunOpts
}

func (o SoakOpts) withDefaults() SoakOpts {
	if o.Minutes <= 0 {
		o.Minutes = 60
	}
	if o.Every <= 0 {
		o.Every = time.Minute
	}
	if o.Warmup == 0 {
		o.Warmup = o.Minutes / 10
	}
	o.Warmup = max(o.Warmup, 0)
	if len(o.Mix) == 0 {
		o.Mix = DefaultSoakMix
	}
	if o.Period <= 0 {
		o.Period = 10 * time.Millisecond
	}
	if o.Quantum <= 0 {
		o.Quantum = time.Millisecond
	}
	if o.Step <= 0 {
		o.Step = 5 * time.Millisecond
	}
	o.RunOpts = o.RunOpts.withDefaults(10 * time.Minute)
	return o
}

// SoakResult is what a soak measured.
type SoakResult struct {
	Date     string `json:"date"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified,omitempty"`
	Host     string `json:"host"`
	// Scenario is the scenario the run ran (its client commands name this
	// machine's builds).
	Scenario string     `json:"scenario"`
	Mix      []SoakKind `json:"mix"`
	Minutes  int        `json:"minutes"`
	EveryS   float64    `json:"every_s"`
	Warmup   int        `json:"warmup"`
	// Summary is the run's summary.json (nil when it wrote none).
	Summary *report.Summary `json:"summary,omitempty"`
	// RunErr is how the run failed, "" when it completed.
	RunErr string `json:"run_error,omitempty"`
	// WallS is the soak's wall time, builds included.
	WallS   float64      `json:"wall_s"`
	Samples []SoakSample `json:"samples"`
	Minute  []SoakMinute `json:"recording_minutes"`
	Series  []SoakSeries `json:"series"`
	Verdict string       `json:"verdict"`
	Files   []string     `json:"files"`
	RunDir  string       `json:"run_dir,omitempty"`
	// HeapGrowth is the top of pprof's in-use space of the last heap
	// profile less the first (the fit's first sample): where a live heap
	// that grew grew.
	HeapGrowth string        `json:"heap_growth,omitempty"`
	bound      time.Duration // how long the run may take
}

// Flat reports whether every series is flat and the run completed.
func (r *SoakResult) Flat() bool {
	if r.RunErr != "" || r.Summary == nil || r.Summary.Ended != report.EndCompleted || len(r.Series) == 0 {
		return false
	}
	for _, s := range r.Series {
		if s.Verdict != VerdictFlat {
			return false
		}
	}
	return true
}

// Soak runs the soak of issue 19: one `tcs run` of o.Mix's clients (16
// by default: native C and Go, goroslib, roscpp and rospy PD controllers,
// each on its own pendulum) in consistent mode at max_rtf 1 for
// o.Minutes of virtual time, so as long in wall time. Every o.Every it
// samples the tcs process: RSS and threads (/proc/PID/status), open fds
// (/proc/PID/fd) and goroutines (its --pprof server). Afterwards it reads
// the run's recording for Δ per minute (/tcs/run_status) and the
// activations' lateness (/tcs/progress), fits a least-squares line through
// each series past the warm-up, and judges it flat when the line's change
// over the fit is within twice the residuals' standard deviation (or the
// series' resolution: one fd, goroutine or thread).
//
// It writes <date>-<commit>.csv, .md and .png into o.Results and a short
// report to w. The run's folder (in the temporary directory) is removed
// after a soak that succeeded unless o.Keep. When ctx ends the run is
// stopped (SIGTERM) and what was sampled is still written. The error is
// not nil when the run failed or a series was not flat.
func Soak(ctx context.Context, w io.Writer, o SoakOpts) (*SoakResult, error) {
	o = o.withDefaults()
	start := time.Now()
	total := 0
	for _, k := range o.Mix {
		if !slices.Contains(ActivationKinds, k.Kind) || k.Count < 1 {
			return nil, fmt.Errorf("soak: client kind %q × %d: want a count ≥ 1 of one of %s", k.Kind, k.Count, strings.Join(ActivationKinds, ", "))
		}
		if k.Kind == KindRclcpp || k.Kind == KindRclpy {
			return nil, fmt.Errorf("soak: client kind %q: the soak's ROS clients are ROS 1 (one run has one transport)", k.Kind)
		}
		total += k.Count
	}
	if err := runPrereqs("soak", &o.SelfExe, &o.Src); err != nil {
		return nil, err
	}
	if o.Results == "" {
		if o.Src == "" {
			return nil, errors.New("soak: no tcs source tree here: run from the repository or give -src or -results")
		}
		o.Results = filepath.Join(o.Src, "results", "soak")
	}
	runs, err := os.MkdirTemp("", "tcs-soak-")
	if err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	res := &SoakResult{Date: start.Format("2006-01-02"), Host: hostLine(), Mix: o.Mix, Minutes: o.Minutes,
		EveryS: o.Every.Seconds(), Warmup: o.Warmup, RunDir: filepath.Join(runs, "run")}
	res.Commit, res.Modified = commitOf(o.Src)

	kinds := map[string]*activationKind{}
	for _, k := range o.Mix {
		fmt.Fprintf(o.Progress, "soak: prepare %s\n", k.Kind)
		a := prepareKind(k.Kind, o.Src, filepath.Join(runs, "build", k.Kind))
		if a.skip != "" {
			return nil, fmt.Errorf("soak: %s clients cannot run here: %s (leave them out with -mix)", k.Kind, a.skip)
		}
		if a.err != nil {
			return nil, fmt.Errorf("soak: %w (in %s)", a.err, runs)
		}
		kinds[k.Kind] = a
	}
	master := ""
	for _, k := range o.Mix {
		if kinds[k.Kind].ros == rosOne {
			if master, err = masterURI(); err != nil {
				return nil, fmt.Errorf("soak: %w", err)
			}
			break
		}
	}
	if err := os.MkdirAll(res.RunDir, 0o755); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	res.Scenario, res.bound = soakScenario(o, kinds, master)
	scen := filepath.Join(res.RunDir, "scenario.yaml")
	if err := os.WriteFile(scen, []byte(res.Scenario), 0o644); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	fmt.Fprintf(o.Progress, "soak: tcs run %s: %d clients, %d min virtual at max_rtf 1, a sample every %v (bounded to %v)\n",
		scen, total, o.Minutes, o.Every, res.bound)

	runErr := soakRun(ctx, o, res, scen)
	if runErr != nil {
		res.RunErr = runErr.Error()
	}
	if b, err := os.ReadFile(filepath.Join(res.RunDir, "summary.json")); err == nil {
		var s report.Summary
		if err := json.Unmarshal(b, &s); err == nil {
			res.Summary = &s
			if s.Ended != report.EndCompleted && res.RunErr == "" {
				res.RunErr = "the run ended " + strconv.Quote(s.Ended)
			}
		}
	} else if res.RunErr == "" {
		res.RunErr = "no summary.json: " + err.Error()
	}
	// Samples are taken from tcs's start; virtual time began after the
	// clients' start-up and ran wall_s: a sample later than wall_s is past
	// its end.
	for i := range res.Samples {
		res.Samples[i].InRun = res.Summary == nil || res.Samples[i].T <= res.Summary.WallS
	}
	var errs []error
	if res.RunErr != "" {
		why := runError(filepath.Join(res.RunDir, "soak.log"))
		if why != "" && !strings.Contains(res.RunErr, why) {
			res.RunErr += ": " + why
		}
		errs = append(errs, fmt.Errorf("soak: the run failed: %s (logs in %s)", res.RunErr, res.RunDir))
	}
	if rec := filepath.Join(res.RunDir, "run.mcap"); fileExists(rec) {
		fmt.Fprintf(o.Progress, "soak: reading %s\n", rec)
		if res.Minute, err = readSoakRecording(rec, o.Every.Nanoseconds()); err != nil {
			errs = append(errs, fmt.Errorf("soak: %w", err))
		}
	}
	res.Series = soakSeries(res.Samples, res.Minute, o.Warmup+1, o.Every)
	res.WallS = time.Since(start).Seconds()
	res.Verdict = soakVerdict(res)
	res.HeapGrowth = heapGrowth(res.RunDir, 20)
	if len(res.Samples) > 0 {
		files, err := writeSoakFiles(o.Results, res)
		res.Files = files
		if err != nil {
			errs = append(errs, err)
		}
	} else {
		errs = append(errs, errors.New("soak: no sample taken: nothing written"))
	}
	writeSoakText(w, res)
	if !res.Flat() && res.RunErr == "" {
		errs = append(errs, errors.New("soak: "+res.Verdict))
	}
	if len(errs) > 0 || o.Keep {
		fmt.Fprintf(w, "run: %s (kept)\n", res.RunDir)
	} else {
		if err := os.RemoveAll(runs); err != nil {
			errs = append(errs, fmt.Errorf("soak: remove the run: %w", err))
		}
		res.RunDir = ""
	}
	return res, errors.Join(errs...)
}

// soakRun runs `tcs run scen` with --pprof and samples the process every
// o.Every until it exits, into res.Samples.
func soakRun(ctx context.Context, o SoakOpts, res *SoakResult, scen string) error {
	logPath := filepath.Join(res.RunDir, "soak.log")
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(ctx, res.bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.SelfExe, "run", scen, "--out", res.RunDir, "--quiet",
		"--wait", o.Wait.String(), "--pprof", "127.0.0.1:0")
	cmd.Env = rosOneEnv()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start tcs run: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	finish := func(err error) error {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("still running after %v (stopped): %w", res.bound, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted (stopped): %w", err)
		}
		return err
	}
	// The samples' clock starts once the coordinator holds the simulation
	// CPU: a wait for another run's lock is not part of the run.
	tcsLog := filepath.Join(res.RunDir, "tcs.log")
	poll := time.NewTicker(200 * time.Millisecond)
	for !coordinatorStarted(tcsLog) {
		select {
		case err := <-done:
			poll.Stop()
			return finish(err)
		case <-poll.C:
		}
	}
	poll.Stop()
	t0 := time.Now()

	pid := cmd.Process.Pid
	url := ""
	client := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(o.Every)
	defer tick.Stop()
	for minute := 1; ; minute++ {
		select {
		case err := <-done:
			return finish(err)
		case <-tick.C:
		}
		if url == "" {
			url = pprofURL(logPath)
		}
		st, err := linux.ReadStatus(pid)
		if err != nil { // gone, or a zombie: the run is ending
			return finish(<-done)
		}
		s := SoakSample{Minute: minute, T: time.Since(t0).Seconds(), RSSKB: st.RSSKB, RSSAnonKB: st.RSSAnonKB,
			Threads: st.Threads, Fds: -1, Goroutines: -1, HeapAllocKB: -1, NextGCKB: -1, NumGC: -1}
		if n, err := linux.OpenFds(pid); err == nil {
			s.Fds = int64(n)
		}
		if k, err := linux.FdKinds(pid); err == nil {
			s.FdKinds = fdKindsString(k)
		}
		s.ClientThreads = descendantThreads(pid)
		if url != "" {
			if n, err := goroutines(client, url); err == nil {
				s.Goroutines = n
			} else {
				fmt.Fprintf(o.Progress, "soak: sample %d: %v\n", minute, err)
			}
			if m, err := heapStats(client, url); err == nil {
				s.HeapAllocKB, s.NextGCKB, s.NumGC = m.heapAlloc/1024, m.nextGC/1024, m.numGC
			} else {
				fmt.Fprintf(o.Progress, "soak: sample %d: %v\n", minute, err)
			}
			// The heap profiles of the fit's first sample and of the
			// latest: what the live heap gained in between.
			name := heapLast
			if minute == o.Warmup+1 {
				name = heapFirst
			}
			if err := saveHeapProfile(client, url, filepath.Join(res.RunDir, name)); err != nil {
				fmt.Fprintf(o.Progress, "soak: sample %d: %v\n", minute, err)
			}
		}
		res.Samples = append(res.Samples, s)
		fmt.Fprintf(o.Progress, "soak: sample %d (%.0f s): RSS %.1f MiB (anon %.1f; Go heap %.1f MiB, %d GCs), %d fds, %d goroutines, %d threads\n",
			minute, s.T, float64(s.RSSKB)/1024, float64(s.RSSAnonKB)/1024, float64(s.HeapAllocKB)/1024, s.NumGC, s.Fds, s.Goroutines, s.Threads)
	}
}

// coordinatorStarted reports whether the run's tcs.log says the
// coordinator started (it holds the simulation CPU's lock).
func coordinatorStarted(tcsLog string) bool {
	b, err := os.ReadFile(tcsLog)
	return err == nil && bytes.Contains(b, []byte(`"message":"coordinator started"`))
}

var pprofLine = regexp.MustCompile(`tcs: Go runtime profiles at (http://\S+/debug/pprof/)`)

// pprofURL finds the profiles' address in the run's output ("" before tcs
// printed it).
func pprofURL(logPath string) string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	if m := pprofLine.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// goroutines asks the --pprof server at url for the goroutine count.
func goroutines(c *http.Client, url string) (int64, error) {
	resp, err := c.Get(url + "goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%sgoroutine?debug=1: %s", url, resp.Status)
	}
	n, err := parseGoroutines(resp.Body)
	_, _ = io.Copy(io.Discard, resp.Body)
	return n, err
}

// heapStats asks the --pprof server at url for the Go runtime's
// MemStats (a heap profile with debug=1: it stops the world for a moment,
// once a sample).
func heapStats(c *http.Client, url string) (memStats, error) {
	resp, err := c.Get(url + "heap?debug=1")
	if err != nil {
		return memStats{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return memStats{}, fmt.Errorf("%sheap?debug=1: %s", url, resp.Status)
	}
	return parseMemStats(resp.Body)
}

// The heap profiles a soak keeps in its run folder.
const (
	heapFirst = "heap-first.pb.gz"
	heapLast  = "heap-last.pb.gz"
)

// saveHeapProfile writes the run's heap profile (pprof's protobuf) to path.
func saveHeapProfile(c *http.Client, url, path string) error {
	resp, err := c.Get(url + "heap")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%sheap: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// heapGrowth is the top of `go tool pprof -top` of the in-use space the
// last heap profile has more than the first: where a live heap that grew
// grew. "" when either is missing or go is not at hand.
func heapGrowth(runDir string, lines int) string {
	first, last := filepath.Join(runDir, heapFirst), filepath.Join(runDir, heapLast)
	if !fileExists(first) || !fileExists(last) {
		return ""
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-base", first, last).Output()
	if err != nil {
		return ""
	}
	rows := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(rows[:min(len(rows), lines)], "\n")
}

// descendantThreads counts the threads of pid's descendants (the clients,
// the block detector and what they started): tcs keeps per-thread /proc
// files open for the clients' threads, so its open fds follow this.
// -1 when /proc cannot tell.
func descendantThreads(pid int) int64 {
	var n int64
	seen := map[int]bool{}
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		tids, err := linux.Tasks(p)
		if err != nil {
			continue // gone
		}
		if p != pid {
			n += int64(len(tids))
		}
		for _, tid := range tids {
			kids, err := linux.Children(p, tid)
			if err != nil {
				continue
			}
			for _, k := range kids {
				if !seen[k] {
					seen[k] = true
					todo = append(todo, k)
				}
			}
		}
	}
	if len(seen) == 0 {
		return -1
	}
	return n
}

// fdKindsString writes FdKinds' counts as "kind=n" sorted by kind.
func fdKindsString(k map[string]int) string {
	keys := make([]string, 0, len(k))
	for name := range k {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, name := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", name, k[name])
	}
	return b.String()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// soakScenario is the soak's scenario: one robot per client, each driving
// its own pendulum with a periodic PD controller of its kind at o.Period,
// consistent mode, max_rtf 1, o.Minutes of virtual time. It returns the
// YAML and how long the run may take: its wall limit (twice the virtual
// duration and 2 min), the ROS start-up (60 s) and 3 min to start and stop.
func soakScenario(o SoakOpts, kinds map[string]*activationKind, master string) (string, time.Duration) {
	var b strings.Builder
	d := time.Duration(o.Minutes) * time.Minute
	wall := 2*d + 2*time.Minute
	startup := time.Minute
	fmt.Fprintf(&b, "name: soak\nmode: consistent\nduration: %v\nquantum: %v\nmax_rtf: 1\nwall_limit: %v\n", d, o.Quantum, wall)
	if master != "" {
		fmt.Fprintf(&b, "ros:\n  master: %s\n  startup_timeout: %v\n", master, startup)
	}
	fmt.Fprintf(&b, "dynamics:\n  model: pendulum\n  step: %v\n  params: {mass: 1.0, length: 1.0, max_torque: 5.0}\nrobots:\n", o.Step)
	j := 0
	for _, k := range o.Mix {
		a := kinds[k.Kind]
		api := "native"
		if a.ros != rosNone {
			api = "ros"
		}
		var q []string
		for _, s := range a.argv(o.Period) {
			q = append(q, strconv.Quote(s))
		}
		for range k.Count {
			fmt.Fprintf(&b, "  - name: r%02d\n    clients:\n      - name: %s%02d\n        cmd: [%s]\n        api: %s\n        class: periodic\n        period: %v\n        priority: 10\n",
				j, k.Kind, j, strings.Join(q, ", "), api, o.Period)
			j++
		}
	}
	return b.String(), wall + startup + 3*time.Minute
}

// soakVerdict is one line: flat, or what was not and why.
func soakVerdict(r *SoakResult) string {
	if r.RunErr != "" {
		return "no verdict: the run failed (" + r.RunErr + ")"
	}
	var bad, short []string
	for _, s := range r.Series {
		switch s.Verdict {
		case VerdictFlat:
		case VerdictTooShort:
			short = append(short, s.Name)
		default:
			bad = append(bad, fmt.Sprintf("%s %s %s over the fit (noise %s)", s.Name, s.Verdict, formatUnit(s.Fit.Change, s.Unit, true), formatUnit(s.Noise, s.Unit, false)))
		}
	}
	switch {
	case len(r.Series) == 0:
		return "no verdict: no series"
	case len(bad) > 0:
		return "not flat: " + strings.Join(bad, "; ")
	case len(short) > 0:
		return "no verdict: too few samples past the warm-up for " + strings.Join(short, ", ")
	}
	return "flat: RSS, open fds, goroutines and threads show no trend beyond their noise, and Δ p99 is stable"
}
