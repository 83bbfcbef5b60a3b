package report

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/steward-oam/steward/bench/record"
)

// Chart file names under the image directory.
const (
	MemoryChart   = "bench-memory.png"
	RequestsChart = "bench-requests.png"
	SoakChart     = "bench-soak.png"
	ManagedChart  = "bench-managed.png"
	CPUChart      = "bench-cpu.png"
)

// verbOrder stacks request verbs from reads to writes.
var verbOrder = []string{"GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "APPLY", "DELETE"}

// writeCharts draws the charts of the report into dir and returns the
// file names written.
func writeCharts(res *record.Results, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating image dir: %w", err)
	}
	var written []string
	if len(res.Memory) > 0 {
		if err := memoryChart(res.Memory, filepath.Join(dir, MemoryChart)); err != nil {
			return nil, err
		}
		written = append(written, MemoryChart)
	}
	if len(res.Steady) > 0 {
		if err := requestsChart(res.Steady, filepath.Join(dir, RequestsChart)); err != nil {
			return nil, err
		}
		written = append(written, RequestsChart)
	}
	if len(res.Managed) > 0 {
		if err := managedChart(res.Managed, filepath.Join(dir, ManagedChart)); err != nil {
			return nil, err
		}
		written = append(written, ManagedChart)
	}
	if len(res.CPU) > 0 {
		if err := cpuChart(res.CPU, filepath.Join(dir, CPUChart)); err != nil {
			return nil, err
		}
		written = append(written, CPUChart)
	}
	if len(res.Soak) > 0 {
		var before []record.SoakResult
		if res.SoakBefore != nil {
			before = res.SoakBefore.Soak
		}
		if err := soakChart(res.Soak, before, filepath.Join(dir, SoakChart)); err != nil {
			return nil, err
		}
		written = append(written, SoakChart)
	}
	return written, nil
}

// soakChart plots, side by side, heap in use after GC and RSS of each
// controller against minutes of the soak; before, an earlier soak, is
// drawn dashed in the same colours.
func soakChart(results, before []record.SoakResult, path string) error {
	heap := soakPanel("Heap in use after GC", "minutes")
	rss := soakPanel("Resident set size", "minutes")
	colour := map[string]int{}
	for i, r := range results {
		colour[r.Controller] = i
	}
	for _, p := range []*plot.Plot{heap, rss} {
		value := func(pt record.SoakPoint) float64 { return pt.RSS }
		if p == heap {
			value = func(pt record.SoakPoint) float64 { return pt.HeapInuse }
		}
		for _, set := range []struct {
			results []record.SoakResult
			dashed  bool
		}{{results, false}, {before, true}} {
			for _, r := range set.results {
				c, ok := colour[r.Controller]
				if !ok {
					c = len(colour)
					colour[r.Controller] = c
				}
				xys := make(plotter.XYs, len(r.Points))
				for j, pt := range r.Points {
					xys[j] = plotter.XY{X: pt.Minute, Y: value(pt) / mib}
					p.Y.Max = max(p.Y.Max, value(pt)/mib*1.4)
				}
				line, points, err := plotter.NewLinePoints(xys)
				if err != nil {
					return err
				}
				line.Color, points.Color = plotutil.Color(c), plotutil.Color(c)
				line.Width = vg.Points(2)
				points.Shape = plotutil.Shape(c)
				name := r.Controller
				if set.dashed {
					line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
					name += " (before)"
				}
				p.Add(line, points)
				p.Legend.Add(name, line, points)
			}
		}
	}
	return sideBySide(heap, rss, path)
}

