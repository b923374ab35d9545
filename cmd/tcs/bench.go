package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tcs-robotics/tcs/bench"
	"github.com/tcs-robotics/tcs/config"
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

// benchDelivery runs `tcs bench delivery`: the wall-clock cost of a gated
// ROS 1 delivery against goroslib's Publisher.Write, in one run; built with
// the ros2 tag, the same run also measures the gated ROS 2 delivery and
// prints it beside the ROS 1 one.
func benchDelivery(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs bench delivery", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o bench.DeliveryOpts
	fs.IntVar(&o.Subscribers, "subscribers", 8, "subscribers (goroslib nodes; with ros2, as many DDS readers too)")
	fs.IntVar(&o.Rate, "rate", 1000, "publishing rate (Hz)")
	fs.IntVar(&o.Messages, "messages", 2000, "messages per publisher")
	fs.IntVar(&o.Joints, "joints", 6, "joints in each sensor_msgs/JointState")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if _, err := bench.Delivery(stdout, o); err != nil {
		fmt.Fprintf(stderr, "tcs bench delivery: %v\n", err)
		return 1
	}
	return 0
}

// benchDecision runs `tcs bench decision`: the pure policy's cost per
// scheduling decision at 4, 16 and 64 clients.
func benchDecision(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs bench decision", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := fs.Duration("duration", time.Second, "how long to measure each client count")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if _, err := bench.Decision(stdout, *d); err != nil {
		fmt.Fprintf(stderr, "tcs bench decision: %v\n", err)
		return 1
	}
	return 0
}

// runFlags defines the flags of a bench made of whole `tcs run`s on fs:
// -src, -results (described by results), -keep and -wait (default wait).
func runFlags(fs *flag.FlagSet, o *bench.RunOpts, results string, wait time.Duration) {
	fs.StringVar(&o.Src, "src", "", "the tcs source tree (default: found upward from here, then from the tcs binary)")
	fs.StringVar(&o.Results, "results", "", results)
	fs.BoolVar(&o.Keep, "keep", false, "keep the runs' folder (a failed run keeps it anyway)")
	fs.DurationVar(&o.Wait, "wait", wait, "wait this long for another run holding the simulation CPU")
}

// benchActivation runs `tcs bench activation`: the coordinator's CPU per
// activation and per dispatch for every kind of client, at 4, 16 and 64
// clients, on the pendulum.
func benchActivation(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs bench activation", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := bench.ActivationOpts{RunOpts: bench.RunOpts{Progress: stderr}}
	clients := fs.String("clients", "4,16,64", "client counts, comma-separated")
	kinds := fs.String("kinds", strings.Join(bench.ActivationKinds, ","), "client kinds, comma-separated")
	fs.DurationVar(&o.Duration, "duration", 3*time.Second, "virtual time of each run of a ROS kind")
	fs.DurationVar(&o.NativeDuration, "native-duration", 0, "virtual time of each run of a native kind (c, go); 0: 10 × -duration, so that start-up does not dominate their figures")
	fs.DurationVar(&o.Period, "period", 10*time.Millisecond, "every controller's period")
	fs.DurationVar(&o.Quantum, "quantum", time.Millisecond, "the runs' quantum q")
	fs.DurationVar(&o.Step, "step", time.Millisecond, "the pendulum's step")
	fs.StringVar(&o.Samples, "samples", "at_activation", "the ROS controllers' samples: at_activation (the newest with each activation, as native clients) or each (every step's)")
	runFlags(fs, &o.RunOpts, `folder of the JSON results (default SRC/results/bench; "-": none)`, 2*time.Minute)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tcs bench activation: unexpected arguments %q\n", fs.Args())
		return 2
	}
	for _, f := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "tcs bench activation: -clients %q: write counts like 4,16,64\n", *clients)
			return 2
		}
		o.Clients = append(o.Clients, n)
	}
	if _, err := config.ParseSamples(o.Samples); err != nil {
		fmt.Fprintf(stderr, "tcs bench activation: -samples: %v\n", err)
		return 2
	}
	for _, k := range strings.Split(*kinds, ",") {
		if k = strings.TrimSpace(k); k != "" {
			o.Kinds = append(o.Kinds, k)
		}
	}
	// ^C or SIGTERM stops the run under way cleanly (tcs stops its
	// clients) before the bench ends.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if _, err := bench.Activation(ctx, stdout, o); err != nil {
		fmt.Fprintf(stderr, "tcs bench activation: %v\n", err)
		return 1
	}
	return 0
}

