package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/report"
)

// cannedSummary is a run's summary.json with round figures: n clients of
// act activations each, coordinator and other CPU in seconds (other: tcs's
// other threads').
func cannedSummary(n int, act int64, coord, other float64, dispatches int64) *report.Summary {
	s := &report.Summary{Ended: report.EndCompleted, QuantumS: 0.001, VirtualS: 2, WallS: 4, RTF: 0.5,
		DriftMaxS: 0.0012, DriftP99S: 0.0009, Dispatches: dispatches,
		Overhead: report.Overhead{CoordinatorS: coord + other, SimS: coord, ThreadsS: other, ClientsS: 0.5, DynamicsS: 0.5}}
	s.Overhead.SetFraction()
	for i := range n {
		s.Clients = append(s.Clients, report.ClientSummary{Activations: act + int64(i), DeadlineMisses: int64(i % 2),
			DeadlineMissesHost: int64(i % 2 * (i % 3)), ActivationsBegunLate: int64(i / 3), Deliveries: 10 * act})
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// A case's figures come from its summary: costs per activation and per
// dispatch, with and without the CPU off the simulation CPU, the ideal
// rtf, the misses.
func TestCaseOf(t *testing.T) {
	s := cannedSummary(4, 100, 0.0406, 0.0406, 800) // activations 100+101+102+103 = 406
	c := caseOf(ActivationCase{Kind: KindRospy, Clients: 4}, s)
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"activations", float64(c.Activations), 406},
		{"activations_min", float64(c.ActivationsMin), 100},
		{"deliveries", float64(c.Deliveries), 4000},
		{"µs per activation", c.USPerActivation, 100},
		{"all µs per activation", c.AllUSPerActivation, 200},
		{"µs per dispatch", c.USPerDispatch, 50.75},
		{"all µs per dispatch", c.AllUSPerDispatch, 101.5},
		{"overhead", c.OverheadFraction, 0.0406 / 1.0406},
		{"overhead, all", c.OverheadFractionAll, 0.0812 / 1.0812},
		{"ideal rtf", c.IdealRTF, 2},
		{"rtf", c.RTF, 0.5},
		{"misses", float64(c.DeadlineMisses), 2},
		{"misses, the host's", float64(c.DeadlineMissesHost), 1},
		{"activations begun late", float64(c.ActivationsBegunLate), 1},
	} {
		if !near(f.got, f.want) {
			t.Errorf("%s = %g, want %g", f.name, f.got, f.want)
		}
	}
	if c.Status != CaseOK || c.Ended != report.EndCompleted {
		t.Errorf("status %q, ended %q", c.Status, c.Ended)
	}
	// Nothing to divide by: 0, not NaN or Inf (JSON cannot hold them).
	z := caseOf(ActivationCase{}, &report.Summary{})
	if z.USPerActivation != 0 || z.USPerDispatch != 0 || z.IdealRTF != 0 || z.OverheadFractionAll != 0 || z.ActivationsMin != 0 {
		t.Errorf("empty summary: %+v", z)
	}
}

// cannedResult has native C and rospy at 4 clients, rospy alone at 16
// (C failed there) and rclpy skipped.
func cannedResult() *ActivationResult {
	res := &ActivationResult{ResultHead: ResultHead{Bench: "activation", Date: "2026-11-26", Commit: "0123456789abcdef", Host: "2 online CPUs"}, Mode: "consistent",
		PeriodS: 0.01, QuantumS: 0.001, StepS: 0.001, DurationS: 3, Clients: []int{4, 16},
		Kinds: []string{KindC, KindRospy, KindRclpy}, WallS: 12.5}
	res.Cases = []ActivationCase{
		caseOf(ActivationCase{Kind: KindC, Clients: 4}, cannedSummary(4, 100, 0.0203, 0, 406)),
		caseOf(ActivationCase{Kind: KindRospy, Clients: 4}, cannedSummary(4, 100, 0.0406, 0.0406, 812)),
		{Kind: KindRclpy, Clients: 4, Status: CaseSkipped, Reason: "this tcs was built without the ROS 2 transport"},
		{Kind: KindC, Clients: 16, Status: CaseFailed, Reason: "the run ended \"wall limit\"; logs in /tmp/x/c-16"},
		caseOf(ActivationCase{Kind: KindRospy, Clients: 16}, cannedSummary(16, 100, 0.5, 0, 3000)),
		{Kind: KindRclpy, Clients: 16, Status: CaseSkipped, Reason: "this tcs was built without the ROS 2 transport"},
	}
	setRatios(res.Cases)
	return res
}

