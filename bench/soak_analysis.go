package bench

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/tcs-robotics/tcs/record"
	"github.com/tcs-robotics/tcs/report"
)

// SoakSample is what the soak read of the tcs process at the end of one
// sampling period: /proc/PID/status, /proc/PID/fd and the goroutine count
// its --pprof server gives. A figure that could not be read is -1.
type SoakSample struct {
	// Minute is the sample's number: 1 at the end of the first period.
	Minute int `json:"minute"`
	// T is the wall time since the coordinator started (it took the
	// simulation CPU), in s.
	T float64 `json:"t_s"`
	// InRun is false for a sample taken after the run's virtual time
	// ended (T past summary.json's wall_s: the clients ending, the files
	// being written); the fits leave it out.
	InRun      bool  `json:"in_run"`
	RSSKB      int64 `json:"rss_kb"`
	RSSAnonKB  int64 `json:"rss_anon_kb"`
	Fds        int64 `json:"fds"`
	Goroutines int64 `json:"goroutines"`
	Threads    int64 `json:"threads"`
	// HeapAllocKB, NextGCKB and NumGC are the Go runtime's MemStats
	// (HeapAlloc, NextGC, NumGC; /debug/pprof/heap?debug=1): they tell a
	// heap that grows toward its next collection (the run collects at
	// GOGC=800) from one that keeps what it allocates.
	HeapAllocKB int64 `json:"heap_alloc_kb"`
	NextGCKB    int64 `json:"next_gc_kb"`
	NumGC       int64 `json:"num_gc"`
	// FdKinds counts the open fds by kind ("pipe=17 proc=108 socket=30
	// ..."; linux.FdKinds), so that a step in Fds can be told: not
	// judged.
	FdKinds string `json:"fd_kinds,omitempty"`
	// ClientThreads is the number of threads of tcs's descendants (the
	// clients and what they started): not judged, it explains fds.
	ClientThreads int64 `json:"client_threads"`
}

// SoakMinute is what the recording says about one sampling period of the
// run's wall time since virtual time began (the /tcs/run_status records'
// wall_ns): minute m is [(m−1)·every, m·every).
type SoakMinute struct {
	Minute int
	// Statuses is the number of /tcs/run_status records in it (one per
	// 10 ms of virtual time).
	Statuses int64
	// DriftP99Ns is the 99th percentile of Δ at those records (Δ at the
	// last dispatch decision before each); DriftMaxNs the largest Δ of any
	// dispatch decision in the minute.
	DriftP99Ns int64
	DriftMaxNs int64
	// LateP99Ns is the 99th percentile of how late the clients'
	// activations began after their due time k·P (virtual time); 0 with no
	// activation.
	LateP99Ns   int64
	Activations int64
	// VirtualNs and WallNs are the virtual and wall time the minute's
	// records span (from the last record before it).
	VirtualNs, WallNs int64
	// Misses, Dispatches and Dropped are the deadline misses, dispatch
	// decisions and records the recording dropped in the minute.
	Misses, Dispatches, Dropped int64
}

// RTF is the minute's real-time factor (0 with no wall time).
func (m SoakMinute) RTF() float64 {
	if m.WallNs <= 0 {
		return 0
	}
	return float64(m.VirtualNs) / float64(m.WallNs)
}

// soakBinner folds a run's /tcs/run_status and /tcs/progress records, in
// the recording's order, into per-minute figures without keeping the
// records: an hour's recording holds millions.
type soakBinner struct {
	everyNs int64
	minutes map[int]*soakBin
	cur     int // the minute of the last status record: activations count in it
	prev    record.RunStatus
	have    bool
}

type soakBin struct {
	SoakMinute
	drift, late report.Quantiles
}

func newSoakBinner(everyNs int64) *soakBinner {
	return &soakBinner{everyNs: everyNs, minutes: map[int]*soakBin{}, cur: 1}
}

func (b *soakBinner) bin(m int) *soakBin {
	x, ok := b.minutes[m]
	if !ok {
		x = &soakBin{SoakMinute: SoakMinute{Minute: m}}
		b.minutes[m] = x
	}
	return x
}

