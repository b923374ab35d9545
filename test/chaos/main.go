// Command chaos is a hostile tcs client (issue 19, part 3). Each mode
// misbehaves in one way that DESIGN §7 says must not stop the coordinator,
// spoil its run or harm the machine; test/chaos_test.go runs every mode
// under `tcs run` beside a well-behaved controller and checks what is left.
// test/chaos/c/chaos.c is its twin in C: the same modes, flags and log
// lines, so that one scenario serves both (the test puts one or the other
// first on PATH under the name chaos).
//
//	chaos spin                       say hello, then compute forever
//	chaos flood [--rate N] [--channel C]
//	                                 post N messages per second of its own CPU
//	                                 on channel C (default 100000 on 1)
//	chaos threads [--n N]            start N threads (default 1000) that block
//	                                 forever, then run as a controller
//	chaos fork [--then stay|exit] [--life D] [--spin S] [--after K]
//	                                 after K activations fork a child that
//	                                 stays in its process group and, by a double
//	                                 fork and setsid, one in a session of its
//	                                 own; both compute for S of wall time
//	                                 (default 0) and sleep for D (default 30s);
//	                                 then run on as a controller or exit 0
//	chaos exit --way W --state S [--after K]
//	                                 end in way W: zero (exit 0), code (exit 7),
//	                                 segv (a real segmentation fault), kill
//	                                 (wait for the test's SIGKILL), exec (become
//	                                 `sleep 30`), in state S: startup (before
//	                                 its hello), running (mid-computation, after
//	                                 K activations), blocked (waiting for its
//	                                 next period: a second thread acts once the
//	                                 first has said it idles; for kill, the
//	                                 test waits for tcs to lower the client),
//	                                 delivery (handling the message delivered
//	                                 to it after K others)
//	chaos garbage --what W [--after K] [--seed N]
//	                                 after K activations write garbage on its
//	                                 native connection: pipe (bad and random
//	                                 request records, then on as a controller:
//	                                 a reply to another request than its own
//	                                 ends it with status 1), partial (part of a
//	                                 record, then wait for a reply forever), shm
//	                                 (random bytes over its shared memory before
//	                                 every request from then on, a refusal
//	                                 logged once and ignored)
//	chaos deaf --what W [--after K]  never read its replies: requests (send
//	                                 requests without reading one reply), idle
//	                                 (say idle and compute on, never reading the
//	                                 activation)
//	chaos escape                     try SCHED_FIFO 99 and an affinity of every
//	                                 CPU, print the results, then run as a
//	                                 controller
//	chaos ros --what W [--topic T] ROS-ARGS...
//	                                 (Go only) a ROS 1 node, the bundled
//	                                 goroslib PD controller, with a hostile
//	                                 TCPROS subscriber of tcs's topic T (default
//	                                 its own joint_states) beside it: garbage
//	                                 (a 4 GiB header length, malformed header
//	                                 fields, a wrong md5sum, a valid header and
//	                                 then 1 MiB of random bytes) or deaf (a
//	                                 valid subscription never read)
//
// "Run as a controller" is the loop of a periodic controller that does
// nothing: every activation it writes a zero command and idles until its
// next period (10 ms for a best-effort client). A shutdown reply ends it
// with status 0.
//
// The test reads the log lines, written to stderr (the client's log) one
// write each:
//
//	chaos: <event> key=value ...
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/native"
)

// The goroutine that speaks the protocol runs on the main thread (tid ==
// pid), whose state the test reads in /proc.
func init() { runtime.LockOSThread() }

const usage = `usage: chaos MODE [flags]
modes: spin, flood, threads, fork, exit, garbage, deaf, escape, ros (see the package doc)`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	modes := map[string]func(args []string) int{
		"spin":    runSpin,
		"flood":   runFlood,
		"threads": runThreads,
		"fork":    runFork,
		"exit":    runExit,
		"garbage": runGarbage,
		"deaf":    runDeaf,
		"escape":  runEscape,
		"ros":     runROS,
		"__child": runChild, // chaos fork's children
	}
	run, ok := modes[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "chaos: unknown mode %q\n%s\n", os.Args[1], usage)
		os.Exit(2)
	}
	os.Exit(run(os.Args[2:]))
}

// logf writes one log line, "chaos: event key=value ...", in one write.
func logf(event string, kv ...any) {
	var b strings.Builder
	b.WriteString("chaos: ")
	b.WriteString(event)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	b.WriteByte('\n')
	_, _ = os.Stderr.WriteString(b.String())
}

// flags makes mode's flag set; parse parses it and returns the exit
// status to stop with, or -1 to go on.
func flags(mode string) *flag.FlagSet {
	fs := flag.NewFlagSet("chaos "+mode, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return 2
	}
	return -1
}

// connect says hello to the coordinator; a failure ends the process with
// status 1.
func connect() *native.Client {
	c, err := native.Connect()
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: connect: %v\n", err)
		os.Exit(1)
	}
	logf("hello", "pid", os.Getpid(), "period_ns", c.Period())
	return c
}

// finish turns the error that ended the protocol into an exit status: the
// simulation's end is 0, anything else 1.
func finish(err error) int {
	if err == nil || errors.Is(err, native.ErrShutdown) {
		logf("shutdown")
		return 0
	}
	fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
	return 1
}

// controller is the loop of a periodic controller that does nothing.
type controller struct {
	c      *native.Client
	period int64
	k      int64 // activations so far
	zero   [1]float64
}

func newController(c *native.Client) *controller {
	p := c.Period()
	if p <= 0 {
		p = int64(10 * time.Millisecond)
	}
	return &controller{c: c, period: p, k: c.Now() / p}
}

// waiting is 1 while the protocol thread waits for its next period: from
// just before its WriteIdle to its return (for the blocked state's second
// thread, which can only run while this one does not).
var waiting atomic.Int32

// activate ends the current activation: a zero command, then idle until
// the next period; it returns at the next activation.
func (t *controller) activate() error {
	t.k++
	waiting.Store(1)
	_, err := t.c.WriteIdle(0, t.zero[:], t.k*t.period)
	waiting.Store(0)
	return err
}

// run runs n activations (n < 0: until the simulation ends).
func (t *controller) run(n int) error {
	for i := 0; n < 0 || i < n; i++ {
		if err := t.activate(); err != nil {
			return err
		}
	}
	return nil
}

// forever runs as a controller to the end and returns the exit status.
func (t *controller) forever() int { return finish(t.run(-1)) }
