package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// sample is a finished two-robot run.
func sample() *Summary {
	s := &Summary{
		Scenario:                   "two-robots",
		Mode:                       "consistent",
		Ended:                      EndCompleted,
		QuantumS:                   0.001,
		VirtualS:                   10,
		WallS:                      11.494,
		RTF:                        10 / 11.494,
		DriftMaxS:                  0.00102,
		DriftP99S:                  0.000981,
		DriftFinalS:                0.000412,
		LeakS:                      0,
		Dispatches:                 123456,
		DynamicsSteps:              10000,
		Overhead:                   Overhead{CoordinatorS: 0.166, SimS: 0.123, ThreadsS: 0.043, ClientsS: 9.8, DynamicsS: 0.05},
		LateTakebackP50S:           3.1e-6,
		LateTakebackP99S:           12.5e-6,
		LateTakebackMaxS:           0.0021,
		CoordinatorPerActivationUS: 4.2,
		Robots: []RobotSummary{
			{Name: "alpha", Clients: []string{"alpha_pd", "alpha_planner"}},
			{Name: "beta", Clients: []string{"beta_pd"}},
		},
		Clients: []ClientSummary{
			{Name: "alpha_pd", Robot: "alpha", Class: "periodic", PeriodS: 0.001, CPUS: 2.345, ProgressS: 10.0004,
				Activations: 10000, DeadlineMisses: 0, PeriodError: 0.00001, PeriodJitterP99: 0.0012,
				ActivationLateMaxS: 12e-6, ExitCode: ExitCode(0), Log: "out/logs/alpha_pd.log"},
			{Name: "alpha_planner", Robot: "alpha", Class: "best-effort", CPUS: 7.45, ProgressS: 10.0001,
				ExitCode: nil, Log: "out/logs/alpha_planner.log"},
			{Name: "beta_pd", Robot: "beta", Class: "periodic", PeriodS: 0.002, CPUS: 0.5, ProgressS: 10,
				Activations: 4990, DeadlineMisses: 3, PeriodError: 0.02, PeriodJitterP99: 0.5, Periods: 5000,
				PeriodsLost: &PeriodsLost{BeforeStart: 1, AfterExit: 7, Overrun: 2, Total: 10}, ExitedAtS: &exitedAt,
				ActivationLateMaxS: 0.0015, ExitCode: ExitCode(3), Log: "out/logs/beta_pd.log"},
		},
	}
	s.Overhead.SetFraction()
	return s
}

var exitedAt = 9.986

// The field names DESIGN §6 promises scripts and benchmarks.
var designFields = []string{"mode", "quantum_s", "virtual_s", "wall_s", "rtf", "drift_max_s", "drift_p99_s",
	"leak_s", "dispatches", "overhead", "clients"}
var designOverhead = []string{"coordinator_s", "clients_s", "dynamics_s", "fraction", "sim_fraction", "sim_s", "threads_s"}
var designClient = []string{"name", "class", "period_s", "cpu_s", "progress_s", "activations", "deadline_misses",
	"period_error", "period_jitter_p99", "activation_late_max_s", "exit_code"}

func TestSummaryJSONFields(t *testing.T) {
	b, err := sample().JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(designFields, "scenario", "robots", "ended", "late_takeback_p50_s", "late_takeback_p99_s",
		"late_takeback_max_s", "coordinator_per_activation_us", "drift_final_s", "wall_cost_polling_s", "dynamics_steps") {
		if _, ok := m[f]; !ok {
			t.Errorf("summary.json lacks %q", f)
		}
	}
	o := m["overhead"].(map[string]any)
	for _, f := range designOverhead {
		if _, ok := o[f]; !ok {
			t.Errorf("overhead lacks %q", f)
		}
	}
	cs := m["clients"].([]any)
	for _, c := range cs {
		for _, f := range append(designClient, "log") {
			if _, ok := c.(map[string]any)[f]; !ok {
				t.Errorf("client lacks %q", f)
			}
		}
	}
	if cs[1].(map[string]any)["exit_code"] != nil {
		t.Errorf("exit_code of a running client is %v, want null", cs[1].(map[string]any)["exit_code"])
	}
	if cs[2].(map[string]any)["exit_code"] != 3.0 {
		t.Errorf("exit_code = %v, want 3", cs[2].(map[string]any)["exit_code"])
	}
	if got := o["fraction"].(float64); math.Abs(got-0.166/10.016) > 1e-12 {
		t.Errorf("fraction %v, want all of tcs's CPU's share", got)
	}
	if got := o["sim_fraction"].(float64); math.Abs(got-0.123/9.973) > 1e-12 {
		t.Errorf("sim_fraction %v", got)
	}
	// Round trip.
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, sample()) {
		t.Errorf("round trip differs:\n%+v\n%+v", back, *sample())
	}
}