// status takes one /tcs/run_status record.
func (b *soakBinner) status(st record.RunStatus) {
	m := int(st.WallNs/b.everyNs) + 1
	if st.WallNs < 0 {
		m = 1
	}
	b.cur = m
	x := b.bin(m)
	x.Statuses++
	x.drift.Add(st.DriftNs)
	x.DriftMaxNs = max(x.DriftMaxNs, st.DriftMaxNs)
	if b.have {
		x.VirtualNs += st.WorldNs - b.prev.WorldNs
		x.WallNs += st.WallNs - b.prev.WallNs
		x.Misses += st.DeadlineMisses - b.prev.DeadlineMisses
		x.Dispatches += st.Dispatches - b.prev.Dispatches
		x.Dropped += st.RecordingDropped - b.prev.RecordingDropped
	} else {
		x.VirtualNs, x.WallNs = st.WorldNs, st.WallNs
		x.Misses, x.Dispatches, x.Dropped = st.DeadlineMisses, st.Dispatches, st.RecordingDropped
	}
	b.prev, b.have = st, true
}

// progress takes one /tcs/progress record; activations count in the
// minute of the last status record (at most 10 ms of virtual time before).
func (b *soakBinner) progress(p record.ClientProgress) {
	if p.Event != record.EventActivation {
		return
	}
	x := b.bin(b.cur)
	x.Activations++
	x.late.Add(p.BeginNs - p.DueNs)
}

// result is the minutes in order, 1 to the last one with a record.
func (b *soakBinner) result() []SoakMinute {
	last := 0
	for m := range b.minutes {
		last = max(last, m)
	}
	out := make([]SoakMinute, 0, last)
	for m := 1; m <= last; m++ {
		x := b.bin(m)
		x.DriftP99Ns = x.drift.Quantile(0.99)
		x.LateP99Ns = x.late.Quantile(0.99)
		out = append(out, x.SoakMinute)
	}
	return out
}

