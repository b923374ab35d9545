package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/coordinator"
	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/report"
)

// exitWay is one way a chaos client ends (chaos exit --way).
type exitWay struct {
	name string
	code int // its exit code in summary.json (128 + signal); -1: it does not exit
}

var exitWays = []exitWay{
	{"zero", 0},
	{"code", 7},
	{"segv", 128 + int(unix.SIGSEGV)},
	{"kill", 128 + int(unix.SIGKILL)}, // the test's SIGKILL
	{"exec", -1},                      // becomes `sleep 30`, which never speaks
}

// exitStates are the states it ends in (chaos exit --state): before its
// hello, mid-computation, waiting for its next period, handling a message
// delivered to it.
var exitStates = []string{"startup", "running", "blocked", "delivery"}

// TestChaosExit: a periodic native client ends in every way in every
// state, under on_exit stop and continue (testdata/chaos/exit.yaml: a
// robot of its own, a planner there publishing the messages it is
// delivered, a PD controller on another robot). An exit is reported with
// its code; on_exit: stop ends the run naming the client, continue lets
// the controller keep every period; a client that exec'd a program that
// never speaks is still the client (no exit), and tcs ends it with the
// run.
func TestChaosExit(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		for _, way := range exitWays {
			for _, state := range exitStates {
				for _, onExit := range []string{"stop", "continue"} {
					t.Run(strings.Join([]string{lang.name, way.name, state, onExit}, "/"), func(t *testing.T) {
						chaosExit(t, lang, way, state, onExit, rtBefore)
					})
				}
			}
		}
	}
}

func chaosExit(t *testing.T, lang chaosLang, way exitWay, state, onExit string, rtBefore map[task]string) {
	repl := []string{"--way, code, --state, running", "--way, " + way.name + ", --state, " + state,
		"on_exit: stop", "on_exit: " + onExit}
	if way.name == "kill" {
		// Wall-paced, so that the test sees the client hold in its
		// state and kills it well before the run's end.
		repl = append(repl, "max_rtf: 0", "max_rtf: 1")
	}
	scen := chaosScenario(t, "exit.yaml", repl...)
	run := startChaos(t, lang, scen, 2*time.Minute)
	log := filepath.Join(run.out, "logs", "chaos.log")
	if way.name == "kill" {
		e, ok := run.waitEvent(log, "hold")
		if !ok {
			t.Fatalf("the chaos client never held in state %s:\n%s", state, readFile(log))
		}
		pid, _ := strconv.Atoi(e.kv["pid"])
		if state == "blocked" {
			// The client said it idles: once tcs has lowered it to
			// the waiting clients' level (base priority - 3, the
			// scenario's base being the default), it waits for its
			// next period.
			waiting := false
			for deadline := time.Now().Add(5 * time.Second); !waiting && run.running() && time.Now().Before(deadline); {
				st, err := linux.ReadStat(pid, pid)
				waiting = err == nil && st.RTPriority == config.DefaultBasePriority-3
				time.Sleep(100 * time.Microsecond)
			}
			if !waiting {
				t.Fatalf("the chaos client was never seen waiting for its next period")
			}
		}
		if err := unix.Kill(pid, unix.SIGKILL); err != nil {
			t.Fatalf("kill %d: %v", pid, err)
		}
	}
	res := run.wait(t)
	t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
	checkChaos(t, scen, res, rtBefore)
	evs := chaosEvents(log)
	act, ok := event(evs, "act")
	if !ok || act.kv["way"] != way.name || act.kv["state"] != state {
		t.Fatalf("the chaos client did not act (%v):\n%s", act.kv, readFile(log))
	}
	if strings.Contains(readFile(log), "survived") {
		t.Fatalf("the chaos client survived its way out:\n%s", readFile(log))
	}
	s := res.sum
	chaos := client(t, s, "chaos")
	switch {
	case way.code < 0:
		if res.code != 0 || s.Ended != report.EndCompleted {
			t.Fatalf("exit %d, ended %q: want completed (the exec'd program is the client, running)", res.code, s.Ended)
		}
		if chaos.ExitCode != nil {
			t.Errorf("chaos: exit code %d, want none (it was running when the run ended)", *chaos.ExitCode)
		}
		// The program it became never speaks: from the exec on, its
		// periods began no activation (from its start-up: none did).
		l := chaos.PeriodsLost
		if lost := l.Overrun + l.Host; chaos.Activations > chaos.Periods/2 || state == "startup" && chaos.Activations > 0 || state != "startup" && lost == 0 {
			t.Errorf("chaos: %d activations of %d periods, lost %+v: it went on after its exec", chaos.Activations, chaos.Periods, *l)
		}
		checkPeriods(t, client(t, s, "pd"), 1001)
	case onExit == "stop":
		if want := report.EndClientExited("chaos", way.code); s.Ended != want || res.code == 0 {
			t.Fatalf("exit %d, ended %q: want %q and a non-zero exit", res.code, s.Ended, want)
		}
		checkWellBehaved(t, s)
	default:
		if res.code != 0 || s.Ended != report.EndCompleted {
			t.Fatalf("exit %d, ended %q: want completed (on_exit: continue)", res.code, s.Ended)
		}
		checkPeriods(t, client(t, s, "pd"), 1001)
		if l := chaos.PeriodsLost; l.AfterExit == 0 {
			t.Errorf("chaos: no period lost after its exit: %+v", *l)
		}
	}
	if way.code >= 0 {
		if chaos.ExitCode == nil || *chaos.ExitCode != way.code {
			t.Errorf("chaos: exit code %s, want %d", fmtPtr(chaos.ExitCode), way.code)
		}
		// Its progress, which may lead the world by a quantum and the
		// lateness of the slice's end that is still charged (up to the
		// policy's LateCap; beyond, the host's, not charged).
		if at := chaos.ExitedAtS; at == nil || *at < 0 || *at > s.VirtualS+s.QuantumS+float64(coordinator.DefaultLateCap)/1e9 {
			t.Errorf("chaos: exited at %s s, outside the run's %g s", fmtPtr(at), s.VirtualS)
		}
	}
	t.Logf("chaos: %d activations of %d periods, lost %+v, exit code %s", chaos.Activations, chaos.Periods, *chaos.PeriodsLost, fmtPtr(chaos.ExitCode))
}

// fmtPtr formats *p, or "none".
func fmtPtr[T any](p *T) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// readFile is the content of path, or what went wrong reading it.
func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
