package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/bridge/master"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
	"github.com/tcs-robotics/tcs/test/rosenv"
)

// freeMasterURI is a loopback master URI on a free port (master.FreeURI):
// tcs starts its embedded master there.
func freeMasterURI(t *testing.T) string {
	t.Helper()
	uri, err := master.FreeURI()
	if err != nil {
		t.Fatal(err)
	}
	return uri
}

// rosController returns the command line of the unmodified PD controller
// of test/controllers in lang, building it if needed; it skips the test
// when that language's ROS is missing.
func rosController(t *testing.T, lang string) []string {
	t.Helper()
	switch lang {
	case "rospy":
		rosenv.New(t, "http://127.0.0.1:1/")
		abs, err := filepath.Abs("controllers/rospy/pd.py")
		if err != nil {
			t.Fatal(err)
		}
		return []string{rosenv.Python, abs}
	case "roscpp":
		if _, err := exec.LookPath("g++"); err != nil {
			t.Skip("g++ missing: install g++ libroscpp-dev libstd-msgs-dev libsensor-msgs-dev")
		}
		flags, err := exec.Command("pkg-config", "--cflags", "--libs", "roscpp", "std_msgs", "sensor_msgs").Output()
		if err != nil {
			t.Skipf("roscpp missing (pkg-config: %v): install libroscpp-dev libstd-msgs-dev libsensor-msgs-dev", err)
		}
		bin := filepath.Join(t.TempDir(), "pd")
		args := append([]string{"-O2", "-std=c++17", "controllers/roscpp/pd.cpp", "-o", bin}, strings.Fields(string(flags))...)
		if out, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
			t.Fatalf("build the roscpp controller: %v\n%s", err, out)
		}
		return []string{bin}
	case "go":
		return []string{"tcs", "node", "pd"}
	}
	t.Fatalf("no controller %q", lang)
	return nil
}

// rosScenario writes a scenario with one ROS PD controller at period on
// the pendulum and returns its path. master "" is a free loopback port
// (tcs starts its own master there).
func rosScenario(t *testing.T, cmd []string, period time.Duration, duration, master string) string {
	t.Helper()
	if master == "" {
		master = freeMasterURI(t)
	}
	rate := int(time.Second / period)
	var quoted []string
	for _, a := range append(cmd, fmt.Sprintf("_rate:=%d", rate)) {
		quoted = append(quoted, fmt.Sprintf("%q", a))
	}
	return pendulumScenario(t, "ros-pd", duration, "ros:\n  master: "+master+"\n", fmt.Sprintf(`      - name: pd
        cmd: [%s]
        api: ros
        class: periodic
        period: %s
`, strings.Join(quoted, ", "), period))
}

