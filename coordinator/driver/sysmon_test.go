package driver

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

func TestFirstCreated(t *testing.T) {
	for _, c := range []struct {
		pid  int
		tids []int
		want int
	}{
		{100, []int{100}, 0},
		{100, nil, 0},
		{100, []int{100, 101, 102, 105}, 101},
		{100, []int{105, 100, 103}, 103},
		// Ids wrapped at pid_max after the main thread: those below the
		// pid were created after those above it.
		{4194000, []int{4194000, 300, 4194100, 301}, 4194100},
		{4194000, []int{4194000, 300, 301}, 300},
	} {
		if got := firstCreated(c.pid, c.tids); got != c.want {
			t.Errorf("firstCreated(%d, %v) = %d, want %d", c.pid, c.tids, got, c.want)
		}
	}
}

// helperSysmon plays a Go node with GOMAXPROCS 1: a goroutine that
// writes a tick every ms, and a main goroutine that sleeps, then, after
// 1.5 s of wall time, blocks for good in a raw read of a pipe no one
// writes. Only sysmon hands the P that read holds on to the ticking
// goroutine.
func helperSysmon() int {
	runtime.GOMAXPROCS(1)
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		return 1
	}
	start := time.Now()
	go func() {
		for i := 0; ; i++ {
			fmt.Printf("tick %d\n", i)
			time.Sleep(time.Millisecond)
		}
	}()
	for time.Since(start) < 1500*time.Millisecond {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("blocking")
	var b [1]byte
	syscall.Read(fds[0], b[:])
	return 0
}

// sysmonRun starts the "sysmon" helper as a Go ROS client (SysmonTurns) and
// a busy shell to alternate it with. ticksAfter counts the helper's ticks
// after its main goroutine blocked (-1 before); log is its output.
func sysmonRun(t *testing.T) (m *Mechanism, p, busy *Proc, log func() string, ticksAfter func() int, done func()) {
	t.Helper()
	m, done = newMech(t)
	p = spawnHelper(t, m, "sysmon")
	p.SysmonTurns = true
	busy = spawn(t, m, "busy", "sh", "-c", "while :; do :; done")
	log = func() string { b, _ := os.ReadFile(p.LogPath); return string(b) }
	ticksAfter = func() int {
		s := log()
		i := strings.Index(s, "blocking\n")
		if i < 0 {
			return -1
		}
		return strings.Count(s[i:], "tick ")
	}
	return m, p, busy, log, ticksAfter, done
}

