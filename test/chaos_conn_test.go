package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/coordinator/linux"
	"github.com/tcs-robotics/tcs/report"
)

// tcsLogWarns returns the warnings of a run's tcs.log that name client.
func tcsLogWarns(out, client string) []string {
	var w []string
	for _, line := range strings.Split(readFile(filepath.Join(out, "tcs.log")), "\n") {
		if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, `"client":"`+client+`"`) {
			w = append(w, line)
		}
	}
	return w
}

// TestChaosGarbage: after three activations the chaos client writes
// garbage on its native connection: pipe, records of every op with bad
// arguments and then random bytes on its request pipe, and then it carries
// on; partial, seven bytes of a record, and then it waits for a reply
// forever; shm, random bytes over its whole shared memory before each of
// its requests from then on. tcs does not panic and says in tcs.log what
// the client did. pipe: each record is refused (StatusBadRequest, as the
// protocol says), so the client reads a refusal where it expected its
// activation and exits 1, which ends the run (on_exit: stop) naming it.
// partial and shm: the run completes (the client is stuck, or refused at
// every request), the controller beside it keeping every period.
func TestChaosGarbage(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		for _, what := range []string{"pipe", "partial", "shm"} {
			t.Run(lang.name+"/"+what, func(t *testing.T) {
				scen := chaosScenario(t, "garbage.yaml", "--what, pipe", "--what, "+what)
				res := startChaos(t, lang, scen, 2*time.Minute).wait(t)
				t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
				checkChaos(t, scen, res, rtBefore)
				log := filepath.Join(res.outDir, "logs", "chaos.log")
				if _, ok := event(chaosEvents(log), "garbage"); !ok {
					t.Fatalf("the chaos client wrote no garbage:\n%s", readFile(log))
				}
				w := tcsLogWarns(res.outDir, "chaos")
				for _, l := range w[:min(len(w), 3)] {
					t.Logf("tcs.log: %s", l)
				}
				if what != "partial" && !strings.Contains(strings.Join(w, "\n"), "bad ") {
					t.Errorf("tcs.log has no warning about the chaos client's garbage")
				}
				s := res.sum
				chaos := client(t, s, "chaos")
				t.Logf("chaos: exit %s, %d activations of %d periods, lost %+v", fmtPtr(chaos.ExitCode), chaos.Activations, chaos.Periods, *chaos.PeriodsLost)
				if what == "pipe" {
					if want := report.EndClientExited("chaos", 1); s.Ended != want || res.code == 0 {
						t.Fatalf("exit %d, ended %q: want %q (the client read a refusal and exited 1)", res.code, s.Ended, want)
					}
					checkWellBehaved(t, s)
					return
				}
				if res.code != 0 || s.Ended != report.EndCompleted {
					t.Fatalf("exit %d, ended %q: want completed", res.code, s.Ended)
				}
				checkPeriods(t, client(t, s, "pd"), 1001)
			})
		}
	}
}

// TestChaosDeaf: after three activations the chaos client stops reading
// its replies. requests: it sends requests as fast as its pipe takes them;
// once the reply pipe is full tcs ends it (SIGKILL) instead of blocking on
// it, logs why, and on_exit: stop ends the run naming it. idle: it says
// it idles (WriteIdle) and computes on, and again at every activation it
// is given, never reading one: it is charged what it computes, and the run
// completes.
func TestChaosDeaf(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		for _, what := range []string{"requests", "idle"} {
			t.Run(lang.name+"/"+what, func(t *testing.T) {
				scen := chaosScenario(t, "deaf.yaml", "--what, requests", "--what, "+what)
				res := startChaos(t, lang, scen, 2*time.Minute).wait(t)
				t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
				checkChaos(t, scen, res, rtBefore)
				log := filepath.Join(res.outDir, "logs", "chaos.log")
				if _, ok := event(chaosEvents(log), "deaf"); !ok {
					t.Fatalf("the chaos client never went deaf:\n%s", readFile(log))
				}
				s := res.sum
				chaos := client(t, s, "chaos")
				if what == "requests" {
					if want := report.EndClientExited("chaos", 137); s.Ended != want || res.code == 0 {
						t.Fatalf("exit %d, ended %q: want %q", res.code, s.Ended, want)
					}
					if !strings.Contains(strings.Join(tcsLogWarns(res.outDir, "chaos"), "\n"), "reply failed") {
						t.Errorf("tcs.log does not say why it ended the client")
					}
					checkWellBehaved(t, s)
					return
				}
				if res.code != 0 || s.Ended != report.EndCompleted {
					t.Fatalf("exit %d, ended %q", res.code, s.Ended)
				}
				checkPeriods(t, client(t, s, "pd"), 1001)
				if chaos.CPUS <= 0 || chaos.ProgressS < s.VirtualS-0.02 {
					t.Errorf("chaos: cpu %g s, progress %g s of %g", chaos.CPUS, chaos.ProgressS, s.VirtualS)
				}
				t.Logf("chaos: cpu %.3f s, %d activations of %d periods, lost %+v, leak %g s", chaos.CPUS, chaos.Activations, chaos.Periods, chaos.PeriodsLost, chaos.LeakS)
			})
		}
	}
}