// Ratios are to native C at the same client count, and only where it ran.
func TestSetRatios(t *testing.T) {
	res := cannedResult()
	c, py, py16 := res.Cases[0], res.Cases[1], res.Cases[4]
	if c.RatioCPerActivation != 1 || c.RatioCPerDispatch != 1 {
		t.Errorf("C to itself: %g, %g", c.RatioCPerActivation, c.RatioCPerDispatch)
	}
	if c.RatioCAllPerActivation != 1 { // other CPU 0: all = sim
		t.Errorf("C to itself, all CPU: %g", c.RatioCAllPerActivation)
	}
	if !near(py.RatioCPerActivation, 2) || !near(py.RatioCAllPerActivation, 4) ||
		!near(py.RatioCPerDispatch, 1) || !near(py.RatioCAllPerDispatch, 2) {
		t.Errorf("rospy to C: per activation %g (all %g), per dispatch %g (all %g); want 2, 4, 1, 2",
			py.RatioCPerActivation, py.RatioCAllPerActivation, py.RatioCPerDispatch, py.RatioCAllPerDispatch)
	}
	if py16.RatioCPerActivation != 0 || py16.RatioCAllPerDispatch != 0 {
		t.Errorf("rospy at 16 has no C to compare with: ratios %+v", py16)
	}
}

// The table has a row per case, skipped and failed ones saying why, and
// "-" for a ratio without C.
func TestWriteActivationTable(t *testing.T) {
	var out bytes.Buffer
	writeActivationTable(&out, cannedResult())
	s := out.String()
	t.Log("\n" + s)
	lines := strings.Split(strings.TrimSpace(s), "\n")
	row := func(kind, clients string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 2 && f[0] == kind && f[1] == clients {
				return l
			}
		}
		t.Fatalf("no row for %s × %s", kind, clients)
		return ""
	}
	if f := strings.Fields(row("c", "4")); len(f) != 19 || f[2] != "406" || f[3] != "406" || f[4] != "50.0" || f[5] != "1.00" {
		t.Errorf("C row: %q", f)
	}
	// rospy at 4: 100 µs per activation (2× C), 200 with the other CPU
	// (4×), 50 and 100 per dispatch; ideal rtf 2; 2 misses, 1 the host's;
	// 1 activation begun late by tcs.
	want := []string{"rospy", "4", "406", "812", "100.0", "2.00", "200.0", "4.00", "50.0", "1.00", "100.0", "2.00",
		"3.9%", "7.5%", "0.50", "2.0", "2", "(1)", "[1]"}
	if f := strings.Fields(row("rospy", "4")); strings.Join(f, " ") != strings.Join(want, " ") {
		t.Errorf("rospy row:\n got %q\nwant %q", f, want)
	}
	if f := strings.Fields(row("rospy", "16")); f[5] != "-" || f[7] != "-" || f[9] != "-" || f[11] != "-" {
		t.Errorf("rospy at 16 without C: ratios %q, want -", f)
	}
	if r := row("rclpy", "4"); !strings.Contains(r, "skipped: this tcs was built without the ROS 2 transport") {
		t.Errorf("skipped row: %q", r)
	}
	if r := row("c", "16"); !strings.Contains(r, "failed: ") || !strings.Contains(r, "/tmp/x/c-16") {
		t.Errorf("failed row: %q", r)
	}
	for _, w := range []string{"µs per activation", "µs per dispatch", "100 Hz", "q 1ms", "3s virtual", "wall time: 12.5 s"} {
		if !strings.Contains(s, w) {
			t.Errorf("no %q in the table", w)
		}
	}
}

