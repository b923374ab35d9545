package controllers

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/tcs-robotics/tcs/coordinator/native"
)

// client is one bundled client: its one-line description and its main.
type client struct {
	usage string
	run   func(args []string, stderr io.Writer) int
}

var clients = map[string]client{
	"pd":      {pdUsage, runPD},
	"planner": {plannerUsage, runPlanner},
	"crash":   {crashUsage, runCrash},
	"spin":    {spinUsage, runSpin},
}

const (
	pdUsage      = "pendulum swing-up and balance controller (periodic, native)"
	plannerUsage = "best-effort planner: computes forever, writes plans on channel 1 (native)"
	crashUsage   = "exits with --code after --after activations (native)"
	spinUsage    = "busy loop forever, no protocol"
)

// Names lists the bundled clients, sorted.
func Names() []string {
	names := make([]string, 0, len(clients))
	for n := range clients {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Main runs the bundled client name with its arguments (flags) and returns
// the process exit code: 0 when the simulation ended it normally, 1 on an
// error, 2 on bad usage or an unknown name. Errors go to standard error.
func Main(name string, args []string) int {
	return run(name, args, os.Stderr)
}

func run(name string, args []string, stderr io.Writer) int {
	c, ok := clients[name]
	if !ok {
		fmt.Fprintf(stderr, "tcs client: unknown client %q (known: %s)\n", name, strings.Join(Names(), ", "))
		return 2
	}
	return c.run(args, stderr)
}

// newFlags makes the flag set of client name, writing to stderr.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("tcs client "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: tcs client %s [flags]\n%s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args; it returns the exit code to stop with, or -1 to go on.
func parse(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return 2
	}
	return -1
}

// finish turns the error that ended a native client's loop into an exit
// code: the coordinator's shutdown is a normal end.
func finish(name string, err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, native.ErrShutdown) {
		return 0
	}
	fmt.Fprintf(stderr, "tcs client %s: %v\n", name, err)
	return 1
}

// burn busy-computes until the calling thread has used d ns of CPU (its
// thread CPU clock; the caller has locked its OS thread). It returns the
// thread CPU time at the end.
func burn(d int64) int64 {
	start := threadCPU()
	now := start
	for now-start < d {
		for range 1000 {
			sink = sink*1.0000001 + 1
		}
		now = threadCPU()
	}
	return now
}

// sink keeps busy loops from being optimised away.
var sink float64