// TestChaosEscape: the chaos client tries to raise its thread to
// SCHED_FIFO 99 and to let it run on every CPU, and logs what the calls
// returned. Clients run without privileges inside a cpuset of the
// simulation CPU (issue 19, part 1): the raise fails with EPERM, and while
// the run goes on every thread of the client stays on the simulation CPU
// alone, below the coordinator's priority, as /proc shows from outside.
func TestChaosEscape(t *testing.T) {
	rtBefore := chaosSetup(t)
	for _, lang := range chaosLangs(t) {
		t.Run(lang.name, func(t *testing.T) {
			scen := chaosScenario(t, "escape.yaml")
			run := startChaos(t, lang, scen, 2*time.Minute)
			log := filepath.Join(run.out, "logs", "chaos.log")
			e, ok := run.waitEvent(log, "escape")
			if !ok {
				t.Fatalf("the chaos client did not try to escape:\n%s", readFile(log))
			}
			t.Logf("chaos client: %v", e.kv)
			pid, _ := strconv.Atoi(e.kv["pid"])
			cpu := readLog(run.out).cpu
			base := 80 // the scenario's base_priority (default)
			// Look at every thread of the client a few times while the
			// run goes on.
			looks, escaped := 0, map[string]bool{}
			for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end) && run.running(); looks++ {
				tids, _ := linux.Tasks(pid)
				for _, tid := range tids {
					st, err := linux.ReadStat(pid, tid)
					cpus := taskStatus(pid, tid, "Cpus_allowed_list")
					if err != nil || cpus == "" {
						continue // gone meanwhile
					}
					if cpus != strconv.Itoa(cpu) {
						escaped["thread "+strconv.Itoa(tid)+" may run on CPUs "+cpus+", not the simulation CPU "+strconv.Itoa(cpu)+" alone"] = true
					}
					if st.Policy != 0 && st.RTPriority > base-1 {
						escaped["thread "+strconv.Itoa(tid)+" at real-time priority "+strconv.Itoa(st.RTPriority)+", above the dispatched client's "+strconv.Itoa(base-1)] = true
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			res := run.wait(t)
			t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
			checkChaos(t, scen, res, rtBefore)
			if looks == 0 {
				t.Errorf("the run ended before the test could look at the client")
			}
			for what := range escaped {
				t.Errorf("escaped: %s", what)
			}
			if got := e.kv["setscheduler_fifo_99"]; got != "EPERM" {
				t.Errorf("sched_setscheduler(SCHED_FIFO, 99) returned %s, want EPERM", got)
			}
			if got := e.kv["cpus_after"]; got != strconv.Itoa(cpu) {
				t.Errorf("after sched_setaffinity(every CPU) (%s) the client may run on CPUs %s, want %d alone", e.kv["setaffinity_all"], got, cpu)
			}
			s := res.sum
			if res.code != 0 || s.Ended != report.EndCompleted {
				t.Fatalf("exit %d, ended %q", res.code, s.Ended)
			}
			checkPeriods(t, client(t, s, "pd"), 1001)
		})
	}
}

// taskStatus is field name of /proc/PID/task/TID/status ("" if absent).
func taskStatus(pid, tid int, name string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
