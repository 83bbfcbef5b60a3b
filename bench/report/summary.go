package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/steward-oam/steward/bench/record"
)

// summaryRow is one target of the summary: a value per controller and a
// verdict for each controller the target is checked on.
type summaryRow struct {
	target, issue string
	cells         map[string]string
	verdicts      []verdict
}

type verdict struct {
	controller string
	ok         bool
}

// check records whether the controller named name, when it is one of the
// subjects, meets the target.
func (r *summaryRow) check(name string, ok bool, subjects ...string) {
	if name != "" && slices.Contains(subjects, name) {
		r.verdicts = append(r.verdicts, verdict{name, ok})
	}
}

func (r summaryRow) metText() string {
	var parts []string
	for _, v := range r.verdicts {
		parts = append(parts, v.controller+": "+yesNo(v.ok))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

func summarySection(res *record.Results) string {
	if len(res.Controllers) == 0 {
		return ""
	}
	timer, wm := subjects(res)
	var rows []summaryRow
	add := func(target, issue string, fill func(r *summaryRow, name string) bool) {
		r := summaryRow{target: target, issue: issue, cells: map[string]string{}}
		measured := false
		for _, c := range res.Controllers {
			measured = fill(&r, c.Name) || measured
		}
		if measured {
			rows = append(rows, r)
		}
	}
	if len(res.Memory) > 0 {
		target := fmt.Sprintf("heap in use (after GC) grows < 5%% from 0 to %s unrelated Deployments", thousands(lastLevel(res.Memory)))
		add(target, "7, 12", func(r *summaryRow, name string) bool {
			m, ok := findMemory(res.Memory, name)
			if ok {
				r.cells[name] = signedPct(m.Growth())
				r.check(name, m.Growth() < targetHeapGrowth, timer, wm)
			}
			return ok
		})
	}
	if len(res.Steady) > 0 {
		add("API requests per tracked resource per steady-state pass: ≤ 1 in timer mode, 0 in watch mode", "7, 12",
			func(r *summaryRow, name string) bool {
				s, ok := findSteady(res.Steady, name)
				if ok {
					r.cells[name] = fmt.Sprintf("%.2f", s.PerResource)
					// Two decimals: passes cut by the window's edges move
					// the third.
					hundredths := math.Round(s.PerResource * 100)
					r.check(name, hundredths <= targetPerResource*100, timer)
					r.check(name, hundredths <= targetWatchPerResource*100, wm)
				}
				return ok
			})
		add("0 event writes per steady-state pass", "7", func(r *summaryRow, name string) bool {
			s, ok := findSteady(res.Steady, name)
			if ok {
				r.cells[name] = fmt.Sprintf("%.2f", s.EventsPerPass)
				r.check(name, s.EventsPerPass <= targetEventsPerPass, timer, wm)
			}
			return ok
		})
	}
	if len(res.Drift) > 0 {
		for _, kind := range []struct {
			what  string
			times func(record.DriftResult) []float64
			stats func(record.DriftResult) (lo, median, mean, hi float64)
		}{{"a deleted Deployment", func(d record.DriftResult) []float64 { return d.Repairs }, record.DriftResult.Stats},
			{"an edited Deployment (spec.replicas)", func(d record.DriftResult) []float64 { return d.Edits }, record.DriftResult.EditStats}} {
			target := fmt.Sprintf("drift repair of %s: median < %s and max < %s in watch mode (median / max)",
				kind.what, secf(targetDriftMedian), secf(targetDriftMax))
			add(target, "12", func(r *summaryRow, name string) bool {
				d, ok := findDrift(res.Drift, name)
				if !ok || len(kind.times(d)) == 0 {
					return false
				}
				_, med, _, hi := kind.stats(d)
				r.cells[name] = secf(med) + " / " + secf(hi)
				r.check(name, med < targetDriftMedian && hi < targetDriftMax, wm)
				return true
			})
		}
	}
	if len(res.Fleet) > 0 {
		apps := thousands(res.Fleet[0].Apps)
		add(fmt.Sprintf("fleet of %s apps ready within 1.3× of the client-QPS bound", apps), "7", func(r *summaryRow, name string) bool {
			f, ok := findFleet(res.Fleet, name)
			if ok {
				r.cells[name] = fmt.Sprintf("%.2f× (%s vs %s)", f.Ratio(), secs(f.Converged), secs(f.Bound))
				r.check(name, f.Ratio() <= targetFleetRatio, timer)
			}
			return ok
		})
		if ft, ok := findFleet(res.Fleet, timer); ok && wm != "" {
			target := fmt.Sprintf("fleet of %s apps: watch mode ready no later than timer mode (%.0f%% allowed for noise)",
				apps, (targetFleetVsTimer-1)*100)
			add(target, "12", func(r *summaryRow, name string) bool {
				f, ok := findFleet(res.Fleet, name)
				if ok {
					r.cells[name] = fmt.Sprintf("%s (%.2f× timer)", secs(f.Converged), f.Converged.Seconds()/max(ft.Converged.Seconds(), 1e-9))
					r.check(name, f.Converged.Seconds() <= ft.Converged.Seconds()*targetFleetVsTimer, wm)
				}
				return ok
			})
		}
	}
	if len(res.Managed) > 0 {
		lo, hi := managedRange(res.Managed)
		target := fmt.Sprintf("heap in use per managed object < %s in watch mode: growth per object added from %s to %s managed objects "+
			"(in brackets: heap beyond the empty controller per object at %s)",
			bytesText(targetHeapPerObject), thousands(lo), thousands(hi), thousands(hi))
		add(target, "12", func(r *summaryRow, name string) bool {
			m, ok := findManaged(res.Managed, name)
			if !ok {
				return false
			}
			slope, ok := m.Slope()
			if !ok {
				return false
			}
			cell := bytesText(int(math.Round(slope)))
			if top, ok := m.Top(); ok {
				if _, hasBase := m.Base(); hasBase {
					cell += " (" + bytesText(int(math.Round(m.PerObject(top)))) + ")"
				}
			}
			r.cells[name] = cell
			r.check(name, slope < targetHeapPerObject, wm)
			return true
		})
	}
	if len(res.Soak) > 0 {
		target := fmt.Sprintf("soak: heap in use after GC at minute %.0f within 5%% of minute %d (%d apps, re-sync %s)",
			res.Soak[0].Duration.D().Minutes(), record.SoakFrom, res.Soak[0].Apps, secs(res.Soak[0].Interval))
		add(target, "10", func(r *summaryRow, name string) bool {
			sk, ok := findSoak(res.Soak, name)
			if ok {
				r.cells[name] = signedPct(sk.Growth())
				r.check(name, sk.Growth() < targetSoakGrowth, timer)
			}
			return ok
		})
	}
	if len(rows) == 0 {
		return ""
	}
	headers := []string{"Target", "issue"}
	for _, c := range res.Controllers {
		headers = append(headers, c.Name)
	}
	headers = append(headers, "met")
	var cells [][]string
	for _, r := range rows {
		row := []string{r.target, r.issue}
		for _, c := range res.Controllers {
			v, ok := r.cells[c.Name]
			if !ok {
				v = "–"
			}
			row = append(row, v)
		}
		cells = append(cells, append(row, r.metText()))
	}
	var b strings.Builder
	b.WriteString("## Summary\n\n")
	b.WriteString("The targets of issues 7 and 10 are checked on Steward in timer mode")
	if timer != "" {
		fmt.Fprintf(&b, " (**%s**)", timer)
	}
	b.WriteString(",\nthose of issue 12 on Steward in watch mode")
	if wm != "" {
		fmt.Fprintf(&b, " (**%s**)", wm)
	}
	b.WriteString("; *met* says, for each, whether it meets\n")
	b.WriteString("the target. A dash is a scenario the controller was not measured in.\n\n")
	b.WriteString(table(headers, cells))
	b.WriteString("\n")
	return b.String()
}

// managedRange is the fewest and most managed objects measured (levels
// with objects only).
func managedRange(ms []record.ManagedResult) (lo, hi int) {
	for _, m := range ms {
		for _, p := range m.Points {
			if p.Objects == 0 {
				continue
			}
			if lo == 0 || p.Objects < lo {
				lo = p.Objects
			}
			hi = max(hi, p.Objects)
		}
	}
	return lo, hi
}