// A Go client's sysmon thread is found, waits at ℓ3 whenever its client is
// raised (it moves only in its turns, after the raise), gets at most one
// turn per sysmonTurn, and still does its work in them: a goroutine
// blocked in a system call gives the only P up to one that can run.
func TestSysmonWaitsForItsTurns(t *testing.T) {
	m, p, busy, log, ticksAfter, done := sysmonRun(t)
	defer done()
	var raisesFound, raisedSysmon int
	m.afterRaise = func() {
		tid, _ := p.Sysmon()
		if tid == 0 || m.cur != p {
			return
		}
		raisesFound++
		if _, prio, err := linux.Policy(tid); err == nil && prio != m.Base()-3 {
			raisedSysmon++
		}
	}
	defer func() { m.afterRaise = nil }()
	var found time.Time
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for ticksAfter() < 20 && time.Now().Before(deadline) {
		if found.IsZero() {
			if tid, _ := p.Sysmon(); tid != 0 {
				found = time.Now()
			}
		}
		if _, err := m.Run(p, int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Run(busy, int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	tid, turns := p.Sysmon()
	wall := time.Since(found)
	t.Logf("sysmon %d found after %v; %d raises after, sysmon not at ℓ3 at %d; %d turns (%d chained) in %v; %d ticks after the block",
		tid, found.Sub(start), raisesFound, raisedSysmon, turns, p.sm.chains, wall, ticksAfter())
	if tid == 0 {
		t.Fatalf("the helper's sysmon thread was not found in 20 s; log:\n%.2000s", log())
	}
	if raisedSysmon != 0 {
		t.Errorf("sysmon was above ℓ3 at %d of %d raises of its client", raisedSysmon, raisesFound)
	}
	if max := int64(wall/(sysmonTurn*time.Nanosecond)) + 2; turns-p.sm.chains > max {
		t.Errorf("%d turns in %v (%d of them chained after a hand-off), want ≤ %d besides those (one per %v)",
			turns, wall, p.sm.chains, max, sysmonTurn*time.Nanosecond)
	}
	if n := ticksAfter(); n < 20 {
		t.Errorf("%d ticks after the main goroutine blocked in a read, want ≥ 20: sysmon did not hand its P on", n)
	}
}

// A Go ROS client whose every thread but sysmon waits, while a goroutine
// of it has work that needs the P a blocking call holds (the helper after
// "blocking"), is dispatched only when a probe finds it runnable: its
// runnable sysmon counts once its turn is due (Runnable, sysmonThread.
// probed), so the client still gets the turns that hand the P on, and its
// ticks go on.
func TestSysmonProbedWhenItsTurnIsDue(t *testing.T) {
	m, p, busy, log, ticksAfter, done := sysmonRun(t)
	defer done()
	run := func(q *Proc) {
		if _, err := m.Run(q, int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	runUntilBlocked(t, m, p, busy, log, ticksAfter)
	// From then on, only when a probe finds it runnable, as the policy's
	// probes do for a client that waits.
	n0 := ticksAfter()
	probes, found := 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for ticksAfter()-n0 < 20 && time.Now().Before(deadline) {
		run(busy)
		probes++
		if m.Runnable(p) {
			found++
			run(p)
		}
	}
	_, turns := p.Sysmon()
	t.Logf("%d probes, %d found it runnable; %d turns; %d ticks after the probes began", probes, found, turns, ticksAfter()-n0)
	if n := ticksAfter() - n0; n < 20 {
		t.Errorf("%d ticks in 20 s of probes (%d of %d found the client runnable), want ≥ 20: a client whose runtime needs a sysmon turn was never dispatched", n, found, probes)
	}
}

// The same client probed while nothing is dispatched (the world steps
// past a blocked client and probes it at each step): sysmon's turn falls
// due with the wall clock, not with the mechanism's last wake, which no
// dispatch moves meanwhile.
func TestSysmonTurnDueWithoutDispatches(t *testing.T) {
	m, p, busy, log, ticksAfter, done := sysmonRun(t)
	defer done()
	runUntilBlocked(t, m, p, busy, log, ticksAfter)
	if err := m.lower(); err != nil {
		t.Fatal(err)
	}
	// Its last turn was at the last dispatch's wake.
	p.sm.turnAt = m.lastWake
	probes := 0
	start := time.Now()
	for time.Since(start) < 2*time.Second {
		probes++
		if m.Runnable(p) {
			t.Logf("runnable at probe %d, %v after the last dispatch", probes, time.Since(start))
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("%d probes in 2 s with no dispatch never found the client runnable: its sysmon's turn never fell due", probes)
}

// runUntilBlocked dispatches the sysmon helper p, alternating with busy,
// as any runnable client but with no sysmon turn (its dispatches are never
// enough for one), until its main goroutine blocked: sysmon must not hand
// the P on before the probes of the test.
func runUntilBlocked(t *testing.T, m *Mechanism, p, busy *Proc, log func() string, ticksAfter func() int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for ticksAfter() < 0 && time.Now().Before(deadline) {
		p.sm.runs = 0
		for _, q := range []*Proc{p, busy} {
			if _, err := m.Run(q, int64(time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if tid, _ := p.Sysmon(); tid == 0 || ticksAfter() < 0 {
		t.Fatalf("the helper did not block, or its sysmon was not found (tid %d), in 20 s; log:\n%.2000s", tid, log())
	}
}
