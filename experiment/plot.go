package experiment

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// series is one named line or set of values of a plot.
type series struct {
	name string
	x, y []float64
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// savePlot writes p as dir/name.png and dir/name.svg.
func savePlot(p *plot.Plot, dir, name string) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, name+ext)); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
	}
	return nil
}

// plotOpts are linePlot's choices: points instead of lines, the legend at
// the top left instead of the top right, a logarithmic y axis (every y must
// be > 0).
type plotOpts struct{ dots, left, logY bool }

// linePlot draws each series as a line (or points) in one plot.
func linePlot(dir, name, title, xl, yl string, ss []series, o plotOpts) error {
	p := plot.New()
	p.Legend.Left = o.left
	if o.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: 3} // Prec -1 printed 10^-5 as 9.999999999999999e-06
	}
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xl, yl
	p.Add(plotter.NewGrid())
	for i, s := range ss {
		xy := make(plotter.XYs, len(s.x))
		for k := range s.x {
			xy[k].X, xy[k].Y = s.x[k], s.y[k]
		}
		if o.dots {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return fmt.Errorf("plot %s: %w", name, err)
			}
			sc.Color = palette[i%len(palette)]
			sc.Radius = vg.Points(2)
			p.Add(sc)
			p.Legend.Add(s.name, sc)
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	return savePlot(p, dir, name)
}

// histPlot draws each series' y values as a histogram over the same bins
// (normalized to fractions of the samples), as step lines.
func histPlot(dir, name, title, xl string, ss []series, lo, hi float64, bins int) ([][]float64, error) {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xl, "fraction of samples"
	p.Add(plotter.NewGrid())
	w := (hi - lo) / float64(bins)
	var counts [][]float64
	for i, s := range ss {
		c := make([]float64, bins)
		for _, v := range s.y {
			k := int((v - lo) / w)
			k = min(max(k, 0), bins-1)
			c[k]++
		}
		for k := range c {
			c[k] /= float64(max(len(s.y), 1))
		}
		counts = append(counts, c)
		xy := make(plotter.XYs, 0, 2*bins)
		for k := range c {
			xy = append(xy, plotter.XY{X: lo + float64(k)*w, Y: c[k]}, plotter.XY{X: lo + float64(k+1)*w, Y: c[k]})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", name, err)
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	return counts, savePlot(p, dir, name)
}

// writeCSV writes a header and rows to dir/name.csv.
func writeCSV(dir, name string, header []string, rows [][]string) error {
	f, err := os.Create(filepath.Join(dir, name+".csv"))
	if err != nil {
		return fmt.Errorf("write %s.csv: %w", name, err)
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	_ = w.WriteAll(rows)
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s.csv: %w", name, err)
	}
	return f.Close()
}

func ff(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }

// quantile is the q-quantile of v (sorted copy, nearest rank).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	k := int(q * float64(len(s)-1))
	return s[k]
}
