package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// The ways `chaos exit` ends and the states it ends in.
var (
	exitWays   = []string{"zero", "code", "segv", "kill", "exec"}
	exitStates = []string{"startup", "running", "blocked", "delivery"}
)

// exitCode is the status of way code.
const exitCode = 7

// runExit is `chaos exit`: it ends in --way in --state (see the package
// doc). Before it acts it logs "act" (way kill: then "hold", and it stays
// in the state for the test's SIGKILL; in state blocked it logs them and
// runs on as a controller, blocked in the read of its reply between
// activations, where the test kills it).
func runExit(args []string) int {
	fs := flags("exit")
	way := fs.String("way", "", "zero, code, segv, kill or exec")
	state := fs.String("state", "", "startup, running, blocked or delivery")
	after := fs.Int("after", 3, "activations (running, blocked) or deliveries (delivery) before acting")
	ch := fs.Int("channel", 1, "channel of the deliveries (state delivery)")
	if code := parse(fs, args); code >= 0 {
		return code
	}
	if !slices.Contains(exitWays, *way) || !slices.Contains(exitStates, *state) || *after < 0 {
		fmt.Fprintln(os.Stderr, "chaos exit: --way must be zero, code, segv, kill or exec; --state startup, running, blocked or delivery; --after ≥ 0")
		return 2
	}
	// act ends the process in way, from state; hold is what it does
	// meanwhile when the end is the test's SIGKILL.
	act := func(hold func()) {
		logf("act", "way", *way, "state", *state, "pid", os.Getpid(), "tid", unix.Gettid())
		switch *way {
		case "zero":
			os.Exit(0)
		case "code":
			os.Exit(exitCode)
		case "segv":
			segv()
		case "exec":
			execSleep()
		case "kill":
			logf("hold", "state", *state, "pid", os.Getpid(), "tid", unix.Gettid())
			hold()
		}
	}
	switch *state {
	case "startup":
		act(spin) // computing its start-up, before its hello
	case "running":
		t := newController(connect())
		if err := t.run(*after); err != nil {
			return finish(err)
		}
		burn(200 * time.Microsecond) // mid-computation
		act(spin)
	case "blocked":
		t := newController(connect())
		if err := t.run(*after); err != nil {
			return finish(err)
		}
		if *way == "kill" {
			// The test's SIGKILL comes once this thread has said it
			// idles and waits for its next period (tcs has lowered
			// it, which the test sees in /proc).
			logf("act", "way", *way, "state", *state, "pid", os.Getpid(), "tid", unix.Gettid())
			logf("hold", "state", *state, "pid", os.Getpid(), "tid", unix.Gettid())
			return t.forever()
		}
		// A second thread acts while this one waits for its next
		// period; it looks every 100 µs of wall time (a watchdog or
		// logging thread of a real controller).
		go func() {
			runtime.LockOSThread()
			for waiting.Load() == 0 {
				time.Sleep(100 * time.Microsecond)
			}
			act(func() { select {} })
		}()
		return t.forever()
	case "delivery":
		t := newController(connect())
		var msg [64]float64
		for got := 0; ; {
			if err := t.activate(); err != nil {
				return finish(err)
			}
			// The message delivered with the activation, else the
			// newest one on the channel.
			n, _ := t.c.In(msg[:])
			if n == 0 {
				var err error
				if n, _, err = t.c.Recv(*ch, msg[:]); err != nil {
					return finish(err)
				}
			}
			if n == 0 {
				continue
			}
			if got++; got > *after {
				logf("delivery", "values", n, "first", msg[0])
				burn(100 * time.Microsecond) // handling it
				act(spin)
			}
		}
	}
	return 0
}