// addToLastClient appends a field (YAML, one line) to the last client of
// the scenario at path, as pendulumScenario writes it: that client's
// fields end the file.
func addToLastClient(t *testing.T, path, field string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, "        "+field+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkSampleAtActivation checks the deliveries of a client whose samples
// wait for its activations: one per activation, plus the samples of
// instants at which it was still computing (an activation that runs past
// its period takes them as it runs), a tenth more at most.
func checkSampleAtActivation(t *testing.T, c report.ClientSummary) {
	t.Helper()
	if c.Deliveries < c.Activations || c.Deliveries > c.Activations+c.Activations/10 {
		t.Errorf("deliveries = %d for %d activations, want one per activation (and those the node took while it computed)", c.Deliveries, c.Activations)
	}
}

// pendulumScenario writes scenario name (quantum and step 1 ms, the
// pendulum, robot arm) with the top-level YAML extra and arm's clients
// (list items indented six spaces), and returns its path.
func pendulumScenario(t *testing.T, name, duration, extra, clients string) string {
	t.Helper()
	y := "name: " + name + "\nduration: " + duration + "\nquantum: 1ms\n" + extra +
		"dynamics:\n  model: pendulum\n  step: 1ms\nrobots:\n  - name: arm\n    clients:\n" + clients
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A robot whose command_topic names a ros2_control forward command
// controller's topic takes its command there as a Float64MultiArray: the
// rospy controller, publishing on that topic, balances the pendulum, and
// the recording holds its commands under that name.
func TestROS1CommandTopic(t *testing.T) {
	needRT(t)
	topic := "/forward_effort_controller/commands"
	cmd := append(rosController(t, "rospy"), "_array:=true", "command:="+topic)
	path := rosScenario(t, cmd, 10*time.Millisecond, "5s", "")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "  - name: arm\n", "  - name: arm\n    command_topic: "+topic+"\n", 1)
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runCompleted(t, 5*time.Minute, path)
	checkPeriods(t, client(t, s, "pd"), 501)
	checkBalanced(t, s, 0)
	var n int64
	for _, tp := range s.Recording.Topics {
		if tp.Topic == topic {
			n = tp.Messages
		}
	}
	if n < 400 {
		t.Errorf("the recording holds %d commands on %s, want one per activation (~500)", n, topic)
	}
}

// Unmodified rospy and roscpp PD controllers at 100 Hz and 1 kHz on the
// pendulum, consistent mode, 10 s virtual (issue 3's acceptance), and the
// goroslib one at 100 Hz. (At 1 kHz the goroslib node misses a deadline
// at each garbage collection of its process, whose activation then needs
// more than a period of CPU; GODEBUG=gctrace=1 shows the collections.
// That is the node's real behaviour, which tcs is there to show; the demo
// runs it at 200 Hz.)
func TestROS1Controllers(t *testing.T) {
	needRT(t)
	for _, tc := range []struct {
		lang   string
		period time.Duration
	}{
		{"rospy", 10 * time.Millisecond}, {"rospy", time.Millisecond},
		{"roscpp", 10 * time.Millisecond}, {"roscpp", time.Millisecond},
		{"go", 10 * time.Millisecond},
	} {
		lang, period := tc.lang, tc.period
		t.Run(fmt.Sprintf("%s/%v", lang, period), func(t *testing.T) {
			cmd := rosController(t, lang)
			s := runCompleted(t, 5*time.Minute, rosScenario(t, cmd, period, "10s", ""))
			c := client(t, s, "pd")
			checkPeriods(t, c, int64(10*time.Second/period)+1)
			// Activation 0 runs as the node starts, before virtual time.
			if c.PeriodsLost.BeforeStart != 1 {
				t.Errorf("periods lost before start = %d, want 1 (activation 0)", c.PeriodsLost.BeforeStart)
			}
			if c.PeriodError > 0.005 {
				t.Errorf("period_error = %g, want ≤ 0.005", c.PeriodError)
			}
			// On a VM the host may hold the vCPU for a millisecond or
			// two while the node runs, and the guest charges that to the
			// node's CPU clock; such misses are reported apart
			// (deadline_misses_host), each after a timer the host delayed
			// over 200 µs, which tcs.log shows.
			// At 100 Hz an activation of about 100 µs of CPU never misses.
			// At 1 kHz a pause of the node's own now and then takes an
			// activation past its period (such as a garbage collection,
			// measured for the goroslib node below; for rospy and roscpp
			// not yet told apart from a host stall tcs did not see): a few
			// per 10,000 are logged, more would be tcs's doing.
			own := c.DeadlineMisses - c.DeadlineMissesHost
			if lim := c.Activations / 1000; own > 0 && (period >= 10*time.Millisecond || own > lim) {
				t.Errorf("deadline_misses = %d (%d after a host-delayed timer), want 0 of the node's own at %v (at most %d at 1 kHz)",
					c.DeadlineMisses, c.DeadlineMissesHost, period, lim)
			} else if c.DeadlineMisses > 0 {
				t.Logf("deadline_misses = %d (%d after a host-delayed timer)", c.DeadlineMisses, c.DeadlineMissesHost)
			}
			if bound := s.QuantumS + 0.0002; s.DriftP99S > bound {
				t.Errorf("drift_p99_s = %g, want ≤ %g", s.DriftP99S, bound)
			}
			if c.LeakS != 0 {
				t.Errorf("leak_s = %g, want 0", c.LeakS)
			}
			// Every sensor sample reached the node (one per 1 ms step).
			if c.Deliveries < 10000 {
				t.Errorf("deliveries = %d, want ≥ 10000", c.Deliveries)
			}
			checkBalanced(t, s, 0)
			t.Logf("%s at %v: period_error %.2g, drift p99 %.3g s, holds %d costing %.3f s of wall (%.0f µs per activation), wall %.2f s",
				lang, period, c.PeriodError, s.DriftP99S, c.Holds, c.HoldWallS, 1e6*c.HoldWallS/float64(max(c.Activations, 1)), s.WallS)
			if lang == "roscpp" && c.Holds == 0 {
				t.Errorf("roscpp polls for sim time every 1 ms of wall time: want its activations held over that poll, got 0 holds")
			}
		})
	}
}

// Unmodified ROS 1 controllers whose samples wait for their activations
// (samples: at_activation): each activation gets the sample at its
// instant, none between, and the pendulum is balanced as with every
// sample; the node is dispatched for its activations only, not for the
// four samples between two of them.
func TestROS1SamplesAtActivation(t *testing.T) {
	needRT(t)
	for _, lang := range []string{"go", "roscpp", "rospy"} {
		t.Run(lang, func(t *testing.T) {
			cmd := rosController(t, lang)
			period := 5 * time.Millisecond
			path := rosScenario(t, cmd, period, "3s", "")
			addToLastClient(t, path, "samples: at_activation")
			s := runCompleted(t, 5*time.Minute, path)
			c := client(t, s, "pd")
			checkPeriods(t, c, int64(3*time.Second/period)+1)
			checkNodeMisses(t, c)
			checkSampleAtActivation(t, c) // 3,000 deliveries with every sample
			if bound := s.QuantumS + 0.0002; s.DriftP99S > bound {
				t.Errorf("drift_p99_s = %g, want ≤ %g", s.DriftP99S, bound)
			}
			checkBalanced(t, s, 0)
			t.Logf("%s: %d activations, %d deliveries, %d dispatches (%.2f per activation), coordinator %.0f µs per activation",
				lang, c.Activations, c.Deliveries, s.Dispatches, float64(s.Dispatches)/float64(max(c.Activations, 1)), s.CoordinatorPerActivationUS)
		})
	}
}

// tcs demo: the bundled goroslib node through the embedded master, with no
// ROS installation needed (the test runs it with an empty PATH for ROS).
func TestDemo(t *testing.T) {
	needRT(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tcsBin, "demo", "--out", out, "--quiet", "--wait", "10m")
	cmd.Dir = t.TempDir()
	// No ROS: nothing of /opt/ros or Debian's ROS tools on PATH, and a
	// master URI nobody answers, so tcs starts its own there.
	cmd.Env = []string{"PATH=/nonexistent", "HOME=" + t.TempDir(), "ROS_MASTER_URI=" + freeMasterURI(t)}
	b, err := cmd.CombinedOutput()
	t.Logf("tcs demo\n%s%s", b, warnings(out))
	if err != nil {
		t.Fatalf("tcs demo: %v", err)
	}
	s := readSummary(t, out)
	if s.Ended != report.EndCompleted {
		t.Fatalf("ended %q", s.Ended)
	}
	if !strings.Contains(string(b), "(embedded)") {
		t.Errorf("tcs demo did not say it started its embedded master")
	}
	c := client(t, s, "pd")
	if c.PeriodError > 0.001 {
		t.Errorf("period_error %g, want ≤ 0.001", c.PeriodError)
	}
	// The bundled node is a Go program: a pause of its own (its garbage
	// collector) now and then takes an activation past its period, as in
	// TestROS1Controllers; more than one per 1,000 would be tcs's doing.
	if own := c.DeadlineMisses - c.DeadlineMissesHost; own > c.Activations/1000 {
		t.Errorf("deadline_misses %d (%d the host's), want at most %d of the node's own", c.DeadlineMisses, c.DeadlineMissesHost, c.Activations/1000)
	} else if c.DeadlineMisses > 0 {
		t.Logf("deadline_misses %d (%d the host's)", c.DeadlineMisses, c.DeadlineMissesHost)
	}
	checkPeriods(t, c, 2001)
	checkBalanced(t, s, 0)
}

// A rospy planner that computes for 30 ms of CPU per plan, best-effort
// below a rospy controller at 100 Hz in the same robot: each plan reaches
// the controller through tcs (ros.relay) when the controller's progress
// reaches the planner's publish time, never before; and the planner's
// computing costs it virtual time.
func TestROS1Relay(t *testing.T) {
	needRT(t)
	rosenv.New(t, "http://127.0.0.1:1/")
	pd, err := filepath.Abs("controllers/rospy/pd.py")
	if err != nil {
		t.Fatal(err)
	}
	planner, err := filepath.Abs("controllers/rospy/planner.py")
	if err != nil {
		t.Fatal(err)
	}
	path := pendulumScenario(t, "ros-relay", "3s", fmt.Sprintf(`ros:
  master: %s
  relay:
    - {topic: /arm/plan, from: planner}
`, freeMasterURI(t)), fmt.Sprintf(`      - name: pd
        cmd: [%q, %q, "_rate:=100", "_plans:=true"]
        api: ros
        class: periodic
        period: 10ms
        priority: 20
      - name: planner
        cmd: [%q, %q, "_cpu_ms:=30"]
        api: ros
        class: best-effort
        priority: 10
`, rosenv.Python, pd, rosenv.Python, planner))
	s := runCompleted(t, 5*time.Minute, path)
	c, p := client(t, s, "pd"), client(t, s, "planner")
	checkNodeMisses(t, c)
	// The planner gets what the controller leaves of 3 s of CPU: at 30 ms
	// of CPU a plan, well over 30 plans.
	if s.Relayed < 30 || s.RelayDropped != 0 {
		t.Fatalf("relayed %d, dropped %d: want ≥ 30 plans, none dropped", s.Relayed, s.RelayDropped)
	}
	if c.RelayIn < s.Relayed-1 || c.RelayLost != 0 {
		t.Errorf("controller got %d of %d plans (%d lost)", c.RelayIn, s.Relayed, c.RelayLost)
	}
	// tcs's own record: each plan reached the controller when the
	// controller's progress had reached the planner's publish time (they
	// share the robot's CPU, so exactly then).
	var lateMax int64
	delivered := 0
	for _, l := range logLines(t, filepath.Join(filepath.Dir(filepath.Dir(c.Log)), "tcs.log"), "{") {
		var e struct {
			Msg    string `json:"message"`
			Client string `json:"client"`
			Sent   int64  `json:"sent_ns"`
			At     int64  `json:"at_ns"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Msg != "relayed message delivered" {
			continue
		}
		delivered++
		if e.Client != "pd" {
			t.Errorf("plan delivered to %q, want pd", e.Client)
		}
		if e.At < e.Sent {
			t.Errorf("plan published at %d ns reached the controller at %d ns of its progress: early", e.Sent, e.At)
		}
		lateMax = max(lateMax, e.At-e.Sent)
	}
	if int64(delivered) != c.RelayIn {
		t.Errorf("tcs.log records %d deliveries, the summary %d", delivered, c.RelayIn)
	}
	if lateMax != 0 {
		t.Errorf("a plan reached the controller %v after it was published; they share a CPU, want 0", time.Duration(lateMax))
	}
	// The nodes' view. A plan's stamp is the planner's ROS time when it
	// published, which rospy updates from its clock thread: that thread
	// waits for the GIL behind the computing one (up to the 5 ms switch
	// interval and more), so stamps run a few ms behind the publish time
	// and say little one by one. Averaged, they show the computation's
	// cost: plans lie at least their CPU apart in virtual time.
	type plan struct{ stamp, cpu int64 }
	sent := map[int]plan{}
	for _, l := range logLines(t, p.Log, "plan ") {
		var k int
		var pl plan
		if _, err := fmt.Sscanf(l, "plan %d stamp_ns %d cpu_ns %d", &k, &pl.stamp, &pl.cpu); err == nil {
			sent[k] = pl
		}
	}
	got := 0
	var lagMax, first, last, cpuSum int64
	n := 0
	for _, l := range logLines(t, c.Log, "got plan ") {
		var k int
		var stamp, at int64
		if _, err := fmt.Sscanf(l, "got plan %d stamp_ns %d at_ns %d", &k, &stamp, &at); err != nil {
			continue
		}
		got++
		if pl, ok := sent[k]; !ok || pl.stamp != stamp {
			t.Errorf("controller got plan %d stamped %d; the planner printed %+v (%v)", k, stamp, pl, ok)
		}
		if at < stamp {
			t.Errorf("plan %d stamped %d reached the controller at %d: before it was published", k, stamp, at)
		}
		lagMax = max(lagMax, at-stamp)
		if stamp <= 1e9 {
			continue // computed during start-up, before virtual time began
		}
		if n == 0 {
			first = stamp
		} else {
			cpuSum += sent[k].cpu
		}
		last = stamp
		n++
	}
	// Plans computed after the run (the node runs on until it is stopped)
	// never reach the controller.
	if int64(got) < s.Relayed {
		t.Errorf("controller printed %d plans, tcs relayed %d", got, s.Relayed)
	}
	if n < 20 {
		t.Fatalf("%d plans reached the controller in virtual time, want ≥ 20", n)
	}
	if mean, cpu := (last-first)/int64(n-1), cpuSum/int64(n-1); mean < cpu {
		t.Errorf("plans %v apart on average in virtual time, less than the %v of CPU each took", time.Duration(mean), time.Duration(cpu))
	} else {
		t.Logf("plans %v apart on average in virtual time, %v of CPU each", time.Duration(mean), time.Duration(cpu))
	}
	t.Logf("%d plans relayed, %d reached the controller (stamp to arrival ≤ %v in the nodes' clocks); planner CPU %.3f s, controller %d activations",
		s.Relayed, got, time.Duration(lagMax), p.CPUS, c.Activations)
}

// logLines returns the lines of the file at path that begin with prefix.
func logLines(t *testing.T, path, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// max_rtf caps the real-time factor: the native pendulum controller, which
// runs faster than twice real time unpaced, takes at least 1 s of wall for
// 2 s of virtual time at max_rtf 2.
func TestMaxRTF(t *testing.T) {
	needRT(t)
	path := pendulumScenario(t, "paced", "2s", "max_rtf: 2\n", `      - name: pd
        cmd: [tcs, client, pd]
        class: periodic
        period: 1ms
`)
	s := runCompleted(t, 2*time.Minute, path)
	if s.WallS < 1.0 || s.RTF > 2.0 {
		t.Errorf("wall %.3f s, rtf %.3f for 2 s virtual at max_rtf 2: want wall ≥ 1 s", s.WallS, s.RTF)
	}
	c := client(t, s, "pd")
	checkPeriods(t, c, 2001)
	if own := c.DeadlineMisses - c.DeadlineMissesHost; own != 0 {
		t.Errorf("pd: %d deadline misses of its own (%d after a host-delayed timer)", own, c.DeadlineMissesHost)
	}
	t.Logf("2 s virtual in %.3f s of wall (rtf %.3f)", s.WallS, s.RTF)
}

// A rospy controller at 100 Hz that exits with code 3 in its 50th
// activation (on_exit: stop): the run reports 50 activations, the exit
// code and its virtual time (≈ 0.5 s), ends at once, and tcs does not wait
// for more than the node's own shutdown.
func TestROS1NodeExit(t *testing.T) {
	needRT(t)
	cmd := append(rosController(t, "rospy"), "_exit_after:=50", "_exit_code:=3")
	path := rosScenario(t, cmd, 10*time.Millisecond, "3s", "")
	t0 := time.Now()
	r := runTCS(t, 2*time.Minute, path)
	took := time.Since(t0)
	c := client(t, r.sum, "pd")
	if c.ExitCode == nil || *c.ExitCode != 3 {
		t.Fatalf("exit code %v, want 3 (ended %q)", c.ExitCode, r.sum.Ended)
	}
	if r.sum.Ended != report.EndClientExited("pd", 3) {
		t.Errorf("ended %q, want %q", r.sum.Ended, report.EndClientExited("pd", 3))
	}
	// rospy's shutdown first unregisters everything from the master, then
	// closes its connections: the master answers before the next release
	// (the loop lets it), and the node that unregistered its clock gets
	// no more releases.
	if c.Activations != 50 {
		t.Errorf("activations = %d, want 50", c.Activations)
	}
	if c.ExitedAtS == nil || *c.ExitedAtS < 0.5 || *c.ExitedAtS > 0.53 {
		t.Errorf("exited at %v s of virtual time, want ≈ 0.5", c.ExitedAtS)
	}
	if l := c.PeriodsLost; l == nil || c.Activations+l.Total != c.Periods || l.Overrun != 0 {
		t.Errorf("periods %d, activations %d, lost %+v: want every period activated or lost before start or after exit", c.Periods, c.Activations, l)
	}
	if r.code == 0 {
		t.Errorf("tcs exited 0 although the run ended on a client's exit")
	}
	// The run itself (virtual time) ends at the node's clock loss; what is
	// left is the node's shutdown (rospy: about 0.7 s of wall) and tcs's
	// own start and stop.
	t.Logf("tcs ran %.2f s of wall in all, the loop %.3f s", took.Seconds(), r.sum.WallS)
	if r.sum.WallS > 1 {
		t.Errorf("the run went on %.2f s of wall after start-up, want < 1 s", r.sum.WallS)
	}
}

// quoteArgs writes args as the items of a YAML flow sequence.
func quoteArgs(args ...string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(out, ", ")
}

// The mixed ROS 1 stack in lockstep (a goroslib PD controller and a roscpp
// ros::Timer node at 200 Hz, a rospy planner that computes 100 ms per
// plan): virtual time reaches the end (lockstep once waited for a whole
// plan per world step: 0.47 s of virtual time in 90 s of wall), both
// controllers keep every period, and the drift grows with the CPU burned.
func TestROS1LockstepMixedStack(t *testing.T) {
	needRT(t)
	timer := rosController(t, "roscpp")
	planner, err := filepath.Abs("controllers/rospy/planner.py")
	if err != nil {
		t.Fatal(err)
	}
	path := pendulumScenario(t, "mixed", "3s", "mode: lockstep\nwall_limit: 60s\nros:\n  master: "+freeMasterURI(t)+"\n", fmt.Sprintf(`      - name: pd
        cmd: [tcs, node, pd, _rate:=200]
        api: ros
        class: periodic
        period: 5ms
        priority: 30
      - name: timer
        cmd: [%s]
        api: ros
        class: periodic
        period: 5ms
        priority: 20
      - name: planner
        cmd: [%s]
        api: ros
        class: best-effort
        priority: 0
`, quoteArgs(append(timer, "_rate:=200", "_timer:=true", "command:=/arm/timer_command")...), quoteArgs("/usr/bin/python3", planner, "_cpu_ms:=100")))
	s := runCompleted(t, 3*time.Minute, path)
	if s.WallS > 30 {
		t.Errorf("3 s of virtual time took %.1f s of wall, want < 30", s.WallS)
	}
	for _, name := range []string{"pd", "timer"} {
		c := client(t, s, name)
		checkPeriods(t, c, 601)
		if c.DeadlineMisses != 0 {
			t.Errorf("%s: %d deadline misses in lockstep (computation costs nothing)", name, c.DeadlineMisses)
		}
	}
	if pl := client(t, s, "planner"); pl.CPUS < 1 {
		t.Errorf("planner used %.2f s of CPU in 3 s of virtual time: it should get the steps' spare time", pl.CPUS)
	}
	if s.DriftMaxS < 10*s.QuantumS {
		t.Errorf("lockstep drift max %.4f s: it should grow with the CPU burned, far past a quantum", s.DriftMaxS)
	}
	t.Logf("lockstep mixed stack: %.1f s of wall, rtf %.2f, drift max %.3f s", s.WallS, s.RTF, s.DriftMaxS)
}

// A roscpp ros::Timer controller at 200 Hz above a rospy planner that
// computes without a break, consistent mode. The node's timer thread polls
// ROS time every 1 ms of wall time; with the CPU kept busy its poll is
// mostly due when an activation's clock arrives, and it is raised only
// once the threads that apply that clock have blocked (Proc.HoldBack), so
// it fires the timer at once. Whatever the order, every period must get
// exactly one command, published within the period after its instant.
func TestROS1TimerUnderPlanner(t *testing.T) {
	needRT(t)
	timer := rosController(t, "roscpp")
	planner, err := filepath.Abs("controllers/rospy/planner.py")
	if err != nil {
		t.Fatal(err)
	}
	const period = 5 * time.Millisecond
	path := pendulumScenario(t, "timer", "3s", "ros:\n  master: "+freeMasterURI(t)+"\n", fmt.Sprintf(`      - name: timer
        cmd: [%s]
        api: ros
        class: periodic
        period: %v
        priority: 20
        samples: at_activation
      - name: planner
        cmd: [%s]
        api: ros
        class: best-effort
        priority: 0
`, quoteArgs(append(timer, "_rate:=200", "_timer:=true")...), period, quoteArgs(rosenv.Python, planner, "_cpu_ms:=100")))
	r := runTCS(t, 3*time.Minute, path)
	if r.code != 0 || r.sum.Ended != report.EndCompleted {
		t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
	}
	c := client(t, r.sum, "timer")
	checkPeriods(t, c, int64(3*time.Second/period)+1)
	checkNodeMisses(t, c)
	if pl := client(t, r.sum, "planner"); pl.CPUS < 1 {
		t.Errorf("planner used %.2f s of CPU in 3 s of virtual time: it should get what the controller leaves", pl.CPUS)
	}
	// Commands per period k (published in [k·P, (k+1)·P)); period 0 is
	// the node's start-up.
	per := map[int64]int{}
	if _, err := record.Read(filepath.Join(r.outDir, "run.mcap"), func(ch *record.ReadChannel, m *mcap.Message) error {
		if ch.Topic == "/arm/command" {
			per[int64(m.PublishTime)/int64(period)]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var none, more []int64
	for k := int64(1); k < int64(3*time.Second/period); k++ {
		switch {
		case per[k] == 0:
			none = append(none, k)
		case per[k] > 1:
			more = append(more, k)
		}
	}
	// An activation that missed its deadline publishes in the next
	// period: that one has two, its own none.
	if n := int64(max(len(none), len(more))); n > c.DeadlineMisses {
		t.Errorf("periods without a command %v, with more than one %v: want one command per period (deadline misses: %d)", none, more, c.DeadlineMisses)
	}
	t.Logf("timer: %d holds costing %.3f ms of wall, overhead %.1f %% of the simulation CPU, rtf %.2f",
		c.Holds, 1e3*c.HoldWallS, 100*r.sum.Overhead.SimFraction, r.sum.RTF)
}

// A rospy planner that computes 200 ms of CPU per plan from its first
// valid ROS time on: ROS time moves by what it computed, the first plan
// included (it once saw 0.1 s for its first 0.2 s: half of it ran while the
// run was starting, ungated and uncharged, on a clock latched before it).
func TestROS1PlannerFirstPlanCharged(t *testing.T) {
	needRT(t)
	rosenv.New(t, "http://127.0.0.1:1/")
	planner, err := filepath.Abs("controllers/rospy/planner.py")
	if err != nil {
		t.Fatal(err)
	}
	path := pendulumScenario(t, "plan", "1s", "ros:\n  master: "+freeMasterURI(t)+"\n", fmt.Sprintf(`      - name: planner
        cmd: [%q, %q, "_cpu_ms:=200"]
        api: ros
        class: best-effort
`, rosenv.Python, planner))
	r := runTCS(t, 2*time.Minute, path)
	if r.code != 0 {
		t.Fatalf("exit %d, ended %q", r.code, r.sum.Ended)
	}
	b, err := os.ReadFile(filepath.Join(r.outDir, "logs", "planner.log"))
	if err != nil {
		t.Fatal(err)
	}
	var start, stamp, cpu int64 = -1, -1, -1
	for _, line := range strings.Split(string(b), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "start stamp_ns %d", &start); err == nil {
			continue
		}
		if _, err := fmt.Sscanf(line, "plan %d stamp_ns %d cpu_ns %d", &n, &stamp, &cpu); err == nil && n == 0 {
			break
		}
	}
	if start < 0 || stamp < 0 {
		t.Fatalf("no start and first plan in the planner's log:\n%s", b)
	}
	seen := stamp - start
	t.Logf("first plan: %d ms of CPU, ROS time moved %d ms (start %d ns); cpu_before_s %.3f", cpu/1e6, seen/1e6, start, client(t, r.sum, "planner").CPUBeforeS)
	// Alone on its robot, its progress is its CPU; the clock it reads lags
	// by up to a slice on tcs's side, plus rospy's GIL switch interval
	// (5 ms) for its clock thread to take what tcs delivered while the
	// main thread computes. Python's own work around the computation adds
	// a little.
	if q := int64(r.sum.QuantumS * 1e9); seen < cpu-q-5_000_000 || seen > cpu+50*q {
		t.Errorf("the first plan's %d ms of CPU moved ROS time %d ms", cpu/1e6, seen/1e6)
	}
}

// Sixteen unmodified ROS 1 nodes (goroslib, roscpp and rospy controllers
// at 100 Hz, four to a robot): the run completes and every period of every
// node is accounted for. (Four nodes share each robot's one virtual CPU;
// their deadline misses are theirs to see, not the test's to bound.)
func TestROS1SixteenNodes(t *testing.T) {
	needRT(t)
	cmds := [][]string{rosController(t, "go"), rosController(t, "roscpp"), rosController(t, "rospy")}
	var b strings.Builder
	fmt.Fprintf(&b, "name: sixteen\nduration: 3s\nquantum: 1ms\nros: {master: %q}\ndynamics: {model: pendulum, step: 1ms}\nrobots:\n", freeMasterURI(t))
	for r, i := 0, 0; r < 4; r++ {
		fmt.Fprintf(&b, "  - name: r%d\n    clients:\n", r)
		for k := 0; k < 4; k, i = k+1, i+1 {
			var q []string
			for _, a := range append(cmds[i%3], "_rate:=100") {
				q = append(q, fmt.Sprintf("%q", a))
			}
			fmt.Fprintf(&b, "      - {name: n%d, cmd: [%s], api: ros, class: periodic, period: 10ms, priority: %d}\n", i, strings.Join(q, ", "), 40-k)
		}
	}
	scen := filepath.Join(t.TempDir(), "sixteen.yaml")
	if err := os.WriteFile(scen, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runCompleted(t, 5*time.Minute, scen)
	if len(s.Clients) != 16 {
		t.Fatalf("%d clients in the summary", len(s.Clients))
	}
	var misses int64
	for _, c := range s.Clients {
		l := c.PeriodsLost
		if l == nil || c.Periods != 301 || c.Activations-c.ActivationsExtra+l.Total != c.Periods || l.AfterExit != 0 || l.BeforeStart != 1 {
			t.Errorf("%s: %d activations of %d periods, lost %+v: want every period activated but activation 0", c.Name, c.Activations, c.Periods, l)
		}
		misses += c.DeadlineMisses
	}
	t.Logf("16 ROS 1 nodes: wall %.1f s, %d deadline misses in all, coordinator %.0f µs per activation, Δ p99 %.3g s",
		s.WallS, misses, s.CoordinatorPerActivationUS, s.DriftP99S)
}
