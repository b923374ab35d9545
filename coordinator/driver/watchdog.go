package driver

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// The watchdog guarantees progress: a thread of its own, on the CPUs other
// than the simulation CPU and above every client (SCHED_FIFO 99), that
// watches virtual time. When it has not moved for the scenario's
// stall_timeout of wall time (a client that never blocks in lockstep, where
// its computation costs nothing; a client that raised itself above the
// coordinator; a machine the run cannot get CPU from), it names the client
// and the threads holding it, kills every client's process group and wakes
// the dispatch loop, which ends the run as "stalled" (a non-zero exit). If
// the loop does not end within watchdogGrace, the process exits: its
// children die with it (PR_SET_PDEATHSIG) and no priority outlives it.
//
// It decides nothing about time; it only observes the published virtual
// time and the threads in /proc, from its own goroutine.

// watchdogPoll is how often the watchdog looks at virtual time.
const watchdogPoll = 100 * time.Millisecond

// watchdogGrace is how long the loop has to end after the watchdog fired.
const watchdogGrace = 5 * time.Second

// watchdogPrio is the watchdog thread's SCHED_FIFO priority: the highest.
const watchdogPrio = 99

// watchdogExit is the process's exit code when the loop did not end after
// the watchdog fired.
const watchdogExit = 4

// stallState is what the watchdog hands the loop.
type stallState struct {
	fired atomic.Bool
	diag  atomic.Pointer[string]
}

// watchTarget is a client the watchdog may have to name and end: its
// process, captured when the loop began (the watchdog reads nothing of the
// loop's own state).
type watchTarget struct {
	name string
	pid  int
}