// readSoakRecording reads the run's recording into per-minute figures.
func readSoakRecording(path string, everyNs int64) ([]SoakMinute, error) {
	b := newSoakBinner(everyNs)
	var st record.RunStatus
	var pr record.ClientProgress
	_, err := record.Read(path, func(ch *record.ReadChannel, m *mcap.Message) error {
		switch ch.Topic {
		case record.TopicRunStatus:
			if err := st.Decode(m.Data); err != nil {
				return fmt.Errorf("%s: %s at %d: %w", path, ch.Topic, m.LogTime, err)
			}
			b.status(st)
		case record.TopicProgress:
			if err := pr.Decode(m.Data); err != nil {
				return fmt.Errorf("%s: %s at %d: %w", path, ch.Topic, m.LogTime, err)
			}
			b.progress(pr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.result(), nil
}

// Fit is a least-squares line y = Intercept + Slope·x through a series,
// x in hours, and how its points scatter about it.
type Fit struct {
	N int `json:"n"`
	// Slope is in the series' unit per hour; SlopeSE its standard error.
	Slope     float64 `json:"slope_per_h"`
	SlopeSE   float64 `json:"slope_se_per_h"`
	Intercept float64 `json:"intercept"`
	// Sigma is the residuals' standard deviation (n − 2 degrees of
	// freedom): the series' noise about the line.
	Sigma float64 `json:"sigma"`
	// SpanH is the fitted span of x, in hours; Change = Slope·SpanH, what
	// the line rises over it.
	SpanH  float64 `json:"span_h"`
	Change float64 `json:"change"`
}

// fitLine fits y against x (hours) by least squares. With fewer than 3
// points, or all x equal, Sigma is NaN (no noise can be told from the
// line) and, with fewer than 2, so is the slope.
func fitLine(x, y []float64) Fit {
	n := len(x)
	f := Fit{N: n, Slope: math.NaN(), SlopeSE: math.NaN(), Intercept: math.NaN(), Sigma: math.NaN(), Change: math.NaN()}
	if n == 0 {
		return f
	}
	var mx, my float64
	lo, hi := x[0], x[0]
	for i := range x {
		mx += x[i]
		my += y[i]
		lo, hi = min(lo, x[i]), max(hi, x[i])
	}
	mx /= float64(n)
	my /= float64(n)
	f.SpanH = hi - lo
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	if n < 2 || sxx == 0 {
		f.Intercept = my
		return f
	}
	f.Slope = sxy / sxx
	f.Intercept = my - f.Slope*mx
	f.Change = f.Slope * f.SpanH
	if n < 3 {
		return f
	}
	var ss float64
	for i := range x {
		r := y[i] - (f.Intercept + f.Slope*x[i])
		ss += r * r
	}
	f.Sigma = math.Sqrt(ss / float64(n-2))
	f.SlopeSE = f.Sigma / math.Sqrt(sxx)
	return f
}

// The verdicts of a series.
const (
	VerdictFlat     = "flat"            // no trend beyond its noise
	VerdictRising   = "rising"          // a trend beyond its noise, upward
	VerdictFalling  = "falling"         // ... downward
	VerdictTooShort = "too few samples" // under 3 samples in the fit
)

// SoakSeries is one series of the soak, its fit and its verdict.
type SoakSeries struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Resolution is the series' smallest step (1 for counts): a line that
	// rises less than that over the fit tells no trend.
	Resolution float64 `json:"resolution"`
	// Minutes and Values are every sample of the series (minute k is
	// sample k, HoursPerSample × k hours in); those from FitFrom on are
	// fitted.
	HoursPerSample float64   `json:"hours_per_sample"`
	Minutes        []int     `json:"minutes"`
	Values         []float64 `json:"values"`
	FitFrom        int       `json:"fit_from_minute"`
	Fit            Fit       `json:"fit"`
	// Noise is the threshold the fitted change is held to:
	// max(2·Fit.Sigma, Resolution).
	Noise   float64 `json:"noise"`
	Verdict string  `json:"verdict"`
}

// judge fits the samples from minute fitFrom on (x: s.HoursPerSample ×
// the minute) and gives the verdict: flat
// when the line's change over the fitted span is within max(2σ of the
// residuals, the series' resolution), else rising or falling.
func judge(s SoakSeries, fitFrom int) SoakSeries {
	s.FitFrom = fitFrom
	var x, y []float64
	for i, m := range s.Minutes {
		if m >= fitFrom && !math.IsNaN(s.Values[i]) {
			x = append(x, float64(m)*s.HoursPerSample)
			y = append(y, s.Values[i])
		}
	}
	s.Fit = fitLine(x, y)
	if s.Fit.N < 3 || math.IsNaN(s.Fit.Sigma) {
		s.Noise, s.Verdict = math.NaN(), VerdictTooShort
		return s
	}
	s.Noise = max(2*s.Fit.Sigma, s.Resolution)
	switch {
	case math.Abs(s.Fit.Change) <= s.Noise:
		s.Verdict = VerdictFlat
	case s.Fit.Change > 0:
		s.Verdict = VerdictRising
	default:
		s.Verdict = VerdictFalling
	}
	return s
}

// parseGoroutines reads the goroutine count from the first line of
// /debug/pprof/goroutine?debug=1 ("goroutine profile: total 42").
func parseGoroutines(r io.Reader) (int64, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return 0, fmt.Errorf("goroutine profile: %w", err)
	}
	const prefix = "goroutine profile: total "
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
	if !ok {
		return 0, fmt.Errorf("goroutine profile: first line %q, want %q N", line, prefix)
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("goroutine profile: first line %q: not a count", line)
	}
	return n, nil
}

// memStats are the Go runtime's figures a soak keeps.
type memStats struct{ heapAlloc, nextGC, numGC int64 }

// parseMemStats reads HeapAlloc, NextGC (bytes) and NumGC from the
// "# runtime.MemStats" lines at the end of /debug/pprof/heap?debug=1.
func parseMemStats(r io.Reader) (memStats, error) {
	var m memStats
	want := map[string]*int64{"HeapAlloc": &m.heapAlloc, "NextGC": &m.nextGC, "NumGC": &m.numGC}
	found := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		dst, known := want[key]
		if !ok || !known || !strings.HasPrefix(sc.Text(), "# ") {
			continue
		}
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil || v < 0 {
			return m, fmt.Errorf("heap profile: %s = %q: not a count", key, val)
		}
		*dst = v
		found++
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("heap profile: %w", err)
	}
	if found != len(want) {
		return m, errors.New("heap profile: no HeapAlloc, NextGC and NumGC lines (not ?debug=1?)")
	}
	return m, nil
}

// soakCSVHeader is the CSV's columns: one row per sampling period.
var soakCSVHeader = []string{"minute", "t_s", "in_run", "rss_kb", "rss_anon_kb", "fds", "goroutines", "threads",
	"heap_alloc_kb", "next_gc_kb", "num_gc",
	"drift_p99_us", "drift_max_us", "act_late_p99_us", "activations", "rtf", "misses", "dispatches",
	"rec_dropped", "statuses", "fd_kinds", "client_threads"}

// writeSoakCSV writes one row per sample, joined with the recording's
// minute of the same number (its columns empty when the recording has
// none).
func writeSoakCSV(w io.Writer, samples []SoakSample, minutes []SoakMinute) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(soakCSVHeader)
	byMinute := map[int]SoakMinute{}
	for _, m := range minutes {
		byMinute[m.Minute] = m
	}
	us := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) }
	i64 := func(v int64) string {
		if v < 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	for _, s := range samples {
		in := "0"
		if s.InRun {
			in = "1"
		}
		row := []string{strconv.Itoa(s.Minute), strconv.FormatFloat(s.T, 'f', 1, 64), in, i64(s.RSSKB), i64(s.RSSAnonKB),
			i64(s.Fds), i64(s.Goroutines), i64(s.Threads), i64(s.HeapAllocKB), i64(s.NextGCKB), i64(s.NumGC)}
		if m, ok := byMinute[s.Minute]; ok && m.Statuses > 0 {
			row = append(row, us(m.DriftP99Ns), us(m.DriftMaxNs), us(m.LateP99Ns), i64(m.Activations),
				strconv.FormatFloat(m.RTF(), 'f', 4, 64), i64(m.Misses), i64(m.Dispatches), i64(m.Dropped), i64(m.Statuses))
		} else {
			row = append(row, make([]string, len(soakCSVHeader)-2-len(row))...)
		}
		row = append(row, s.FdKinds, i64(s.ClientThreads))
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// soakSeries builds the judged series from the samples taken in the run
// and the recording's minutes: the process's RSS, fds, goroutines and
// threads, and Δ p99. Only minutes with such a sample count (the
// recording's last, cut minute has none).
func soakSeries(samples []SoakSample, minutes []SoakMinute, fitFrom int, every time.Duration) []SoakSeries {
	h := every.Hours()
	proc := func(name, unit string, res float64, v func(SoakSample) int64) SoakSeries {
		s := SoakSeries{Name: name, Unit: unit, Resolution: res, HoursPerSample: h}
		for _, x := range samples {
			if y := v(x); y >= 0 && x.InRun {
				s.Minutes = append(s.Minutes, x.Minute)
				s.Values = append(s.Values, float64(y))
			}
		}
		return judge(s, fitFrom)
	}
	out := []SoakSeries{
		proc("RSS", "kB", 4, func(x SoakSample) int64 { return x.RSSKB }),
		proc("open fds", "", 1, func(x SoakSample) int64 { return x.Fds }),
		proc("goroutines", "", 1, func(x SoakSample) int64 { return x.Goroutines }),
		proc("threads", "", 1, func(x SoakSample) int64 { return x.Threads }),
	}
	sampled := map[int]bool{}
	for _, x := range samples {
		sampled[x.Minute] = x.InRun
	}
	d := SoakSeries{Name: "Δ p99", Unit: "µs", Resolution: 1, HoursPerSample: h}
	for _, m := range minutes {
		if sampled[m.Minute] && m.Statuses > 0 {
			d.Minutes = append(d.Minutes, m.Minute)
			d.Values = append(d.Values, float64(m.DriftP99Ns)/1e3)
		}
	}
	return append(out, judge(d, fitFrom))
}
