package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tcs-robotics/tcs/bench"
)

// benchDispatch runs `tcs bench dispatch`: the real coordinator's dispatch
// cycle against the same cycle in C, measured in one run.
func benchDispatch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs bench dispatch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o bench.DispatchOpts
	fs.IntVar(&o.CPU, "cpu", -1, "simulation CPU (-1: the last online CPU)")
	fs.IntVar(&o.Base, "base-priority", 80, "SCHED_FIFO base priority")
	fs.DurationVar(&o.Duration, "duration", 0, "how long to measure each case (0: the benchmark's default)")
	fs.IntVar(&o.Quanta, "quanta", 0, "quanta for the late take-back measurement (0: default)")
	fs.StringVar(&o.CC, "cc", "", "C compiler for the reference (default gcc)")
	fs.DurationVar(&o.LockTimeout, "wait", 2*time.Minute, "wait this long for another run holding the CPU")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := bench.Dispatch(stdout, o); err != nil {
		fmt.Fprintf(stderr, "tcs bench dispatch: %v\n", err)
		return 1
	}
	return 0
}