func TestSummaryNonFinite(t *testing.T) {
	s := sample()
	s.RTF = math.Inf(1)
	s.DriftP99S = math.NaN()
	s.Clients[0].PeriodError = math.NaN()
	b, err := s.JSON()
	if err != nil {
		t.Fatalf("JSON with NaN/Inf: %v", err)
	}
	if !bytes.Contains(b, []byte(`"rtf": 0,`)) || !bytes.Contains(b, []byte(`"period_error": 0,`)) {
		t.Errorf("non-finite values not written as 0:\n%s", b)
	}
	if !math.IsInf(s.RTF, 1) || !math.IsNaN(s.Clients[0].PeriodError) {
		t.Error("JSON changed the summary")
	}
}

func TestEnded(t *testing.T) {
	if got := EndClientExited("pd", 3); got != "client pd exited with code 3" {
		t.Error(got)
	}
	if got := EndClientSignaled("pd", 9); got != "client pd was killed by signal 9" {
		t.Error(got)
	}
}

func TestOverheadFraction(t *testing.T) {
	var o Overhead
	o.SetFraction()
	if o.Fraction != 0 {
		t.Error("fraction of nothing")
	}
	o = Overhead{CoordinatorS: 1, SimS: 1, ClientsS: 2, DynamicsS: 1}
	o.SetFraction()
	if o.Fraction != 0.25 || o.SimFraction != 0.25 {
		t.Errorf("fraction %v, sim %v", o.Fraction, o.SimFraction)
	}
	// All of tcs's CPU (its other threads' too) is in CoordinatorS and
	// Fraction (DESIGN §6's formula); SimFraction is the simulation CPU's
	// share.
	o = Overhead{CoordinatorS: 2, SimS: 1, ThreadsS: 1, ClientsS: 2, DynamicsS: 1}
	o.SetFraction()
	if o.Fraction != 0.4 || o.SimFraction != 0.25 {
		t.Errorf("fraction %v, sim %v; want 0.4, 0.25", o.Fraction, o.SimFraction)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./report -update rewrites it):\n--- got\n%s\n--- want\n%s", p, got, want)
	}
}

func TestTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, sample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.golden", b.Bytes())
}

func TestTableRunning(t *testing.T) {
	s := &Summary{Mode: "lockstep", QuantumS: 0.001, VirtualS: 20, WallS: 0, RTF: math.Inf(1), DriftMaxS: 168,
		Clients: []ClientSummary{{Name: "pd", PeriodS: 0.001}}}
	var b bytes.Buffer
	if err := Table(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "table-running.golden", b.Bytes())
}

func TestSpan(t *testing.T) {
	tests := map[float64]string{
		0: "0 s", 1.02e-3: "1.02 ms", 12e-6: "12.0 µs", 168: "168 s", 3.5: "3.50 s", 250e-9: "250 ns",
		0.5: "500 ms", 1e-9: "1.00 ns", -2e-3: "-2.00 ms", math.NaN(): "-", 0.00099999: "1000 µs",
	}
	for in, want := range tests {
		if got := Span(in); got != want {
			t.Errorf("Span(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestStatusLine(t *testing.T) {
	tests := []struct {
		st   Status
		want string
	}{
		{Status{Virtual: 3_412_000_000, Goal: 10e9, RTF: 0.87, Drift: 1_020_000, DriftP99: 980_000, Misses: 0, Dispatches: 12345},
			"t=3.412/10.000 s  rtf 0.87  Δ 1.02 ms (p99 0.98)  misses 0  dispatches 12345"},
		{Status{Virtual: 20e9, Goal: 20e9, RTF: 1234.5, Drift: 168e9, DriftP99: 150e9, Misses: 7, Dispatches: 1},
			"t=20.000/20.000 s  rtf 1234.50  Δ 168 s (p99 150)  misses 7  dispatches 1"},
		{Status{Goal: 1e9, RTF: math.NaN()},
			"t=0.000/1.000 s  rtf -  Δ 0.00 ns (p99 0.00)  misses 0  dispatches 0"},
		{Status{Goal: 1e9, RTF: 1, DriftP99: 5000},
			"t=0.000/1.000 s  rtf 1.00  Δ 0.00 µs (p99 5.00)  misses 0  dispatches 0"},
	}
	for _, tt := range tests {
		got := StatusLine(tt.st)
		if strings.TrimRight(got, " ") != tt.want {
			t.Errorf("got  %q\nwant %q", strings.TrimRight(got, " "), tt.want)
		}
		if n := len([]rune(got)); n < StatusWidth || strings.ContainsAny(got, "\r\n") {
			t.Errorf("line is %d runes (want ≥ %d) or holds a line break: %q", n, StatusWidth, got)
		}
	}
}
