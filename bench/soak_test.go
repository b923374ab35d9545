package bench

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcs-robotics/tcs/config"
	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

func within(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestFitLine(t *testing.T) {
	// y = 3 + 2x exactly: slope 2, no noise.
	f := fitLine([]float64{0, 1, 2, 3}, []float64{3, 5, 7, 9})
	if f.N != 4 || !within(f.Slope, 2, 1e-12) || !within(f.Intercept, 3, 1e-12) || !within(f.Sigma, 0, 1e-12) ||
		!within(f.SlopeSE, 0, 1e-12) || f.SpanH != 3 || !within(f.Change, 6, 1e-12) {
		t.Errorf("exact line: %+v", f)
	}
	// Residuals +1, −1, −1, +1 about y = 1: slope 0, σ = sqrt(4/2).
	f = fitLine([]float64{0, 1, 2, 3}, []float64{2, 0, 0, 2})
	if !within(f.Slope, 0, 1e-12) || !within(f.Intercept, 1, 1e-12) || !within(f.Sigma, math.Sqrt2, 1e-12) ||
		!within(f.SlopeSE, math.Sqrt2/math.Sqrt(5), 1e-12) {
		t.Errorf("symmetric noise: %+v", f)
	}
	// Two points: a slope, no noise estimate.
	f = fitLine([]float64{0, 1}, []float64{1, 2})
	if !within(f.Slope, 1, 1e-12) || !math.IsNaN(f.Sigma) || !math.IsNaN(f.SlopeSE) {
		t.Errorf("two points: %+v", f)
	}
	for _, f := range []Fit{fitLine(nil, nil), fitLine([]float64{1}, []float64{5}), fitLine([]float64{1, 1, 1}, []float64{1, 2, 3})} {
		if !math.IsNaN(f.Slope) || !math.IsNaN(f.Sigma) {
			t.Errorf("no slope to fit: %+v", f)
		}
	}
}

func TestJudge(t *testing.T) {
	series := func(res float64, vals ...float64) SoakSeries {
		s := SoakSeries{Name: "x", Resolution: res, HoursPerSample: 1.0 / 60}
		for i, v := range vals {
			s.Minutes = append(s.Minutes, i+1)
			s.Values = append(s.Values, v)
		}
		return s
	}
	// A deterministic zig-zag noise of ±1 about 100.
	noise := func(n int, trend float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 100 + trend*float64(i) + float64(1-2*(i%2))
		}
		return v
	}
	for _, tc := range []struct {
		name    string
		s       SoakSeries
		fitFrom int
		want    string
	}{
		{"constant", series(1, 40, 40, 40, 40, 40, 40), 1, VerdictFlat},
		{"noise only", series(0, noise(60, 0)...), 1, VerdictFlat},
		{"trend within the noise", series(0, noise(60, 0.01)...), 1, VerdictFlat},
		{"trend beyond the noise", series(0, noise(60, 0.2)...), 1, VerdictRising},
		{"falling", series(0, noise(60, -0.2)...), 1, VerdictFalling},
		{"a count that blips by one", series(1, 14, 14, 15, 14, 14, 14, 14, 14), 1, VerdictFlat},
		{"a count that grows by one a sample", series(1, 10, 11, 12, 13, 14, 15), 1, VerdictRising},
		{"growth only in the warm-up", series(1, 10, 20, 30, 40, 40, 40, 40, 40), 4, VerdictFlat},
		{"too short", series(1, 1, 2), 1, VerdictTooShort},
		{"too short past the warm-up", series(1, 1, 2, 3, 4), 3, VerdictTooShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judge(tc.s, tc.fitFrom)
			if got.Verdict != tc.want {
				t.Errorf("verdict %q, want %q (fit %+v, noise %g)", got.Verdict, tc.want, got.Fit, got.Noise)
			}
		})
	}
	// Per hour: one more per minute is 60 per hour.
	s := judge(series(0, 1, 2, 3, 4, 5), 1)
	if !within(s.Fit.Slope, 60, 1e-9) || !within(s.Fit.Change, 4, 1e-9) {
		t.Errorf("slope %g per hour, change %g: want 60 and 4", s.Fit.Slope, s.Fit.Change)
	}
}

