package bench

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tcs-robotics/tcs/report"
)

// formatUnit writes v in unit: kB as MiB from 1 MiB on, µs and counts
// with two significant decimals; signed puts + before a positive value.
func formatUnit(v float64, unit string, signed bool) string {
	if math.IsNaN(v) {
		return "-"
	}
	sign := ""
	if signed && v > 0 {
		sign = "+"
	}
	switch unit {
	case "kB":
		if math.Abs(v) >= 1024 {
			return sign + strconv.FormatFloat(v/1024, 'f', 2, 64) + " MiB"
		}
		return sign + strconv.FormatFloat(v, 'f', 0, 64) + " kB"
	case "":
		return sign + strconv.FormatFloat(v, 'f', 2, 64)
	}
	return sign + strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
}

// soakBase is the results' file name without extension:
// <date>-<commit> (7 hex digits, "unknown" without one), with -2, -3, ...
// when dir already has a soak of that name.
func soakBase(dir string, r *SoakResult) string {
	c := r.Commit
	if len(c) > 7 {
		c = c[:7]
	}
	if c == "" {
		c = "unknown"
	}
	base := r.Date + "-" + c
	name := base
	for k := 2; fileExists(filepath.Join(dir, name+".csv")) || fileExists(filepath.Join(dir, name+".md")); k++ {
		name = base + "-" + strconv.Itoa(k)
	}
	return name
}

// writeSoakFiles writes the CSV, the report and the plot into dir.
func writeSoakFiles(dir string, r *SoakResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	base := filepath.Join(dir, soakBase(dir, r))
	var csv bytes.Buffer
	if err := writeSoakCSV(&csv, r.Samples, r.Minute); err != nil {
		return nil, fmt.Errorf("soak: CSV: %w", err)
	}
	files := []string{base + ".csv", base + ".md", base + ".png"}
	if err := os.WriteFile(files[0], csv.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("soak: %w", err)
	}
	if err := plotSoak(files[2], r); err != nil {
		return files[:1], err
	}
	var md bytes.Buffer
	writeSoakMarkdown(&md, r, filepath.Base(files[0]), filepath.Base(files[2]))
	if err := os.WriteFile(files[1], md.Bytes(), 0o644); err != nil {
		return []string{files[0], files[2]}, fmt.Errorf("soak: %w", err)
	}
	return files, nil
}

// mix writes the clients as "4 c, 4 go, ...".
func mix(m []SoakKind) (string, int) {
	var parts []string
	n := 0
	for _, k := range m {
		parts = append(parts, fmt.Sprintf("%d %s", k.Count, k.Kind))
		n += k.Count
	}
	return strings.Join(parts, ", "), n
}

// seriesRow is one series' figures as the report's table cells.
func seriesRow(s SoakSeries) []string {
	lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range s.Values {
		lo, hi, mean = min(lo, v), max(hi, v), mean+v
	}
	first, last := math.NaN(), math.NaN()
	if n := len(s.Values); n > 0 {
		mean /= float64(n)
		first, last = s.Values[0], s.Values[n-1]
	} else {
		lo, hi, mean = math.NaN(), math.NaN(), math.NaN()
	}
	slope := formatUnit(s.Fit.Slope, s.Unit, true)
	if !math.IsNaN(s.Fit.SlopeSE) {
		slope += " ± " + formatUnit(s.Fit.SlopeSE, s.Unit, false)
	}
	return []string{s.Name, strconv.Itoa(s.Fit.N), formatUnit(mean, s.Unit, false),
		formatUnit(first, s.Unit, false) + " → " + formatUnit(last, s.Unit, false),
		formatUnit(lo, s.Unit, false) + " – " + formatUnit(hi, s.Unit, false),
		slope, formatUnit(s.Fit.Change, s.Unit, true), formatUnit(s.Noise, s.Unit, false), s.Verdict}
}

var seriesHeader = []string{"series", "fitted", "mean", "first → last", "min – max", "slope per hour (± s.e.)",
	"change over the fit", "noise", "verdict"}