func soakPanel(title, x string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = "MiB"
	p.X.Tick.Marker, p.Y.Tick.Marker = integerTicks{}, integerTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

// memoryChart plots, side by side, heap in use after GC and RSS of each
// controller against the number of unrelated Deployments.
func memoryChart(results []record.MemoryResult, path string) error {
	heap := memoryPanel(results, "Heap in use after GC", func(p record.MemoryPoint) float64 { return p.HeapInuse })
	rss := memoryPanel(results, "Resident set size", func(p record.MemoryPoint) float64 { return p.RSS })
	for _, p := range []*plot.Plot{heap, rss} {
		if err := addMemoryLines(p, results, p == heap); err != nil {
			return err
		}
	}
	return sideBySide(heap, rss, path)
}

// memoryPanel is one panel of the memory chart; value picks the series.
func memoryPanel(results []record.MemoryResult, title string, value func(record.MemoryPoint) float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "unrelated Deployments"
	p.Y.Label.Text = "MiB"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Min = 0
	top := 0.0
	for _, m := range results {
		for _, pt := range m.Points {
			top = max(top, value(pt)/mib)
		}
	}
	p.Y.Max = top * 1.4 // room for the legend above the lines
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

func addMemoryLines(p *plot.Plot, results []record.MemoryResult, heap bool) error {
	for i, m := range results {
		xys := make(plotter.XYs, len(m.Points))
		for j, pt := range m.Points {
			v := pt.RSS
			if heap {
				v = pt.HeapInuse
			}
			xys[j] = plotter.XY{X: float64(pt.Unrelated), Y: v / mib}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		line.Width = vg.Points(2)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(m.Controller, line, points)
	}
	return nil
}

// managedChart plots, side by side, heap in use after GC (MiB) and heap
// per managed object (KiB, with the 2 KiB target of issue 12 dashed) of
// each controller against the number of managed objects.
func managedChart(results []record.ManagedResult, path string) error {
	heap := soakPanel("Heap in use after GC", "managed objects")
	per := soakPanel("Heap per managed object (beyond the empty controller)", "managed objects")
	per.Y.Label.Text = "KiB"
	per.Y.Max = float64(targetHeapPerObject) / 1024
	for i, m := range results {
		var total, each plotter.XYs
		for _, pt := range m.Points {
			total = append(total, plotter.XY{X: float64(pt.Objects), Y: pt.HeapInuse / mib})
			heap.Y.Max = max(heap.Y.Max, pt.HeapInuse/mib*1.4)
			if _, ok := m.Base(); ok && pt.Objects > 0 {
				v := m.PerObject(pt) / 1024
				each = append(each, plotter.XY{X: float64(pt.Objects), Y: v})
				per.Y.Max = max(per.Y.Max, v)
			}
		}
		for _, set := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{heap, total}, {per, each}} {
			if len(set.xys) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(set.xys)
			if err != nil {
				return err
			}
			line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
			line.Width = vg.Points(2)
			points.Shape = plotutil.Shape(i)
			set.p.Add(line, points)
			set.p.Legend.Add(m.Controller, line, points)
		}
	}
	per.Y.Max *= 1.4 // room for the legend above the lines
	target := plotter.NewFunction(func(float64) float64 { return float64(targetHeapPerObject) / 1024 })
	target.Color = color.Gray{Y: 80}
	target.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	per.Add(target)
	per.Legend.Add(fmt.Sprintf("target (< %s)", bytesText(targetHeapPerObject)), target)
	per.Y.Tick.Marker = plot.DefaultTicks{}
	return sideBySide(heap, per, path)
}

// integerTicks labels an axis with whole numbers (2000, not 2000.00).
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = fmt.Sprintf("%.0f", ticks[i].Value)
		}
	}
	return ticks
}

// requestsChart stacks each controller's requests per tracked resource per
// steady-state pass by verb, with the target of one as a dashed line.
func requestsChart(results []record.SteadyResult, path string) error {
	p := plot.New()
	p.Title.Text = "API requests per tracked resource per re-sync pass"
	p.Y.Label.Text = "requests"
	p.Y.Min = 0
	names := make([]string, len(results))
	for i, r := range results {
		names[i] = r.Controller
	}
	var below *plotter.BarChart
	for vi, verb := range verbOrder {
		values := make(plotter.Values, len(results))
		nonzero := false
		for i, r := range results {
			values[i] = r.ByVerb[verb]
			nonzero = nonzero || values[i] > 0
		}
		if !nonzero {
			continue
		}
		bars, err := plotter.NewBarChart(values, vg.Points(40))
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(vi)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		p.Add(bars)
		p.Legend.Add(verb, bars)
	}
	target := plotter.NewFunction(func(float64) float64 { return 1 })
	target.Color = color.Gray{Y: 80}
	target.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(target)
	p.Legend.Add("target (≤ 1)", target)
	p.Legend.Top = true
	p.NominalX(names...)
	p.Y.Max = max(p.Y.Max, 1) * 1.5 // room for the legend above the bars
	return p.Save(12*vg.Centimeter, 10*vg.Centimeter, path)
}

// cpuChart draws, per scenario, one bar per controller: its CPU per
// Application reconcile.
func cpuChart(results []record.ScenarioCPU, path string) error {
	var scenarios, controllers []string
	for _, r := range results {
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
		if !slices.Contains(controllers, r.Controller) {
			controllers = append(controllers, r.Controller)
		}
	}
	p := plot.New()
	p.Title.Text = "Controller CPU per Application reconcile, by scenario"
	p.Y.Label.Text = "ms"
	p.Y.Min = 0
	width := vg.Points(60 / float64(len(controllers)))
	for ci, c := range controllers {
		values := make(plotter.Values, len(scenarios))
		for _, r := range results {
			if r.Controller == c {
				values[slices.Index(scenarios, r.Scenario)] = r.CPUPerReconcileMs
			}
		}
		bars, err := plotter.NewBarChart(values, width)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(ci)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(ci)-float64(len(controllers)-1)/2)
		p.Add(bars)
		p.Legend.Add(c, bars)
	}
	p.Legend.Top = true
	p.NominalX(scenarios...)
	p.Y.Max *= 1.4 // room for the legend above the bars
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}

// sideBySide draws two panels next to each other into a PNG at path.
func sideBySide(left, right *plot.Plot, path string) error {
	const w, h = 20 * vg.Centimeter, 9 * vg.Centimeter
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
