package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// The guard bounds a whole run, where the watchdog (watchdog.go) bounds the
// dispatch loop only: start-up (taking the CPU, spawning, the ROS nodes'
// start-up, attaching) and the end (the nodes' shutdown, closing the
// recording) have bounds of their own, but a hang outside them (a system
// call that never returns, a lock never released) would leave `tcs run`
// waiting forever with the clients parked. When Run has not returned
// within the sum of every bound the run has, plus guardMargin, the guard
// writes every goroutine's stack to hang-stacks.txt in the output folder,
// says in which part of the run it hung, and exits the process: its
// children die with it (PR_SET_PDEATHSIG) and no priority outlives it.
//
// It decides nothing about time: it reads the wall clock and the wall time
// spent paused on request, which extends the run's wall limit.

// guardMargin is what the guard allows beyond the sum of the run's bounds:
// enough for a long recording to be closed and the summary written.
const guardMargin = 2 * time.Minute

// guardPoll is how often the guard looks at the time.
const guardPoll = time.Second

// guardExit is the process's exit code when the guard fired.
const guardExit = watchdogExit

// Parts of a run, for the guard's message.
const (
	partStart int32 = iota
	partLoop
	partEnd
)

var partNames = [...]string{
	partStart: "in its start-up (taking the CPU, spawning the clients, the ROS nodes' start-up)",
	partLoop:  "in the dispatch loop",
	partEnd:   "at its end (the nodes' shutdown, the recording, the summary)",
}

// guardLimit is the sum of the run's bounds: waiting for the CPU lock, the
// ROS start-up and attaching, the wall limit, the nodes' shutdown grace.
func (r *runner) guardLimit() time.Duration {
	startup := time.Duration(r.sc.ROS.StartupTimeout)
	if startup <= 0 {
		startup = defaultStartup
	}
	return r.rc.LockTimeout + startup + attachWait + time.Duration(r.sc.EffectiveWallLimit()) + shutdownGrace + guardMargin
}

// guard waits for done, closed when the run returns. It does not return
// if the run outlives limit plus the wall time spent paused: it exits the
// process.
func (r *runner) guard(done <-chan struct{}, limit time.Duration) {
	start := r.clk.Monotonic()
	tick := time.NewTicker(guardPoll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		now := r.clk.Monotonic()
		paused := r.ctl.pausedNs.Load()
		if r.ctl.paused.Load() {
			paused += now - r.ctl.pausedAt.Load()
		}
		if time.Duration(now-start-paused) > limit {
			r.hung(limit)
		}
	}
}

// hung reports a run that outlived its bounds and exits.
func (r *runner) hung(limit time.Duration) {
	part := partNames[min(max(r.part.Load(), 0), int32(len(partNames)-1))]
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	path := filepath.Join(r.rc.OutDir, "hang-stacks.txt")
	where := "written to " + path
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		where = fmt.Sprintf("not written: %v", err)
	}
	r.log.Error().Str("part", part).Dur("limit", limit).Str("stacks", path).
		Msg("the run did not end within the sum of its bounds: exiting (the clients die with tcs)")
	fmt.Fprintf(os.Stderr, "tcs: the run hung %s: it did not end within %v (its bounds: the CPU lock's wait, ros.startup_timeout, wall_limit, the shutdown grace, plus %v); exiting. Every goroutine's stack is %s\n",
		part, limit, guardMargin, where)
	os.Exit(guardExit)
}
