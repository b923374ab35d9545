package bench

import (
	"context"
	_ "embed"
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

	"github.com/tcs-robotics/tcs/coordinator/driver"
	"github.com/tcs-robotics/tcs/coordinator/linux"
)

//go:embed c/dispatch.c
var dispatchC []byte

// DispatchOpts configures Dispatch. Zero values take the documented
// defaults.
type DispatchOpts struct {
	// CPU is the simulation CPU; -1 means the last online CPU (0 is CPU 0).
	CPU int
	// Base is the SCHED_FIFO base priority. Default 80.
	Base int
	// SelfExe is the tcs binary (for `tcs __spawn`).
	// Default os.Executable().
	SelfExe string
	// Duration bounds each dispatch-cycle measurement. Default 1 s.
	Duration time.Duration
	// Quanta is the number of 1 ms quanta of the take-back measurement.
	// Default 2000.
	Quanta int
	// Clients are the client counts of the dispatch-cycle measurements.
	// Default 2 and 8.
	Clients []int
	// CC is the C compiler. Default "gcc".
	CC string
	// LockTimeout is how long to wait for the CPU lock. Default 10 s.
	LockTimeout time.Duration
	// LogDir receives the clients' logs. Default a temporary directory,
	// removed afterwards.
	LogDir string
}

// Stats summarizes samples in ns.
type Stats struct {
	N             int
	Med, P99, Max int64
}

func (s Stats) String() string {
	us := func(v int64) string { return strconv.FormatFloat(float64(v)/1e3, 'f', 2, 64) }
	return fmt.Sprintf("%8s %8s %9s µs  (n=%d)", us(s.Med), us(s.P99), us(s.Max), s.N)
}

func stats(v []int64) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	slices.Sort(v)
	return Stats{N: len(v), Med: v[len(v)/2], P99: v[len(v)*99/100], Max: v[len(v)-1]}
}

// DispatchResult is what Dispatch measured.
type DispatchResult struct {
	Go, C    map[int]Stats // dispatch cycle by number of clients
	Late     Stats         // Wake.Late of a busy client with a 1 ms budget
	LeakNs   int64         // CPU the waiting busy client used while the other was dispatched
	Throttle int           // quanta whose Late exceeded 1 ms (host or RT throttling)
	Slice    SliceStats    // a computing client's 1 ms slice with a private clock, in C
}

// SliceStats is the C reference of a computing client's slice (a planner
// under a private clock), medians in ns over N slices: the coordinator
// thread's CPU per slice (its wake by the timer included), and the wall
// time of three of its parts: the clock frame's send over loopback TCP to
// a reader thread it wakes, the requeue of the client's main thread (two
// priority changes) and the timer's arming.
type SliceStats struct {
	N                    int
	CPU, Send, Swap, Arm int64
}

// Dispatch runs the dispatch benchmark and writes a report to w.
func Dispatch(w io.Writer, opts DispatchOpts) error {
	_, err := RunDispatch(w, opts)
	return err
}