// The JSON file is named after the date and the short commit and holds
// every case under summary.json-like names.
func TestActivationJSON(t *testing.T) {
	res := cannedResult()
	if got := res.file(); got != "activation-2026-11-26-0123456.json" {
		t.Errorf("file name %q", got)
	}
	if got := (&ActivationResult{ResultHead: ResultHead{Bench: "activation", Date: "2026-11-26"}}).file(); got != "activation-2026-11-26-unknown.json" {
		t.Errorf("file name without a commit: %q", got)
	}
	dir := filepath.Join(t.TempDir(), "results", "bench")
	path, err := res.write(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "activation-2026-11-26-0123456.json") {
		t.Errorf("written to %s", path)
	}
	// A second bench of the same day and commit keeps the first's file.
	if again, err := res.write(dir, res); err != nil || again != filepath.Join(dir, "activation-2026-11-26-0123456-2.json") {
		t.Errorf("second result written to %s (%v), want the name with -2", again, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"bench": "activation"`, `"coordinator_us_per_activation": 100`,
		`"coordinator_all_us_per_activation": 200`, `"ratio_c_all_per_activation": 4`, `"threads_s": 0.0406`,
		`"ideal_rtf": 2`, `"status": "skipped"`, `"period_s": 0.01`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("no %s in the JSON", key)
		}
	}
	var back ActivationResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Cases) != len(res.Cases) || back.Cases[1] != res.Cases[1] || back.Cases[2] != res.Cases[2] {
		t.Errorf("round trip: %+v", back.Cases)
	}
}

// The scenario of each kind is valid: n robots, one periodic client each,
// the pendulum, the ROS section its transport needs.
func TestActivationScenario(t *testing.T) {
	o := ActivationOpts{}.withDefaults()
	if o.Duration != 3*time.Second || o.NativeDuration != 30*time.Second {
		t.Errorf("default durations %v (ROS kinds), %v (native): want 3 s and 30 s", o.Duration, o.NativeDuration)
	}
	for _, k := range []*activationKind{
		{name: KindC, argv: func(time.Duration) []string { return []string{"/tmp/build/pd"} }},
		{name: KindGoroslib, ros: rosOne, argv: func(p time.Duration) []string { return []string{"tcs", "node", "pd", "_rate:=100"} }},
		{name: KindRclpy, ros: rosTwo, argv: func(time.Duration) []string {
			return []string{"/usr/bin/python3", "/src/rclpy_pd.py", "--ros-args", "-p", "rate:=100.0"}
		}},
	} {
		for _, n := range []int{1, 16} {
			r := activationScenario(k, n, o, "http://127.0.0.1:20000/")
			sc, err := config.Parse([]byte(r.yaml), k.name+".yaml")
			if err != nil {
				t.Fatalf("%s × %d: %v\n%s", k.name, n, err, r.yaml)
			}
			if len(sc.Robots) != n || sc.ClientCount() != n || sc.Dynamics.Model != "pendulum" ||
				sc.Duration != config.Duration(o.durationOf(k)) || sc.Quantum != config.Duration(o.Quantum) {
				t.Errorf("%s × %d: %d robots, %d clients, %s, %v, q %v", k.name, n, len(sc.Robots), sc.ClientCount(),
					sc.Dynamics.Model, sc.Duration, sc.Quantum)
			}
			last := sc.Robots[n-1].Clients[0]
			if last.Class != config.ClassPeriodic || last.Period != config.Duration(o.Period) || last.Cmd[0] != k.argv(0)[0] {
				t.Errorf("%s × %d: last client %+v", k.name, n, last)
			}
			if got := sc.HasROS(); got != (k.ros != rosNone) {
				t.Errorf("%s: has ROS %v", k.name, got)
			}
			if want := config.SamplesAtActivation; k.ros != rosNone && last.Samples != want {
				t.Errorf("%s: samples %v, want %v (the default)", k.name, last.Samples, want)
			}
			if k.ros == rosTwo && sc.ROS.Transport != config.TransportROS2 {
				t.Errorf("%s: transport %v", k.name, sc.ROS.Transport)
			}
			if r.bound <= time.Duration(sc.EffectiveWallLimit()) {
				t.Errorf("%s × %d: bound %v within the wall limit %v", k.name, n, r.bound, sc.EffectiveWallLimit())
			}
		}
	}
}

func TestFloatParam(t *testing.T) {
	for in, want := range map[float64]string{100: "100.0", 33.5: "33.5", 1: "1.0", 0.5: "0.5"} {
		if got := floatParam(in); got != want {
			t.Errorf("floatParam(%g) = %q, want %q", in, got, want)
		}
	}
}

// A failed run's reason is its last error with the lines that go on with
// it (a start-up time-out lists the clients at fault below its first line).
func TestRunErrorKeepsItsList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.log")
	log := "tcs: a warning\ntcs run: an earlier error\n" +
		"tcs run: s.yaml: the ROS clients did not start within ros.startup_timeout (3m12s):\n" +
		"  client \"pd10\": not subscribed to its clock /tcs/pd10/clock (log pd10.log)\n" +
		"  together the ROS clients used 84 % of the simulation CPU over the last second\n" +
		"tcs: after\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "tcs run: s.yaml: the ROS clients did not start within ros.startup_timeout (3m12s); " +
		"client \"pd10\": not subscribed to its clock /tcs/pd10/clock (log pd10.log); " +
		"together the ROS clients used 84 % of the simulation CPU over the last second"
	if got := runError(path); got != want {
		t.Fatalf("runError = %q\nwant      %q", got, want)
	}
}

// The mixed ROS 1 stack's scenario is valid: one robot, the two 200 Hz
// controllers above the best-effort planner, ROS 1.
func TestActivationStackScenario(t *testing.T) {
	o := ActivationOpts{}.withDefaults()
	k := &activationKind{name: KindROS1Stack, ros: rosOne,
		robots: stackRobots([]string{"/build/pd", "_rate:=200"}, "/src/planner.py")}
	r := activationScenario(k, len(stackClients), o, "http://127.0.0.1:20000/")
	sc, err := config.Parse([]byte(r.yaml), "stack.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, r.yaml)
	}
	if len(sc.Robots) != 1 || sc.ClientCount() != len(stackClients) || !sc.HasROS() {
		t.Fatalf("%d robots, %d clients, ROS %v:\n%s", len(sc.Robots), sc.ClientCount(), sc.HasROS(), r.yaml)
	}
	for i, c := range sc.Robots[0].Clients {
		if c.Name != stackClients[i] {
			t.Errorf("client %d is %q, want %q", i, c.Name, stackClients[i])
		}
	}
	pd, timer, planner := sc.Robots[0].Clients[0], sc.Robots[0].Clients[1], sc.Robots[0].Clients[2]
	for _, c := range []config.Client{pd, timer} {
		if c.Class != config.ClassPeriodic || c.Period != config.Duration(stackPeriod) || c.Samples != config.SamplesAtActivation {
			t.Errorf("%s: %v, period %v, samples %v", c.Name, c.Class, c.Period, c.Samples)
		}
	}
	if pd.Priority <= timer.Priority || timer.Priority <= planner.Priority || planner.Class != config.ClassBestEffort {
		t.Errorf("priorities pd %d, timer %d, planner %d (%v): want the planner best-effort below both", pd.Priority, timer.Priority, planner.Priority, planner.Class)
	}
	if got := strings.Join(timer.Cmd, " "); got != "/build/pd _rate:=200 _timer:=true command:=/arm/timer_command" {
		t.Errorf("timer's command line %q", got)
	}
}