// writeSoakText is the short report on w: the series and the verdict.
func writeSoakText(w io.Writer, r *SoakResult) {
	m, n := mix(r.Mix)
	fmt.Fprintf(w, "soak: %d clients (%s), %d min virtual at max_rtf 1, %d samples every %v (%d after the run), fits from sample %d\n",
		n, m, r.Minutes, len(r.Samples), seconds(r.EveryS), afterRun(r), r.Warmup+1)
	if s := r.Summary; s != nil {
		fmt.Fprintf(w, "run: ended %s, virtual %.1f s in wall %.1f s (rtf %.4f), Δ p99 %s max %s, %d deadline misses, %d records dropped\n",
			s.Ended, s.VirtualS, s.WallS, s.RTF, formatUnit(s.DriftP99S*1e6, "µs", false), formatUnit(s.DriftMaxS*1e6, "µs", false),
			misses(s), dropped(s))
	}
	fmt.Fprintf(w, "%-10s %6s  %12s  %24s  %22s  %14s  %12s  %s\n", "series", "fitted", "mean", "slope per hour (± s.e.)", "first → last", "change", "noise", "verdict")
	for _, s := range r.Series {
		c := seriesRow(s)
		fmt.Fprintf(w, "%-10s %6s  %12s  %24s  %22s  %14s  %12s  %s\n", c[0], c[1], c[2], c[5], c[3], c[6], c[7], c[8])
	}
	fmt.Fprintf(w, "verdict: %s\n", r.Verdict)
	for _, f := range r.Files {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
}

// afterRun is how many samples were taken after virtual time ended.
func afterRun(r *SoakResult) int {
	n := 0
	for _, x := range r.Samples {
		if !x.InRun {
			n++
		}
	}
	return n
}

// dropped is the records the recording dropped (0 without one).
func dropped(s *report.Summary) int64 {
	if s.Recording == nil {
		return 0
	}
	return s.Recording.Dropped
}

// misses is every client's deadline misses.
func misses(s *report.Summary) int64 {
	var n int64
	for _, c := range s.Clients {
		n += c.DeadlineMisses
	}
	return n
}

// writeSoakMarkdown writes the report: verdict, series, the run's
// figures, how it was measured, and the scenario.
func writeSoakMarkdown(w io.Writer, r *SoakResult, csvName, pngName string) {
	m, n := mix(r.Mix)
	commit := r.Commit
	if r.Modified {
		commit += " (built from a modified tree)"
	}
	fmt.Fprintf(w, "# Soak %s, commit %s\n\n", r.Date, commit)
	fmt.Fprintf(w, "One `tcs run` of %d clients (%s; each a PD controller on its own pendulum), consistent mode, "+
		"`max_rtf: 1`, %d min of virtual time; the tcs process sampled every %v. Host: %s. "+
		"The soak took %.1f min of wall time, builds included.\n\n", n, m, r.Minutes, seconds(r.EveryS), r.Host, r.WallS/60)
	fmt.Fprintf(w, "**Verdict: %s.**\n\n", r.Verdict)
	fmt.Fprintf(w, "![soak](%s)\n\n", pngName)
	fitted := "every sample (no warm-up left out)"
	if r.Warmup > 0 {
		fitted = fmt.Sprintf("samples %d to the last (the first %d are the warm-up)", r.Warmup+1, r.Warmup)
	}
	if n := afterRun(r); n > 0 {
		fitted += fmt.Sprintf("; %d taken after virtual time ended (in_run 0: the clients ending) left out", n)
	}
	fmt.Fprintf(w, "Every sample is in [%s](%s). Fitted: %s.\n\n", csvName, csvName, fitted)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(seriesHeader, " | "), strings.Repeat("---|", len(seriesHeader)))
	for _, s := range r.Series {
		fmt.Fprintf(w, "| %s |\n", strings.Join(seriesRow(s), " | "))
	}
	fmt.Fprintln(w)
	if s := r.Summary; s != nil {
		var acts int64
		for _, c := range s.Clients {
			acts += c.Activations
		}
		fmt.Fprintf(w, "## The run\n\n")
		fmt.Fprintf(w, "- ended: %s; virtual %.3f s in %.3f s of wall time (rtf %.4f)\n", s.Ended, s.VirtualS, s.WallS, s.RTF)
		fmt.Fprintf(w, "- Δ over every dispatch decision (summary.json): p99 %s, max %s; %d dispatches\n",
			formatUnit(s.DriftP99S*1e6, "µs", false), formatUnit(s.DriftMaxS*1e6, "µs", false), s.Dispatches)
		fmt.Fprintf(w, "- %d activations, %d deadline misses; recording: %d records dropped\n", acts, misses(s), dropped(s))
		fmt.Fprintf(w, "- overhead: tcs %.3f s (%.3f s on the simulation CPU), clients %.3f s, dynamics %.3f s (tcs %.2f %% of them)\n\n",
			s.Overhead.CoordinatorS, s.Overhead.SimS, s.Overhead.ClientsS, s.Overhead.DynamicsS, 100*s.Overhead.Fraction)
	}
	if r.RunErr != "" {
		fmt.Fprintf(w, "The run failed: %s.\n\n", r.RunErr)
	}
	if r.HeapGrowth != "" {
		fmt.Fprintf(w, "## What the live heap gained\n\n`go tool pprof -top -sample_index=inuse_space -base heap-first.pb.gz heap-last.pb.gz`"+
			" (the heap profiles of the fit's first sample and of the last, in the run's folder):\n\n```\n%s\n```\n\n", r.HeapGrowth)
	}
	fmt.Fprintf(w, "## How it was measured\n\n")
	fmt.Fprintf(w, "- Sample k is taken k × %v after the coordinator of `tcs run --pprof 127.0.0.1:0` started "+
		"(tcs.log's \"coordinator started\": it holds the simulation CPU): RSS (VmRSS, "+
		"and RssAnon in the CSV) and threads from /proc/PID/status, open fds from /proc/PID/fd (by kind in the CSV's fd_kinds), goroutines from the "+
		"first line of /debug/pprof/goroutine?debug=1 (the request's own handler among them). The CSV also has "+
		"the Go runtime's HeapAlloc, NextGC and NumGC (/debug/pprof/heap?debug=1), not judged: the run collects at "+
		"GOGC=800, so between collections the heap, and RSS with it, grows toward NextGC; RSS rising while NumGC "+
		"stands still is that, not by itself a leak.\n", seconds(r.EveryS))
	fmt.Fprintf(w, "- Δ p99 of sample k is the 99th percentile of Δ at the recording's /tcs/run_status records "+
		"(Δ at the last dispatch decision, one record per 10 ms of virtual time) whose wall time since virtual time "+
		"began is in [(k−1), k) × %v: the run's wall clock starts after the clients' start-up, so these minutes end "+
		"a few seconds after the samples'. The CSV also has the minute's Δ max (over every decision), the 99th "+
		"percentile of the activations' start after their due time k·P (act_late_p99_us, virtual time), the "+
		"minute's rtf, deadline misses, dispatches and records the recording dropped.\n", seconds(r.EveryS))
	fmt.Fprintf(w, "- Each series gets a least-squares line over the fitted samples (x in hours). A series is flat "+
		"when the line's change over the fitted span is within its noise: twice the residuals' standard deviation, "+
		"or the series' resolution when that is larger (one fd, goroutine or thread; a 4 kB page; 1 µs). "+
		"Else it is rising or falling. The slope's standard error is beside it.\n\n")
	fmt.Fprintf(w, "Reproduce (root, 2 CPUs, from the repository): `SOAK_MIN=%d test/soak.sh`.\n\n", r.Minutes)
	fmt.Fprintf(w, "## Scenario\n\n```yaml\n%s```\n", r.Scenario)
}

