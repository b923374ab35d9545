package controllers

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/native"
)

// runPlanner is `tcs client planner`: a best-effort client that never
// sleeps. It computes for --chunk of CPU time, then writes a plan on
// channel 1: [target angle, its CPU time so far in s, sequence number], and
// repeats.
func runPlanner(args []string, stderr io.Writer) int {
	fs := newFlags("planner", plannerUsage, stderr)
	chunk := fs.Duration("chunk", 20*time.Millisecond, "CPU time computed per plan")
	target := fs.Float64("target", math.Pi, "target angle the plans carry, rad")
	ch := fs.Int("channel", 1, "channel the plans are written on (≥ 1)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if *chunk <= 0 || *ch < 1 {
		fmt.Fprintln(stderr, "tcs client planner: --chunk must be > 0 and --channel ≥ 1")
		return 2
	}
	runtime.LockOSThread()
	c, err := native.Connect()
	if err != nil {
		return finish("planner", err, stderr)
	}
	defer c.Close()
	var plan [3]float64
	start := threadCPU()
	for seq := 1; ; seq++ {
		used := burn(int64(*chunk)) - start
		plan[0], plan[1], plan[2] = *target, float64(used)/1e9, float64(seq)
		if err := c.Write(*ch, plan[:]); err != nil {
			return finish("planner", err, stderr)
		}
	}
}

// runCrash is `tcs client crash`: a periodic native client that runs --after
// activations (read, write 0, idle) and then exits with --code.
func runCrash(args []string, stderr io.Writer) int {
	fs := newFlags("crash", crashUsage, stderr)
	after := fs.Int("after", 100, "activations before exiting")
	code := fs.Int("code", 3, "exit code")
	period := fs.Duration("period", time.Millisecond, "period when the coordinator gives none")
	if c := parse(fs, args); c >= 0 {
		return c
	}
	if *after < 0 || *period <= 0 {
		fmt.Fprintln(stderr, "tcs client crash: --after must be ≥ 0 and --period > 0")
		return 2
	}
	c, err := native.Connect()
	if err != nil {
		return finish("crash", err, stderr)
	}
	defer c.Close()
	p := c.Period()
	if p <= 0 {
		p = int64(*period)
	}
	var obs [2]float64
	var cmd [1]float64
	k := c.Now() / p
	for range *after {
		if _, _, err := c.Read(obs[:]); err != nil {
			return finish("crash", err, stderr)
		}
		if err := c.Write(0, cmd[:]); err != nil {
			return finish("crash", err, stderr)
		}
		k++
		if _, err := c.Idle(k * p); err != nil {
			return finish("crash", err, stderr)
		}
	}
	fmt.Fprintf(stderr, "tcs client crash: exiting with code %d after %d activations, as asked\n", *code, *after)
	return *code
}

// runSpin is `tcs client spin`: a plain busy loop, forever; it never talks
// to the coordinator (an unmodified, CPU-bound process).
func runSpin(args []string, stderr io.Writer) int {
	fs := newFlags("spin", spinUsage, stderr)
	if code := parse(fs, args); code >= 0 {
		return code
	}
	for {
		for range 1 << 20 {
			sink = sink*1.0000001 + 1
		}
	}
}
