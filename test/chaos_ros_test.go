package test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/report"
)

// TestChaosTCPROS: a ROS 1 node (the bundled goroslib PD controller) with
// a hostile subscriber beside it that speaks TCPROS to tcs's publisher of
// its robot's joint_states: garbage, four connections (a header length of
// 4 GiB, malformed header fields, a wrong md5sum, a valid header followed
// by 1 MiB of random bytes), each refused with a warning naming what was
// wrong, or dropped; deaf, a subscription it never reads (a 4 KiB receive
// buffer, 536-byte segments: its socket is full within a second), dropped
// once its socket is full, never waited for. The run completes with both
// controllers keeping every period. (The C chaos client has no ROS mode.)
func TestChaosTCPROS(t *testing.T) {
	rtBefore := chaosSetup(t)
	lang := chaosLangs(t)[0]
	for _, what := range []string{"garbage", "deaf"} {
		t.Run(what, func(t *testing.T) {
			scen := chaosScenario(t, "ros.yaml", "--what, garbage", "--what, "+what,
				"master: http://127.0.0.1:11311", "master: "+freeMasterURI(t))
			res := startChaos(t, lang, scen, 3*time.Minute).wait(t)
			t.Logf("%s\n%s", strings.TrimSpace(res.out), warnings(res.outDir))
			checkChaos(t, scen, res, rtBefore)
			log := filepath.Join(res.outDir, "logs", "chaos.log")
			evs := chaosEvents(log)
			for _, e := range evs {
				if strings.HasPrefix(e.name, "tcpros") {
					t.Logf("chaos: %s %v", e.name, e.kv)
				}
			}
			if e, ok := event(evs, "tcpros-error"); ok {
				t.Fatalf("the hostile subscriber failed: %v\n%s", e.kv, readFile(log))
			}
			tcsLog := readFile(filepath.Join(res.outDir, "tcs.log"))
			switch what {
			case "garbage":
				n := 0
				for _, e := range evs {
					if e.name == "tcpros-garbage" {
						n++
					}
				}
				if _, ok := event(evs, "tcpros-done"); !ok || n != 4 {
					t.Fatalf("the hostile subscriber opened %d of its 4 connections:\n%s", n, readFile(log))
				}
				// The bad headers are refused, each with what was wrong.
				if k := strings.Count(tcsLog, "rejected a TCPROS connection"); k < 2 || !strings.Contains(tcsLog, "md5sum 0123456789abcdef") {
					t.Errorf("tcs.log says it rejected %d bad headers (want the 4 GiB length and the malformed fields) and names the wrong md5sum: %v",
						k, strings.Contains(tcsLog, "md5sum 0123456789abcdef"))
				}
			case "deaf":
				if _, ok := event(evs, "tcpros-deaf"); !ok {
					t.Fatalf("the deaf subscription was not made:\n%s", readFile(log))
				}
				if !strings.Contains(tcsLog, "its socket is full") {
					t.Errorf("tcs.log does not say it dropped the subscriber that does not read")
				}
			}
			for _, line := range strings.Split(tcsLog, "\n") {
				if strings.Contains(line, "chaos_attacker") && !strings.Contains(line, `"level":"debug"`) ||
					strings.Contains(line, "ros1:") && strings.Contains(line, `"level":"warn"`) {
					t.Logf("tcs.log: %s", line)
				}
			}
			s := res.sum
			if res.code != 0 || s.Ended != report.EndCompleted {
				t.Fatalf("exit %d, ended %q", res.code, s.Ended)
			}
			checkPeriods(t, client(t, s, "pd"), 2001)
			checkPeriods(t, client(t, s, "chaos"), 201)
		})
	}
}