// plotSoak draws the soak's series one above the other, each with its
// fitted line, into a PNG at path.
func plotSoak(path string, r *SoakResult) error {
	type panel struct {
		s     SoakSeries
		scale float64 // values × scale are plotted
		unit  string
		extra plotter.XYs // a second line (RSS: its anonymous part)
		name  string
	}
	var ps []panel
	for _, s := range r.Series {
		p := panel{s: s, scale: 1, unit: s.Unit, name: s.Name}
		if s.Unit == "kB" {
			p.scale, p.unit = 1.0/1024, "MiB"
			for _, x := range r.Samples {
				if x.RSSAnonKB >= 0 && x.InRun {
					p.extra = append(p.extra, plotter.XY{X: float64(x.Minute), Y: float64(x.RSSAnonKB) / 1024})
				}
			}
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil
	}
	plots := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		pl := plot.New()
		pl.Title.Text = fmt.Sprintf("%s: slope %s per hour, change over the fit %s, noise %s: %s", p.name,
			formatUnit(p.s.Fit.Slope, p.s.Unit, true), formatUnit(p.s.Fit.Change, p.s.Unit, true),
			formatUnit(p.s.Noise, p.s.Unit, false), p.s.Verdict)
		pl.Y.Label.Text = p.name
		if p.unit != "" {
			pl.Y.Label.Text += " (" + p.unit + ")"
		}
		if i == len(ps)-1 {
			pl.X.Label.Text = fmt.Sprintf("sample (every %v)", seconds(r.EveryS))
		}
		pl.Add(plotter.NewGrid())
		var xy plotter.XYs
		for k, m := range p.s.Minutes {
			xy = append(xy, plotter.XY{X: float64(m), Y: p.s.Values[k] * p.scale})
		}
		if len(xy) > 0 {
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("soak: plot %s: %w", p.name, err)
			}
			l.Color, pts.Color, pts.Radius = palette3[0], palette3[0], vg.Points(1.5)
			pl.Add(l, pts)
			pl.Legend.Add(p.name, l, pts)
		}
		if len(p.extra) > 0 {
			l, err := plotter.NewLine(p.extra)
			if err != nil {
				return fmt.Errorf("soak: plot %s: %w", p.name, err)
			}
			l.Color = palette3[2]
			pl.Add(l)
			pl.Legend.Add("anonymous (RssAnon)", l)
		}
		if f := p.s.Fit; !math.IsNaN(f.Slope) && f.N >= 2 {
			x0, x1 := float64(p.s.FitFrom), float64(p.s.Minutes[len(p.s.Minutes)-1])
			h := p.s.HoursPerSample
			line := plotter.XYs{{X: x0, Y: (f.Intercept + f.Slope*x0*h) * p.scale}, {X: x1, Y: (f.Intercept + f.Slope*x1*h) * p.scale}}
			l, err := plotter.NewLine(line)
			if err != nil {
				return fmt.Errorf("soak: plot %s: %w", p.name, err)
			}
			l.Color, l.Dashes = palette3[1], []vg.Length{vg.Points(4), vg.Points(3)}
			pl.Add(l)
			pl.Legend.Add("least-squares fit", l)
		}
		pl.Legend.Top, pl.Legend.Left = true, true
		pl.Title.TextStyle.Font.Size = vg.Points(9)
		// Counts: whole ticks, and a little room above and below a flat line.
		if lo, hi := pl.Y.Min, pl.Y.Max; hi-lo < 2 && p.s.Unit != "kB" {
			pl.Y.Min, pl.Y.Max = math.Floor(lo)-1, math.Ceil(hi)+1
		}
		plots[i] = []*plot.Plot{pl}
	}
	const panelH = 5.5 * vg.Centimeter
	img := vgimg.New(22*vg.Centimeter, panelH*vg.Length(len(ps)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 4, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("soak: plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("soak: plot %s: %w", path, err)
	}
	return f.Close()
}

// palette3: the series, its fit, a second line.
var palette3 = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}
