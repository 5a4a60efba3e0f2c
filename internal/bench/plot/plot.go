// Package plot draws the benchmark plots of lockstep bench compare as PNG
// files with gonum/plot: lines (throughput against thread count, or
// throughput over time with marks) and grouped bars (latency percentiles).
// It knows nothing of benchmarks: callers pass named series of numbers.
package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Size of every image: 16 × 10 cm (at gonum's 96 dpi for PNG: 605 × 378 px).
const (
	width  = 16 * vg.Centimeter
	height = 10 * vg.Centimeter
)

// Series is one named line: points (X[i], Y[i]).
type Series struct {
	Name string
	X, Y []float64
	// Marks are X positions drawn as dashed vertical lines in the series'
	// colour (events: checkpoints).
	Marks []float64
}

// Lines holds a line plot: axes' labels, series and what the marks mean.
type Lines struct {
	Title, XLabel, YLabel string
	Series                []Series
	MarkName              string // legend suffix of the marks ("checkpoint")
	Points                bool   // a glyph at every point (few points: thread counts)
	LogX                  bool   // a logarithmic X axis (thread counts)
}

func colour(i int) color.Color { return plotutil.Color(i) }

// plainTicks are gonum's default ticks labelled without trailing zeros
// ("50000", not "50000.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// SaveLines writes a line plot to path (.png).
func SaveLines(path string, l Lines) error {
	if len(l.Series) == 0 {
		return errors.New("plot: no series")
	}
	p := plot.New()
	p.Title.Text = l.Title
	p.X.Label.Text = l.XLabel
	p.Y.Label.Text = l.YLabel
	p.Y.Min = 0
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	ymax := 0.0
	for _, s := range l.Series {
		for _, y := range s.Y {
			ymax = math.Max(ymax, y)
		}
	}
	p.Y.Max = ymax * 1.25 // room for the legend above the lines
	if l.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticksAt(l.Series))
	}
	for i, s := range l.Series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xys[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("plot: series %q: %w", s.Name, err)
		}
		line.Color = colour(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		if l.Points {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("plot: series %q: %w", s.Name, err)
			}
			sc.Color = colour(i)
			sc.Shape = draw.CircleGlyph{}
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		p.Legend.Add(s.Name, thumbs...)
		for k, x := range s.Marks {
			m, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax * 1.05}})
			if err != nil {
				return err
			}
			m.Color = colour(i)
			m.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(m)
			if k == 0 && l.MarkName != "" {
				p.Legend.Add(s.Name+" "+l.MarkName, m)
			}
		}
	}
	return save(p, path)
}

// ticksAt are ticks at every X value of the series (thread counts).
func ticksAt(ss []Series) []plot.Tick {
	seen := map[float64]bool{}
	var ts []plot.Tick
	for _, s := range ss {
		for _, x := range s.X {
			if !seen[x] && x > 0 {
				seen[x] = true
				ts = append(ts, plot.Tick{Value: x, Label: fmt.Sprint(x)})
			}
		}
	}
	return ts
}

// Bars is one named set of bars, a value per group.
type Bars struct {
	Name   string
	Values []float64
}

// GroupedBars holds a bar chart: groups along X (p50, p95, p99), one bar
// per set in each group.
type GroupedBars struct {
	Title, YLabel string
	Groups        []string
	Bars          []Bars
}

// SaveBars writes a grouped bar chart to path (.png).
func SaveBars(path string, g GroupedBars) error {
	if len(g.Bars) == 0 || len(g.Groups) == 0 {
		return errors.New("plot: no bars")
	}
	p := plot.New()
	p.Title.Text = g.Title
	p.Y.Label.Text = g.YLabel
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	w := vg.Points(math.Max(6, math.Min(30, 240/float64(len(g.Bars)*len(g.Groups)))))
	for i, b := range g.Bars {
		if len(b.Values) != len(g.Groups) {
			return fmt.Errorf("plot: bars %q have %d values for %d groups", b.Name, len(b.Values), len(g.Groups))
		}
		bc, err := plotter.NewBarChart(plotter.Values(b.Values), w)
		if err != nil {
			return fmt.Errorf("plot: bars %q: %w", b.Name, err)
		}
		bc.Color = colour(i)
		bc.LineStyle.Width = 0
		bc.Offset = w * vg.Length(float64(i)-float64(len(g.Bars)-1)/2)
		p.Add(bc)
		p.Legend.Add(b.Name, bc)
	}
	ymax := 0.0
	for _, b := range g.Bars {
		for _, v := range b.Values {
			ymax = math.Max(ymax, v)
		}
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.25 // room for the legend
	p.NominalX(g.Groups...)
	return save(p, path)
}

func save(p *plot.Plot, path string) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return fmt.Errorf("plot: %s: only .png is written", path)
	}
	if err := p.Save(width, height, path); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return nil
}