// startWatchdog starts the watchdog for the loop; stop ends it and waits
// for it.
func (r *runner) startWatchdog(limit time.Duration) (stop func()) {
	var targets []watchTarget
	for _, c := range r.clients {
		if c.proc != nil {
			targets = append(targets, watchTarget{name: c.conf.Name, pid: c.proc.Pid})
		}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go r.watch(limit, targets, quit, done)
	return func() { close(quit); <-done }
}

func (r *runner) watch(limit time.Duration, targets []watchTarget, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	// The thread is raised and pinned: it ends with the goroutine and must
	// not go back to Go's pool.
	runtime.LockOSThread()
	tid := linux.Gettid()
	if err := linux.SetAffinity(tid, r.mech.others...); err != nil {
		r.log.Warn().Err(err).Msg("watchdog: keep it off the simulation CPU")
	}
	if err := linux.SetFIFO(tid, watchdogPrio); err != nil {
		r.log.Warn().Err(err).Msg("watchdog: raise it above the clients")
	}
	tick := time.NewTicker(watchdogPoll)
	defer tick.Stop()
	last, since := r.pubT.Load(), time.Now()
	for {
		select {
		case <-quit:
			return
		case <-tick.C:
		}
		now := time.Now()
		if t := r.pubT.Load(); t != last || r.ctl.paused.Load() {
			// Moving, or paused on request: not a stall.
			last, since = t, now
			continue
		}
		if now.Sub(since) < limit {
			continue
		}
		r.fire(last, now.Sub(since), targets)
		select {
		case <-quit:
		case <-time.After(watchdogGrace):
			r.log.Error().Msg("watchdog: the dispatch loop did not end; exiting (the clients die with tcs)")
			fmt.Fprintf(os.Stderr, "tcs: the run stalled and the coordinator did not stop; exiting\n")
			os.Exit(watchdogExit)
		}
		return
	}
}

// fire diagnoses a stall at virtual time t that lasted for, ends every
// client and wakes the loop. Reading a client's /proc files can sleep on
// its locks (a process preempted inside its exec): the diagnosis gets
// watchdogDiag, then the clients are ended regardless.
func (r *runner) fire(t int64, lasted time.Duration, targets []watchTarget) {
	cur := int(r.pubCur.Load())
	diagc := make(chan string, 1)
	go func() { diagc <- r.diagnose(t, lasted, cur, targets) }()
	var diag string
	select {
	case diag = <-diagc:
	case <-time.After(watchdogDiag):
		diag = fmt.Sprintf("virtual time stood at %.6f s for %.1f s of wall time (the clients' /proc files did not answer within %v)",
			float64(t)/1e9, lasted.Seconds(), watchdogDiag)
	}
	r.stall.diag.Store(&diag)
	r.stall.fired.Store(true)
	for _, tg := range targets {
		_ = linux.KillGroup(tg.pid, unix.SIGKILL)
	}
	if r.worldPid != 0 {
		// A world process that stopped answering holds the dispatch loop
		// in its step: ended, it hangs up and the step returns.
		_ = linux.Kill(r.worldPid, unix.SIGKILL)
	}
	var one [8]byte
	_ = linux.WriteU64(r.stopFd, &one, 1)
	r.log.Error().Str("diagnosis", diag).Msg("watchdog: the run stalled; every client was ended")
	if r.rc.Status != nil {
		fmt.Fprintf(r.rc.Status, "\ntcs: the run stalled: %s\n", diag)
	}
}

// watchdogDiag is how long the watchdog waits for its diagnosis.
const watchdogDiag = time.Second

// diagnose describes a stall: the dispatched client's runnable threads, and
// any client thread above the clients' levels.
func (r *runner) diagnose(t int64, lasted time.Duration, cur int, targets []watchTarget) string {
	var b strings.Builder
	fmt.Fprintf(&b, "virtual time stood at %.6f s for %.1f s of wall time", float64(t)/1e9, lasted.Seconds())
	for _, tg := range targets {
		dispatched := cur >= 0 && cur < len(r.clients) && r.clients[cur].conf.Name == tg.name
		hot := holdingThreads(tg.pid, r.mech.conf.Base, dispatched)
		switch {
		case dispatched:
			fmt.Fprintf(&b, "; it holds at client %q (pid %d, log %s), dispatched: %s", tg.name, tg.pid,
				r.logPath(r.clients[cur]), strings.Join(hot, ", "))
		case len(hot) > 0:
			fmt.Fprintf(&b, "; client %q (pid %d): %s", tg.name, tg.pid, strings.Join(hot, ", "))
		}
	}
	return b.String()
}

// holdingThreads describes the threads of process pid that may hold a run:
// those at a real-time priority above the coordinator's clients (base − 1),
// and, when all is set (the dispatched client), those running or runnable;
// with their CPU, the busiest first.
func holdingThreads(pid, base int, all bool) []string {
	tids, err := linux.Tasks(pid)
	if err != nil {
		return nil
	}
	type th struct {
		desc string
		cpu  int64
	}
	var out []th
	for _, tid := range tids {
		st, err := linux.ReadStat(pid, tid)
		if err != nil {
			continue
		}
		policy, prio, _ := linux.Policy(tid)
		escaped := policy != linux.SchedOther && prio > base-1
		if !escaped && (!all || st.State != 'R') {
			continue
		}
		cpu, _ := linux.ThreadRuntime(pid, tid)
		d := fmt.Sprintf("thread %d %q %c, %.3f s of CPU, %s", tid, linux.ThreadComm(pid, tid), st.State,
			float64(cpu)/1e9, policyName(policy, prio))
		if escaped {
			d += " (above the coordinator's clients: it raised itself)"
		}
		out = append(out, th{d, cpu})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cpu > out[j].cpu })
	var s []string
	for i, t := range out {
		if i == 3 {
			s = append(s, fmt.Sprintf("and %d more", len(out)-3))
			break
		}
		s = append(s, t.desc)
	}
	return s
}

func policyName(policy, prio int) string {
	switch policy {
	case linux.SchedFIFO:
		return fmt.Sprintf("SCHED_FIFO %d", prio)
	case linux.SchedRR:
		return fmt.Sprintf("SCHED_RR %d", prio)
	case linux.SchedOther:
		return "SCHED_OTHER"
	}
	return fmt.Sprintf("policy %d", policy)
}
