package test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// bgRun is a `tcs run` in the background.
type bgRun struct {
	cmd  *exec.Cmd
	out  rosenv.Buffer
	dir  string
	done chan error
}

// startTCS starts `tcs run scenario args...` in the background; the test's
// cleanup stops it if it still runs.
func startTCS(t *testing.T, timeout time.Duration, scenario string, args ...string) *bgRun {
	t.Helper()
	r := &bgRun{dir: t.TempDir(), done: make(chan error, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	argv := append([]string{"run", scenario}, args...)
	argv = append(argv, "--out", r.dir, "--quiet", "--wait", "10m")
	r.cmd = exec.CommandContext(ctx, tcsBin, argv...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait(); cancel() }()
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
		}
	})
	return r
}

// wait waits for the run to end and reads its summary.
func (r *bgRun) wait(t *testing.T, timeout time.Duration) result {
	t.Helper()
	select {
	case err := <-r.done:
		res := result{out: r.out.String(), outDir: r.dir}
		if ee, ok := err.(*exec.ExitError); ok {
			res.code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("tcs run: %v\n%s", err, r.out.String())
		}
		res.sum = readSummary(t, r.dir)
		t.Logf("tcs run\n%s%s", res.out, warnings(r.dir))
		return res
	case <-time.After(timeout):
		t.Fatalf("tcs run did not end within %v\n%s", timeout, r.out.String())
		return result{}
	}
}

// checkLiveStatuses checks a stream of /tcs/status messages as a viewer
// reads them: each playing with its ten values; after the first (the
// latched one, maybe from before the echo or virtual time began) virtual
// time going on, a positive real-time factor (≤ maxRTF + 5 % when maxRTF
// is not 0) and an overhead fraction in (0, 1); from the third on, one
// every 500 ms of wall time. It returns the last virtual time and the
// statuses' wall times.
func checkLiveStatuses(t *testing.T, msgs []map[string]string, maxRTF float64) (float64, []float64) {
	t.Helper()
	prevV, prevWall := -1.0, -1.0
	var walls []float64
	for i, m := range msgs {
		v, err1 := strconv.ParseFloat(m["virtual_s"], 64)
		wall, err2 := strconv.ParseFloat(m["wall_s"], 64)
		rtf, err3 := strconv.ParseFloat(m["real_time_factor"], 64)
		ov, err4 := strconv.ParseFloat(m["overhead_fraction"], 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || m["state"] != "playing" || !strings.HasPrefix(m["message"], "playing") ||
			len(m) != 11 {
			t.Fatalf("status %d: %v", i, m)
		}
		if i > 0 && (v <= prevV || rtf <= 0 || (maxRTF > 0 && rtf > maxRTF*1.05) || ov <= 0 || ov >= 1) {
			t.Errorf("status %d: virtual %g after %g, RTF %g, overhead %g", i, v, prevV, rtf, ov)
		}
		if i > 1 && (wall-prevWall < 0.5 || wall-prevWall > 0.75) {
			t.Errorf("status %d: %.3f s of wall after the previous, want 0.5 s (at most 2 a second)", i, wall-prevWall)
		}
		walls = append(walls, wall)
		prevV, prevWall = v, wall
	}
	return prevV, walls
}

// statusValues parses `rostopic echo` output of diagnostic_msgs/
// DiagnosticStatus messages: one map of key → value per message, with
// "message" for the status's message.
func statusValues(out string) []map[string]string {
	var msgs []map[string]string
	var cur map[string]string
	key := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		unq := func(v string) string {
			s, err := strconv.Unquote(v)
			if err != nil {
				return v
			}
			return s
		}
		switch {
		case strings.HasPrefix(line, "level:"):
			cur = map[string]string{}
			msgs = append(msgs, cur)
		case cur == nil:
		case strings.HasPrefix(line, "message:"):
			cur["message"] = unq(strings.TrimSpace(strings.TrimPrefix(line, "message:")))
		case strings.HasPrefix(line, "key:"), strings.HasPrefix(line, "- key:"):
			_, v, _ := strings.Cut(line, "key:")
			key = unq(strings.TrimSpace(v))
		case strings.HasPrefix(line, "value:") && key != "":
			cur[key] = unq(strings.TrimSpace(strings.TrimPrefix(line, "value:")))
			key = ""
		}
	}
	return msgs
}

