package record

import (
	"encoding/json"
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"

	"github.com/foxglove/mcap/go/mcap"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tcs-robotics/tcs/report"
)

// Run is what a recording says about its run: the summary (the
// summary.json attachment, or one rebuilt from the last status records
// when the run was killed before it wrote one) and the status series.
type Run struct {
	File *File
	// Summary is the run's summary; Rebuilt is true when it was rebuilt
	// from /tcs/run_status and /tcs/progress (no summary.json attachment).
	Summary *report.Summary
	Rebuilt bool
	// Status is every /tcs/run_status record; Progress every client's
	// /tcs/progress records, by client name, in order.
	Status   []RunStatus
	Progress map[string][]ClientProgress
	// Clients in the order they first appear.
	Clients []string
}

// ReadRun reads a recording for its summary and status series.
func ReadRun(path string) (*Run, error) {
	run := &Run{Progress: map[string][]ClientProgress{}}
	f, err := Read(path, func(ch *ReadChannel, m *mcap.Message) error {
		switch {
		case ch.Topic == TopicRunStatus || ch.Topic == TopicLegacyStatus && ch.Type == Status.Conv.ROS2Name:
			var s RunStatus
			if err := s.Decode(m.Data); err != nil {
				return fmt.Errorf("%s: %s message at %d: %w", path, ch.Topic, m.LogTime, err)
			}
			run.Status = append(run.Status, s)
		case ch.Topic == TopicProgress:
			var p ClientProgress
			if err := p.Decode(m.Data); err != nil {
				return fmt.Errorf("%s: %s message at %d: %w", path, ch.Topic, m.LogTime, err)
			}
			if _, ok := run.Progress[p.Client]; !ok {
				run.Clients = append(run.Clients, p.Client)
			}
			run.Progress[p.Client] = append(run.Progress[p.Client], p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	run.File = f
	if js, ok := f.Attachments["summary.json"]; ok {
		var s report.Summary
		if err := json.Unmarshal(js, &s); err != nil {
			return nil, fmt.Errorf("%s: attachment summary.json: %w", path, err)
		}
		run.Summary = &s
		return run, nil
	}
	run.Summary, run.Rebuilt = run.rebuild(), true
	return run, nil
}

// rebuild makes a summary from the last status records: what a killed
// run's recording still tells.
func (run *Run) rebuild() *report.Summary {
	md := run.File.Metadata["tcs"]
	s := &report.Summary{Scenario: md["scenario"], Mode: md["mode"], Ended: "recording cut short (tcs was killed)"}
	if run.File.Complete {
		s.Ended = md["ended"]
	}
	if n := len(run.Status); n > 0 {
		st := run.Status[n-1]
		s.VirtualS, s.WallS = report.Seconds(st.WorldNs), report.Seconds(st.WallNs)
		if s.WallS > 0 {
			s.RTF = s.VirtualS / s.WallS
		}
		s.DriftMaxS, s.DriftFinalS = report.Seconds(st.DriftMaxRunNs), report.Seconds(st.DriftNs)
		s.Dispatches = st.Dispatches
		s.Overhead = report.Overhead{CoordinatorS: report.Seconds(st.CoordinatorNs), ClientsS: report.Seconds(st.ClientsNs),
			DynamicsS: report.Seconds(st.DynamicsNs)}
		s.Overhead.SetFraction()
	}
	for _, c := range run.Clients {
		ps := run.Progress[c]
		last := ps[len(ps)-1]
		s.Clients = append(s.Clients, report.ClientSummary{Name: c, Robot: last.Robot, CPUS: report.Seconds(last.CPUNs),
			ProgressS: report.Seconds(last.ProgressNs), Activations: last.Activations, DeadlineMisses: last.DeadlineMisses})
	}
	return s
}

// Plots writes the run's plots into dir as PNG and SVG: drift (Δ over
// virtual time), progress (each client's progress less the world's time),
// misses (each client's deadline misses so far) and overhead (the
// coordinator's share of the simulation CPU). It returns the files.
func (run *Run) Plots(dir string) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, name string) error {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, name+ext)
			if err := p.Save(16*vg.Centimeter, 9*vg.Centimeter, path); err != nil {
				return fmt.Errorf("plot %s: %w", path, err)
			}
			files = append(files, path)
		}
		return nil
	}
	xs := func(ns int64) float64 { return float64(ns) / 1e9 }

	// Δ over time.
	p := newPlot("Δ (temporal drift)", "virtual time (s)", "Δ (ms)")
	var drift, driftNow plotter.XYs
	for _, st := range run.Status {
		drift = append(drift, plotter.XY{X: xs(st.WorldNs), Y: float64(st.DriftMaxNs) / 1e6})
		driftNow = append(driftNow, plotter.XY{X: xs(st.WorldNs), Y: float64(st.DriftNs) / 1e6})
	}
	if err := addLine(p, "max per status period", drift, 0); err != nil {
		return files, err
	}
	if err := addLine(p, "at the status", driftNow, 1); err != nil {
		return files, err
	}
	if err := save(p, "drift"); err != nil {
		return files, err
	}

	// Progress − T per client, and misses so far.
	pp := newPlot("client progress ahead of the world", "virtual time (s)", "progress − T (ms)")
	pm := newPlot("deadline misses", "virtual time (s)", "misses so far")
	for k, c := range run.Clients {
		var lead, miss plotter.XYs
		for _, e := range run.Progress[c] {
			if e.Event == EventStatus {
				lead = append(lead, plotter.XY{X: xs(e.WorldNs), Y: float64(e.ProgressNs-e.WorldNs) / 1e6})
			}
			miss = append(miss, plotter.XY{X: xs(e.WorldNs), Y: float64(e.DeadlineMisses)})
		}
		if err := addLine(pp, c, lead, k); err != nil {
			return files, err
		}
		if err := addLine(pm, c, miss, k); err != nil {
			return files, err
		}
	}
	if err := save(pp, "progress"); err != nil {
		return files, err
	}
	if err := save(pm, "misses"); err != nil {
		return files, err
	}

	// Overhead: the coordinator's share, per status period and so far.
	po := newPlot("coordination overhead", "virtual time (s)", "coordinator share of the CPU (%)")
	var per, cum plotter.XYs
	var prev RunStatus
	for _, st := range run.Status {
		if tot := st.CoordinatorNs + st.ClientsNs + st.DynamicsNs; tot > 0 {
			cum = append(cum, plotter.XY{X: xs(st.WorldNs), Y: 100 * float64(st.CoordinatorNs) / float64(tot)})
		}
		dc := st.CoordinatorNs - prev.CoordinatorNs
		if tot := dc + st.ClientsNs - prev.ClientsNs + st.DynamicsNs - prev.DynamicsNs; tot > 0 {
			per = append(per, plotter.XY{X: xs(st.WorldNs), Y: 100 * float64(dc) / float64(tot)})
		}
		prev = st
	}
	if err := addLine(po, "per status period", per, 0); err != nil {
		return files, err
	}
	if err := addLine(po, "so far", cum, 1); err != nil {
		return files, err
	}
	return files, save(po, "overhead")
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p
}

var palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255}, color.RGBA{R: 140, G: 86, B: 75, A: 255},
}

func addLine(p *plot.Plot, name string, xy plotter.XYs, k int) error {
	if len(xy) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return fmt.Errorf("plot %q line %s: %w", p.Title.Text, name, err)
	}
	l.Color = palette[k%len(palette)]
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// Describe is a short text on the recording: completeness and the
// per-topic counts and log-time spans.
func (run *Run) Describe() string {
	f := run.File
	s := "recording " + f.Path + ": " + strconv.FormatInt(f.Messages, 10) + " messages"
	if !f.Complete {
		s += fmt.Sprintf(", cut short (%v): the readable prefix", f.TruncatedErr)
	}
	s += "\n"
	for _, c := range f.Channels {
		s += fmt.Sprintf("  %-24s %-36s %8d  log %.3f–%.3f s\n", c.Topic, c.Type, c.Messages,
			float64(c.FirstLog)/1e9, float64(c.LastLog)/1e9)
	}
	if run.Rebuilt {
		s += "no summary.json in the recording: the table is rebuilt from the last /tcs/run_status and /tcs/progress records\n"
	}
	return s
}
