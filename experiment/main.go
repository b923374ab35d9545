package experiment

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const usage = `usage:
  tcs experiment pursuit [--trials N] [--duration S] [--budget S] [--modes M,M] [--long S] [--out DIR] [--report-only]
  tcs experiment pendulum [--duration S] [--free-duration S] [--work D] [--quantum D] [--out DIR]`

// Main is tcs experiment NAME [flags]; it returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; ok {
			close(stop)
		}
	}()
	name := args[0]
	fs := flag.NewFlagSet("tcs experiment "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", filepath.Join("out", "experiment-"+name), "output folder")
	var err error
	switch name {
	case "pursuit":
		c := PursuitConf{Progress: stderr, Stop: stop, Quantum: 5}
		fs.IntVar(&c.Trials, "trials", 10, "trials per mode")
		fs.Float64Var(&c.Duration, "duration", 20, "virtual seconds per trial")
		fs.Float64Var(&c.Budget, "budget", 1.0, "planner CPU seconds per plan")
		fs.Float64Var(&c.Quantum, "quantum", 5, "quantum, ms")
		fs.Float64Var(&c.LongDuration, "long", 60, "virtual seconds of one more consistent run (0: none)")
		modes := fs.String("modes", "consistent,lockstep,free", "modes to run")
		fs.BoolVar(&c.ReportOnly, "report-only", false, "render the report of the runs already in --out, running nothing")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if c.Trials < 1 || !(c.Duration > 0) || !(c.Budget > 0) || !(c.Quantum >= 0.05 && c.Quantum <= 100) {
			fmt.Fprintln(stderr, "tcs experiment pursuit: --trials ≥ 1, --duration > 0, --budget > 0 and --quantum in [0.05, 100] ms")
			return 2
		}
		c.Modes = strings.Split(*modes, ",")
		c.Out = *out
		err = Pursuit(c)
	case "pendulum":
		c := PendulumConf{Progress: stderr, Stop: stop}
		fs.Float64Var(&c.Duration, "duration", 10, "virtual seconds per run (10,000 cycles at 1 kHz)")
		fs.Float64Var(&c.FreeDuration, "free-duration", 0, "virtual seconds of the free run, 10× as long in wall time (0: --duration)")
		fs.DurationVar(&c.Work, "work", 500*time.Microsecond, "controller CPU burnt per activation")
		fs.DurationVar(&c.Quantum, "quantum", 200*time.Microsecond, "quantum")
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if !(c.Duration > 0) || c.FreeDuration < 0 || c.Work <= 0 || c.Work >= time.Millisecond ||
			c.Quantum < 50*time.Microsecond || c.Quantum > 100*time.Millisecond {
			fmt.Fprintln(stderr, "tcs experiment pendulum: --duration > 0, --free-duration ≥ 0, --work in (0, 1ms) and --quantum in [50µs, 100ms]")
			return 2
		}
		c.Out = *out
		err = Pendulum(c)
	default:
		fmt.Fprintf(stderr, "tcs experiment: unknown experiment %q\n%s\n", name, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "tcs experiment %s: %v\n", name, err)
		if errors.Is(err, os.ErrPermission) {
			return 1
		}
		return 1
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*out, "report.md"))
	return 0
}