// benchPursuit runs `tcs bench pursuit`: paper 000's pursuit workload with
// native C clients, the coordinator's CPU per activation and its share of
// the CPU, every CPU counted, against the targets.
func benchPursuit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs bench pursuit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := bench.PursuitOpts{RunOpts: bench.RunOpts{Progress: stderr}}
	fs.IntVar(&o.Trials, "trials", 2, "runs")
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "virtual time of each run")
	fs.DurationVar(&o.Period, "period", 10*time.Millisecond, "both controllers' period")
	fs.DurationVar(&o.Quantum, "quantum", 10*time.Millisecond, "the runs' quantum q")
	fs.DurationVar(&o.Step, "step", 10*time.Millisecond, "the world's step")
	fs.DurationVar(&o.Chunk, "chunk", time.Second, "the planner's CPU time per plan")
	runFlags(fs, &o.RunOpts, `folder of the JSON results (default SRC/results/bench; "-": none)`, 2*time.Minute)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tcs bench pursuit: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if o.Trials < 1 || o.Duration <= 0 || o.Period <= 0 || o.Quantum <= 0 || o.Step <= 0 || o.Chunk <= 0 {
		fmt.Fprintln(stderr, "tcs bench pursuit: -trials must be ≥ 1 and the durations > 0")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if _, err := bench.Pursuit(ctx, stdout, o); err != nil {
		fmt.Fprintf(stderr, "tcs bench pursuit: %v\n", err)
		return 1
	}
	return 0
}

// benchSoak runs `tcs bench soak`: one long run of mixed clients, its
// process sampled every minute for a trend in RSS, fds, goroutines,
// threads and Δ p99.
func benchSoak(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcs bench soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := bench.SoakOpts{RunOpts: bench.RunOpts{Progress: stderr}}
	fs.IntVar(&o.Minutes, "minutes", 60, "virtual minutes of the run (as many of wall time at max_rtf 1)")
	fs.DurationVar(&o.Every, "every", time.Minute, "sampling period")
	fs.IntVar(&o.Warmup, "warmup", 0, "samples left out of the fits (0: minutes/10; -1: none)")
	mix := fs.String("mix", soakMix(bench.DefaultSoakMix), "clients: kind=count, comma-separated (kinds: c, go, goroslib, roscpp, rospy)")
	fs.DurationVar(&o.Period, "period", 10*time.Millisecond, "every controller's period")
	fs.DurationVar(&o.Quantum, "quantum", time.Millisecond, "the run's quantum q")
	fs.DurationVar(&o.Step, "step", 5*time.Millisecond, "the pendulum's step (a JointState to every ROS node per step)")
	runFlags(fs, &o.RunOpts, "folder of the CSV, report and plot (default SRC/results/soak)", 10*time.Minute)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tcs bench soak: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if o.Minutes < 1 || o.Every <= 0 {
		fmt.Fprintln(stderr, "tcs bench soak: -minutes must be ≥ 1 and -every > 0")
		return 2
	}
	for _, f := range strings.Split(*mix, ",") {
		k, n, ok := strings.Cut(strings.TrimSpace(f), "=")
		c, err := strconv.Atoi(n)
		if !ok || err != nil || c < 1 {
			fmt.Fprintf(stderr, "tcs bench soak: -mix %q: write kind=count pairs like c=4,go=4\n", *mix)
			return 2
		}
		o.Mix = append(o.Mix, bench.SoakKind{Kind: k, Count: c})
	}
	// ^C or SIGTERM stops the run cleanly (tcs stops its clients); what
	// was sampled is still written.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if _, err := bench.Soak(ctx, stdout, o); err != nil {
		fmt.Fprintf(stderr, "tcs bench soak: %v\n", err)
		return 1
	}
	return 0
}

// soakMix writes a mix as -mix takes it.
func soakMix(m []bench.SoakKind) string {
	var s []string
	for _, k := range m {
		s = append(s, k.Kind+"="+strconv.Itoa(k.Count))
	}
	return strings.Join(s, ",")
}