// RunDispatch is Dispatch returning the figures too.
func RunDispatch(w io.Writer, opts DispatchOpts) (*DispatchResult, error) {
	if opts.Base == 0 {
		opts.Base = 80
	}
	if opts.Duration == 0 {
		opts.Duration = time.Second
	}
	if opts.Quanta == 0 {
		opts.Quanta = 2000
	}
	if len(opts.Clients) == 0 {
		opts.Clients = []int{2, 8}
	}
	if opts.CC == "" {
		opts.CC = "gcc"
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = 10 * time.Second
	}
	if opts.SelfExe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("bench dispatch: find the tcs binary: %w", err)
		}
		opts.SelfExe = exe
	}
	online, err := linux.OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("bench dispatch: %w", err)
	}
	if opts.CPU < 0 && len(online) > 0 {
		opts.CPU = online[len(online)-1]
	}
	if err := linux.RequireCPUs(opts.CPU); err != nil {
		return nil, fmt.Errorf("bench dispatch: %w", err)
	}
	other := online[0]
	if other == opts.CPU {
		other = online[1]
	}
	tmp, err := os.MkdirTemp("", "tcs-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench dispatch: %w", err)
	}
	defer os.RemoveAll(tmp)
	if opts.LogDir == "" {
		opts.LogDir = tmp
	}
	cbin := filepath.Join(tmp, "dispatch")
	src := filepath.Join(tmp, "dispatch.c")
	if err := os.WriteFile(src, dispatchC, 0o644); err != nil {
		return nil, fmt.Errorf("bench dispatch: %w", err)
	}
	if out, err := exec.Command(opts.CC, "-O2", "-pthread", "-o", cbin, src).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench dispatch: compile the C cycle with %s: %w\n%s", opts.CC, err, out)
	}

	res := &DispatchResult{Go: map[int]Stats{}, C: map[int]Stats{}}
	fmt.Fprintf(w, "dispatch cycle (raise, lower, CPU clock, timer arm, wait, client blocks, detector wakes coordinator), CPU %d, base %d\n", opts.CPU, opts.Base)
	fmt.Fprintf(w, "%-22s %8s %8s %9s\n", "", "median", "p99", "max")
	for _, n := range opts.Clients {
		g, err := goCycle(opts, n)
		if err != nil {
			return nil, err
		}
		res.Go[n] = g
		c, err := cCycle(opts, cbin, other, n)
		if err != nil {
			return nil, err
		}
		res.C[n] = c
		fmt.Fprintf(w, "Go, %d clients          %s\n", n, g)
		fmt.Fprintf(w, "C,  %d clients          %s\n", n, c)
		fmt.Fprintf(w, "Go/C median ratio, %d clients: %.2f (target ≤ 1.5)\n", n, float64(g.Med)/float64(c.Med))
	}
	sl, err := cSlice(opts, cbin, other)
	if err != nil {
		return nil, err
	}
	res.Slice = sl
	us := func(v int64) string { return strconv.FormatFloat(float64(v)/1e3, 'f', 2, 64) }
	fmt.Fprintf(w, "a computing client's 1 ms slice in C (timer wake, its CPU clock, a 12-byte clock frame sent over loopback TCP to a reader thread it wakes, its main thread requeued, the timer armed): %s µs of CPU (median of %d); send %s, requeue %s, arm %s µs\n",
		us(sl.CPU), sl.N, us(sl.Send), us(sl.Swap), us(sl.Arm))
	late, leak, throttled, err := takeBack(opts)
	if err != nil {
		return nil, err
	}
	res.Late, res.LeakNs, res.Throttle = late, leak, throttled
	fmt.Fprintf(w, "late take-back, busy clients, 1 ms budget: %s  (target p99 ≤ 100 µs; %d quanta > 1 ms late)\n", late, throttled)
	fmt.Fprintf(w, "leak (CPU of the waiting busy client while the other ran): %d ns\n", leak)
	return res, nil
}

// onDispatchThread runs f on a fresh goroutine locked to its OS thread
// (the mechanism pins and raises that thread).
func onDispatchThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := f()
		if pol, _, perr := linux.Policy(0); perr == nil && pol == linux.SchedOther {
			runtime.UnlockOSThread()
		} // else the thread dies with the goroutine, taking its priority along
		done <- err
	}()
	return <-done
}

func newMech(opts DispatchOpts) (*driver.Mechanism, error) {
	return driver.New(driver.Conf{CPU: opts.CPU, Base: opts.Base, SelfExe: opts.SelfExe, LogDir: opts.LogDir,
		LockTimeout: opts.LockTimeout, KillGrace: 200 * time.Millisecond})
}

func goCycle(opts DispatchOpts, n int) (st Stats, err error) {
	err = onDispatchThread(func() (err error) {
		m, err := newMech(opts)
		if err != nil {
			return fmt.Errorf("bench dispatch: %w", err)
		}
		defer func() { err = errors.Join(err, m.Close()) }()
		procs := make([]*driver.Proc, n)
		for i := range procs {
			if procs[i], err = m.Spawn(driver.SpawnSpec{Name: "sleeper" + strconv.Itoa(i), Argv: []string{"sleep", "1000"}}); err != nil {
				return fmt.Errorf("bench dispatch: %w", err)
			}
		}
		// Let every client exec and block once.
		for _, p := range procs {
			for k := 0; ; k++ {
				w, err := m.Run(p, int64(50*time.Millisecond))
				if err != nil {
					return err
				}
				if w.Blocked {
					break
				}
				if w.Exited != nil || k > 100 {
					return fmt.Errorf("bench dispatch: client %s does not block (log %s)", p.Name, p.LogPath)
				}
			}
		}
		samples := make([]int64, 0, 1<<21)
		var clk linux.Clock
		start := clk.Monotonic()
		for i := 0; len(samples) < cap(samples); i++ {
			t0 := clk.Monotonic()
			w, err := m.Run(procs[i%n], int64(time.Second))
			t1 := clk.Monotonic()
			if err != nil {
				return err
			}
			if !w.Blocked && !w.Timer && w.Exited == nil && w.N == 0 {
				// Its exec ended (a client that blocked inside its exec,
				// paging in, finishes it in a later Run): not a cycle.
				continue
			}
			if !w.Blocked {
				return fmt.Errorf("bench dispatch: sleeping client woke the coordinator without blocking: %+v", w)
			}
			if i >= 4*n {
				samples = append(samples, t1-t0)
			}
			if t1-start > int64(opts.Duration) {
				break
			}
		}
		st = stats(samples)
		return nil
	})
	return st, err
}