func TestParseGoroutines(t *testing.T) {
	n, err := parseGoroutines(strings.NewReader("goroutine profile: total 42\n7 @ 0x1 0x2\n"))
	if err != nil || n != 42 {
		t.Errorf("got %d, %v; want 42", n, err)
	}
	for _, bad := range []string{"", "heap profile: 1: 2 [3: 4] @ heap/1048576\n", "goroutine profile: total x\n", "goroutine profile: total -1\n"} {
		if _, err := parseGoroutines(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseMemStats(t *testing.T) {
	text := "heap profile: 3: 1024 [9: 4096] @ heap/524288\n1: 512 [3: 1536] @ 0x1 0x2\n#\t0x1\tmain.f+0x1\tx.go:1\n\n" +
		"# runtime.MemStats\n# Alloc = 11\n# HeapAlloc = 9437184\n# HeapSys = 20000000\n# NextGC = 41943040\n" +
		"# LastGC = 1795685116499274544\n# PauseNs = [1 2 3]\n# NumGC = 7\n# GCCPUFraction = 0.001\n"
	m, err := parseMemStats(strings.NewReader(text))
	if err != nil || m != (memStats{heapAlloc: 9437184, nextGC: 41943040, numGC: 7}) {
		t.Errorf("got %+v, %v", m, err)
	}
	for _, bad := range []string{"", "# HeapAlloc = 1\n# NumGC = 2\n", "# HeapAlloc = x\n# NextGC = 1\n# NumGC = 2\n"} {
		if _, err := parseMemStats(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// statuses makes /tcs/run_status records every 10 ms of virtual and wall
// time for the given wall span, Δ i µs at the i-th record of each minute,
// one deadline miss per second.
func statuses(span time.Duration) []record.RunStatus {
	var out []record.RunStatus
	for t := int64(10_000_000); t <= span.Nanoseconds(); t += 10_000_000 {
		i := (t % 60e9) / 10_000_000 // 0..5999 within its minute
		out = append(out, record.RunStatus{WorldNs: t, WallNs: t, DriftNs: i * 1000, DriftMaxNs: i*1000 + 500,
			Dispatches: t / 1_000_000, DeadlineMisses: t / 1e9})
	}
	return out
}

func TestSoakBinner(t *testing.T) {
	b := newSoakBinner(int64(time.Minute))
	for k, st := range statuses(150 * time.Second) {
		b.status(st)
		if k%10 == 0 { // an activation 0.1 s of virtual time, begun 20 µs late
			b.progress(record.ClientProgress{Event: record.EventActivation, DueNs: st.WorldNs, BeginNs: st.WorldNs + 20_000})
		}
		b.progress(record.ClientProgress{Event: record.EventStatus})
	}
	ms := b.result()
	if len(ms) != 3 {
		t.Fatalf("%d minutes, want 3 (the last cut)", len(ms))
	}
	m := ms[1] // records at wall 60.00 .. 119.99 s
	if m.Minute != 2 || m.Statuses != 6000 {
		t.Errorf("minute 2: %+v", m)
	}
	// Δ 0..5999 µs: p99 ≈ 5940 µs within the quantiles' 0.4 %.
	if p := float64(m.DriftP99Ns) / 1e3; !within(p, 5940, 5940*report.QuantileRelError+1) {
		t.Errorf("minute 2: Δ p99 %g µs, want about 5940", p)
	}
	if m.DriftMaxNs != 5999*1000+500 {
		t.Errorf("minute 2: Δ max %d", m.DriftMaxNs)
	}
	if m.Activations != 600 || !within(float64(m.LateP99Ns), 20_000, 20_000*report.QuantileRelError) {
		t.Errorf("minute 2: %d activations, late p99 %d ns; want 600, 20 µs", m.Activations, m.LateP99Ns)
	}
	if m.Misses != 60 || m.Dispatches != 60_000 || m.VirtualNs != 60e9 || m.WallNs != 60e9 || m.RTF() != 1 {
		t.Errorf("minute 2: %d misses, %d dispatches, virtual %d, wall %d, rtf %g", m.Misses, m.Dispatches, m.VirtualNs, m.WallNs, m.RTF())
	}
	if ms[0].Statuses != 5999 || ms[0].VirtualNs != 59_990_000_000 || ms[2].Statuses != 3001 {
		t.Errorf("minutes 1 and 3: %d and %d records, minute 1 virtual %d", ms[0].Statuses, ms[2].Statuses, ms[0].VirtualNs)
	}
}

// TestReadSoakRecording writes a recording as the driver does (status and
// progress channels) and reads it back by minute.
func TestReadSoakRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.mcap")
	rec, err := record.Create(record.Conf{Path: path, Slots: 1 << 15})
	if err != nil {
		t.Fatal(err)
	}
	prog, err := rec.AddChannel(record.Progress.Channel(record.TopicProgress))
	if err != nil {
		t.Fatal(err)
	}
	stat, err := rec.AddChannel(record.Status.Channel(record.TopicRunStatus))
	if err != nil {
		t.Fatal(err)
	}
	for k, st := range statuses(125 * time.Second) {
		if k%100 == 0 {
			p := record.ClientProgress{Event: record.EventActivation, Client: "pd", DueNs: st.WorldNs, BeginNs: st.WorldNs + 5000}
			if w := rec.Begin(prog, st.WorldNs, st.WorldNs); w != nil {
				p.Encode(w)
				rec.Commit()
			}
		}
		if w := rec.Begin(stat, st.WorldNs, st.WorldNs); w != nil {
			st.Encode(w)
			rec.Commit()
		}
	}
	if err := rec.Close(nil, nil); err != nil {
		t.Fatal(err)
	}
	if d := rec.Dropped(); d != 0 {
		t.Fatalf("the test's recording dropped %d records", d)
	}
	ms, err := readSoakRecording(path, int64(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[1].Statuses != 6000 || ms[1].Activations != 60 || ms[1].Misses != 60 || ms[2].Statuses != 501 {
		t.Fatalf("minutes: %+v", ms)
	}
	if _, err := readSoakRecording(filepath.Join(t.TempDir(), "none.mcap"), int64(time.Minute)); err == nil {
		t.Error("a missing recording: no error")
	}
}

func TestWriteSoakCSV(t *testing.T) {
	samples := []SoakSample{
		{Minute: 1, T: 60.01, InRun: true, RSSKB: 50000, RSSAnonKB: 30000, Fds: 120, Goroutines: 80, Threads: 14, HeapAllocKB: 9000, NextGCKB: 40000, NumGC: 3,
			FdKinds: "pipe=20 socket=100", ClientThreads: 70},
		{Minute: 2, T: 120.02, InRun: false, RSSKB: 50100, RSSAnonKB: 30100, Fds: 120, Goroutines: -1, Threads: 14, HeapAllocKB: -1, NextGCKB: -1, NumGC: -1, ClientThreads: -1},
	}
	minutes := []SoakMinute{{Minute: 1, Statuses: 6000, DriftP99Ns: 45_600, DriftMaxNs: 1_200_000, LateP99Ns: 3000,
		Activations: 96000, VirtualNs: 60e9, WallNs: 60e9, Misses: 0, Dispatches: 250_000, Dropped: 0}}
	var b bytes.Buffer
	if err := writeSoakCSV(&b, samples, minutes); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != strings.Join(soakCSVHeader, ",") {
		t.Fatalf("rows %q", rows)
	}
	want1 := "1,60.0,1,50000,30000,120,80,14,9000,40000,3,45.6,1200.0,3.0,96000,1.0000,0,250000,0,6000,pipe=20 socket=100,70"
	want2 := "2,120.0,0,50100,30100,120,,14,,,,,,,,,,,,,,"
	if got := strings.Join(rows[1], ","); got != want1 {
		t.Errorf("row 1 %s\nwant  %s", got, want1)
	}
	if got := strings.Join(rows[2], ","); got != want2 {
		t.Errorf("row 2 %s\nwant  %s", got, want2)
	}
}

func TestSoakScenarioParses(t *testing.T) {
	o := SoakOpts{Minutes: 60}.withDefaults()
	kinds := map[string]*activationKind{}
	for _, k := range o.Mix {
		a := &activationKind{name: k.Kind}
		switch k.Kind {
		case KindGoroslib, KindRoscpp, KindRospy:
			a.ros = rosOne
		}
		a.argv = func(time.Duration) []string { return []string{"/opt/x/" + k.Kind, "_rate:=100"} }
		kinds[k.Kind] = a
	}
	yaml, bound := soakScenario(o, kinds, "http://127.0.0.1:11311")
	sc, err := config.Parse([]byte(yaml), "soak.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	if sc.ClientCount() != 16 || len(sc.Robots) != 16 || sc.MaxRTF != 1 || sc.Duration.Nanoseconds() != int64(time.Hour) ||
		sc.Mode != config.ModeConsistent || !sc.HasROS() {
		t.Errorf("scenario: %d clients, %d robots, max_rtf %g, duration %v, mode %s\n%s", sc.ClientCount(), len(sc.Robots), sc.MaxRTF, sc.Duration, sc.Mode, yaml)
	}
	var native, ros int
	for _, r := range sc.Robots {
		for _, c := range r.Clients {
			if c.API == config.APIROS {
				ros++
			} else {
				native++
			}
		}
	}
	if native != 8 || ros != 8 {
		t.Errorf("%d native and %d ROS clients, want 8 and 8", native, ros)
	}
	if bound < 2*time.Hour+5*time.Minute || bound > 2*time.Hour+10*time.Minute {
		t.Errorf("bound %v", bound)
	}
}

func TestWriteSoakFiles(t *testing.T) {
	r := &SoakResult{Date: "2026-11-27", Commit: "0123456789abcdef", Host: "2 online CPUs", Mix: DefaultSoakMix,
		Minutes: 5, EveryS: 60, Scenario: "name: soak\n",
		Summary: &report.Summary{Ended: report.EndCompleted, VirtualS: 300, WallS: 300.1, RTF: 0.9997}}
	for m := 1; m <= 5; m++ {
		r.Samples = append(r.Samples, SoakSample{Minute: m, T: float64(60 * m), InRun: true, RSSKB: 50000 + int64(m%2)*8, RSSAnonKB: 30000,
			Fds: 120, Goroutines: 80, Threads: 14})
		r.Minute = append(r.Minute, SoakMinute{Minute: m, Statuses: 6000, DriftP99Ns: 40_000 + int64(m%2)*1000, WallNs: 60e9, VirtualNs: 60e9})
	}
	// Taken while the clients ended, after virtual time: left out.
	r.Samples = append(r.Samples, SoakSample{Minute: 6, T: 360, RSSKB: 10, Fds: 40, Goroutines: 20, Threads: 9})
	r.Series = soakSeries(r.Samples, r.Minute, 1, time.Minute)
	r.Verdict = soakVerdict(r)
	if r.Series[0].Fit.N != 5 || len(r.Series[1].Values) != 5 {
		t.Errorf("a sample past the run was fitted: %+v", r.Series[0])
	}
	if !r.Flat() || !strings.HasPrefix(r.Verdict, "flat") {
		t.Fatalf("verdict %q; series %+v", r.Verdict, r.Series)
	}
	dir := t.TempDir()
	files, err := writeSoakFiles(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-11-27-0123456.csv", "2026-11-27-0123456.md", "2026-11-27-0123456.png"}
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Errorf("file %d: %s, want %s", i, f, want[i])
		}
	}
	f, err := os.Open(files[2])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dy() <= img.Bounds().Dx() {
		t.Errorf("plot: %v, %v (want panels one above the other)", err, img.Bounds())
	}
	md, _ := os.ReadFile(files[1])
	for _, s := range []string{"**Verdict: flat", "| RSS | 5 |", "| Δ p99 | 5 |", "2026-11-27-0123456.png", "name: soak"} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
	// A second soak of the same day and commit does not overwrite the first.
	again, err := writeSoakFiles(dir, r)
	if err != nil || filepath.Base(again[0]) != "2026-11-27-0123456-2.csv" {
		t.Errorf("second soak: %v, %v", again, err)
	}

	// A growing series is named in the verdict.
	for i := range r.Samples {
		r.Samples[i].Goroutines = 80 + int64(10*i)
	}
	r.Series = soakSeries(r.Samples, r.Minute, 1, time.Minute)
	if r.Verdict = soakVerdict(r); r.Flat() || !strings.Contains(r.Verdict, "goroutines rising") {
		t.Errorf("verdict %q", r.Verdict)
	}
}

func TestCoordinatorStarted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tcs.log")
	if coordinatorStarted(path) {
		t.Error("no log yet: started")
	}
	line := `{"level":"info","pid":22428,"detector_pid":22431,"cpu":1,"base_priority":80,"time":"2026-11-26T10:00:41Z","message":"coordinator started"}` + "\n"
	if err := os.WriteFile(path, []byte(`{"level":"info","message":"profiles served"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if coordinatorStarted(path) {
		t.Error("before the line: started")
	}
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if !coordinatorStarted(path) {
		t.Error("the line is there: not started")
	}
}

func TestFdKindsString(t *testing.T) {
	if got := fdKindsString(map[string]int{"socket": 3, "pipe": 2, "anon:eventfd": 1}); got != "anon:eventfd=1 pipe=2 socket=3" {
		t.Errorf("%q", got)
	}
	if got := heapGrowth(t.TempDir(), 10); got != "" {
		t.Errorf("no profiles: %q", got)
	}
}

func TestDescendantThreads(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if n := descendantThreads(os.Getpid()); n < 1 {
		t.Fatalf("%d threads below this process with a sleep child, want ≥ 1", n)
	}
}