// Debian's rostopic echoes the live /tcs/status of a running ROS 1 run:
// playing, virtual time going on, a real-time factor and the overhead, at
// the documented rate (at most 2 Hz of wall time).
func TestROS1LiveStatus(t *testing.T) {
	needRT(t)
	cmd := rosController(t, "go")
	uri := freeMasterURI(t)
	env := rosenv.New(t, uri)
	// max_rtf keeps the run going for at least 12 s of wall time, whatever
	// this machine's speed: long enough for the five statuses read below.
	path := rosScenario(t, cmd, 10*time.Millisecond, "60s", uri)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "quantum: 1ms\n", "quantum: 1ms\nmax_rtf: 5\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := startTCS(t, 5*time.Minute, path, "--no-record")
	var out string
	rosenv.Eventually(t, 60*time.Second, "rostopic echo /tcs/status", func() (bool, string) {
		var err error
		out, err = env.Run(30*time.Second, "rostopic", "echo", "-n", "1", "/tcs/status")
		return err == nil, out + run.out.String()
	})
	t0 := time.Now()
	out = env.MustRun(60*time.Second, "rostopic", "echo", "-n", "4", "/tcs/status")
	took := time.Since(t0)
	msgs := statusValues(out)
	if len(msgs) != 4 {
		t.Fatalf("%d statuses parsed from:\n%s", len(msgs), out)
	}
	// Virtual time runs faster than wall time here: no bound on the RTF.
	_, walls := checkLiveStatuses(t, msgs, 0)
	t.Logf("4 statuses in %v, at wall_s %v; last: %v", took, walls, msgs[3])
	res := run.wait(t, 5*time.Minute)
	if res.code != 0 {
		t.Fatalf("tcs run exited %d", res.code)
	}
}

// A ROS 1 run started with --paused stays at virtual time 0, its clients
// started, until Debian's rosservice calls /tcs/step: N calls make exactly
// N world steps (each answer, the latched /tcs/status and /clock say so),
// and /tcs/unpause lets the run complete with every period of the
// controller run.
func TestROS1PausedSteps(t *testing.T) {
	needRT(t)
	cmd := rosController(t, "go")
	uri := freeMasterURI(t)
	env := rosenv.New(t, uri, "rosservice")
	run := startTCS(t, 5*time.Minute, rosScenario(t, cmd, 10*time.Millisecond, "2s", uri), "--paused", "--no-record")
	status := func() map[string]string {
		t.Helper()
		out := env.MustRun(30*time.Second, "rostopic", "echo", "-n", "1", "/tcs/status")
		m := statusValues(out)
		if len(m) != 1 {
			t.Fatalf("/tcs/status:\n%s", out)
		}
		return m[0]
	}
	// The clients start while the world waits at 0.
	rosenv.Eventually(t, 60*time.Second, "the controller's node on the graph", func() (bool, string) {
		out, _ := env.Run(30*time.Second, "rosnode", "list")
		return strings.Contains(out, "/arm/pd\n"), out + run.out.String()
	})
	time.Sleep(2 * time.Second)
	if st := status(); st["state"] != "paused" || st["virtual_s"] != "0" {
		t.Fatalf("a --paused run 2 s after its clients started: %v", st)
	}
	clock := func() string {
		t.Helper()
		return strings.Join(strings.Fields(env.MustRun(30*time.Second, "rostopic", "echo", "-n", "1", "/clock")), " ")
	}
	if c := clock(); !strings.Contains(c, "secs: 1 nsecs: 0") {
		t.Fatalf("/clock of a paused run: %s (want ROS time 1 s: virtual 0)", c)
	}
	const n = 5
	for k := 1; k <= n; k++ {
		out := env.MustRun(60*time.Second, "rosservice", "call", "/tcs/step")
		want := fmt.Sprintf("success: True\nmessage: \"virtual time %g s (%d ns)\"", float64(k)/1000, k*1_000_000)
		if strings.TrimSpace(out) != want {
			t.Fatalf("rosservice call /tcs/step #%d:\n%s\nwant:\n%s", k, out, want)
		}
	}
	if st := status(); st["state"] != "paused" || st["virtual_s"] != "0.005" {
		t.Fatalf("after %d steps: %v", n, st)
	}
	if c := clock(); !strings.Contains(c, "secs: 1 nsecs: 5000000") {
		t.Fatalf("/clock after %d steps of 1 ms: %s", n, c)
	}
	env.MustRun(60*time.Second, "rosservice", "call", "/tcs/unpause")
	res := run.wait(t, 5*time.Minute)
	if res.code != 0 || res.sum.Ended != report.EndCompleted {
		logs, _ := filepath.Glob(filepath.Join(res.outDir, "logs", "*"))
		logs = append(logs, filepath.Join(res.outDir, "tcs.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
		t.Fatalf("tcs run exited %d, ended %q", res.code, res.sum.Ended)
	}
	pd := client(t, res.sum, "pd")
	checkPeriods(t, pd, 201)
	// The node's wall-clock work (it asks the master every second whether
	// it is there) ran while the world was paused, uncharged: a node kept
	// from running would find its master gone after a long pause.
	if pd.PausedCPUS <= 0 {
		t.Errorf("paused_cpu_s = %g: the node never ran while the world was paused", pd.PausedCPUS)
	}
	if res.sum.PausedS < 2 {
		t.Errorf("paused_s %g, want ≥ 2 (the test waited that long)", res.sum.PausedS)
	}
	t.Logf("paused %.2f s of %.2f s wall; RTF %.2f; the node's CPU while paused %.2f ms", res.sum.PausedS, res.sum.WallS, res.sum.RTF, pd.PausedCPUS*1e3)
}