func cCycle(opts DispatchOpts, cbin string, other, n int) (Stats, error) {
	out, err := runC(opts, cbin, other, n)
	if err != nil {
		return Stats{}, fmt.Errorf("bench dispatch: C cycle: %w", err)
	}
	var st Stats
	var clients int
	if _, err := fmt.Sscanf(out, "clients=%d n=%d med=%d p99=%d max=%d", &clients, &st.N, &st.Med, &st.P99, &st.Max); err != nil {
		return Stats{}, fmt.Errorf("bench dispatch: C cycle output %q: %w", out, err)
	}
	return st, nil
}

// cSlice runs the C reference of a computing client's slice.
func cSlice(opts DispatchOpts, cbin string, other int) (SliceStats, error) {
	out, err := runC(opts, cbin, other, 1, "slice")
	if err != nil {
		return SliceStats{}, fmt.Errorf("bench dispatch: C slice: %w", err)
	}
	var st SliceStats
	if _, err := fmt.Sscanf(out, "slice n=%d cpu=%d send=%d swap=%d arm=%d", &st.N, &st.CPU, &st.Send, &st.Swap, &st.Arm); err != nil {
		return SliceStats{}, fmt.Errorf("bench dispatch: C slice output %q: %w", out, err)
	}
	return st, nil
}

// runC runs the C reference cbin holding the simulation CPU's lock, bounded
// in time, and returns what it printed.
func runC(opts DispatchOpts, cbin string, other, n int, extra ...string) (string, error) {
	lock, err := linux.LockCPU(opts.CPU, opts.LockTimeout)
	if err != nil {
		return "", err
	}
	defer lock.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), opts.Duration+20*time.Second)
	defer cancel()
	args := append([]string{strconv.Itoa(opts.CPU), strconv.Itoa(other), strconv.Itoa(opts.Base), strconv.Itoa(n),
		strconv.FormatInt(opts.Duration.Milliseconds(), 10)}, extra...)
	cmd := exec.CommandContext(ctx, cbin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	defer func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever it left
		}
	}()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, stderr.String())
	}
	return string(out), nil
}

// takeBack dispatches two busy clients alternately with a 1 ms budget and
// measures how late the coordinator takes the CPU back, and how much CPU
// the waiting one used meanwhile.
func takeBack(opts DispatchOpts) (late Stats, leak int64, over int, err error) {
	err = onDispatchThread(func() (err error) {
		m, err := newMech(opts)
		if err != nil {
			return fmt.Errorf("bench dispatch: %w", err)
		}
		defer func() { err = errors.Join(err, m.Close()) }()
		var procs [2]*driver.Proc
		for i := range procs {
			if procs[i], err = m.Spawn(driver.SpawnSpec{Name: "busy" + strconv.Itoa(i), Argv: []string{"sh", "-c", "while :; do :; done"}}); err != nil {
				return fmt.Errorf("bench dispatch: %w", err)
			}
		}
		lates := make([]int64, 0, opts.Quanta)
		blocks := 0
		for i := 0; i < opts.Quanta+10; i++ {
			run, wait := procs[i%2], procs[1-i%2]
			before := wait.CPU()
			w, err := m.Run(run, int64(time.Millisecond))
			if err != nil {
				return err
			}
			if i >= 10 {
				// Once both have run: before its first dispatch a
				// client's trampoline still has its Go runtime's threads,
				// ungated off the simulation CPU until the exec ends them
				// (driver.Spawn), and their CPU is not the waiting
				// client's.
				leak += wait.CPU() - before
			}
			if w.Exited != nil {
				return fmt.Errorf("bench dispatch: busy client exited: %+v", w)
			}
			if w.Blocked {
				// Starting up (the trampoline's exec, the shell's page
				// faults) a busy client may block briefly; it may not
				// once it spins.
				if i >= 10 {
					return fmt.Errorf("bench dispatch: busy client blocked after warm-up: %+v", w)
				}
				i--
				if blocks++; blocks > 100 {
					return fmt.Errorf("bench dispatch: busy clients keep blocking at start: %+v", w)
				}
				continue
			}
			if w.Timer && i >= 10 {
				lates = append(lates, w.Late)
				if w.Late > int64(time.Millisecond) {
					over++
				}
			}
		}
		late = stats(lates)
		return nil
	})
	return late, leak, over, err
}
