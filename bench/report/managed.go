package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/steward-oam/steward/bench/record"
)

func managedSection(res *record.Results, imgDir string, charts []string) string {
	if len(res.Managed) == 0 {
		return ""
	}
	cfg := res.Profile.Managed
	per := res.Managed[0].ResourcesPer
	var b strings.Builder
	fmt.Fprintf(&b, "## Heap per managed object\n\n")
	fmt.Fprintf(&b, "The controller starts with no Application and its heap is read; then Applications of %d objects (a\n", per)
	fmt.Fprintf(&b, "Deployment, a Service and %d ConfigMaps each) are created with the controller running until it\n", max(per-2, 0))
	fmt.Fprintf(&b, "manages %s objects; the heap is read again %s after the last app of each level\n",
		levelsList(res.Managed), secs(cfg.Settle))
	if managedForced(res.Managed) {
		fmt.Fprintf(&b, "is Ready. The harness makes the controller collect garbage %d times, %s apart\n",
			cfg.GCs, secf(cfg.Window.Seconds()/float64(max(cfg.GCs, 1))))
		fmt.Fprintf(&b, "(`/debug/pprof/heap?gc=1`), and takes the median `HeapInuse` read right after each, as in the\n")
		fmt.Fprintf(&b, "memory scenario.")
	} else {
		fmt.Fprintf(&b, "is Ready, from /metrics as in the memory scenario.")
	}
	fmt.Fprintf(&b, " *Per managed object* is the heap beyond the controller's with nothing to\n")
	fmt.Fprintf(&b, "manage, divided by the objects it manages: it holds the fixed costs of a first app too (compiled\n")
	fmt.Fprintf(&b, "definitions, informers, caches), which weigh most at the first level. *Per object added* is the\n")
	fmt.Fprintf(&b, "growth from the level before, divided by the objects added; the summary's target is checked on\n")
	fmt.Fprintf(&b, "that growth from the first level to the last. The apps carry no reconcile-interval: they\n")
	fmt.Fprintf(&b, "re-sync on the controller's default (Steward's `--application-re-sync-period`, 5 minutes; `owns`\n")
	fmt.Fprintf(&b, "only on events). `owns` caches every Deployment, Service and ConfigMap of the cluster, which here\n")
	fmt.Fprintf(&b, "are the managed objects only.\n\n")
	informers := false
	for _, m := range res.Managed {
		for _, p := range m.Points {
			informers = informers || p.Informers > 0
		}
	}
	headers := []string{"controller", "managed objects", "apps", "ready after", "heap in use after GC", "per managed object", "per object added", "RSS"}
	if informers {
		headers = append(headers, "watch informers")
	}
	var rows [][]string
	for _, m := range res.Managed {
		watching := slices.ContainsFunc(m.Points, func(p record.ManagedPoint) bool { return p.Informers > 0 })
		for i, p := range m.Points {
			perObject, added, ready := "–", "–", "–"
			if p.Objects > 0 {
				if _, ok := m.Base(); ok {
					perObject = bytesText(int(math.Round(m.PerObject(p))))
				}
				ready = secs(p.Ready)
			}
			if v, ok := m.Incremental(i); ok {
				added = bytesText(int(math.Round(v)))
			}
			row := []string{m.Controller, thousands(p.Objects), thousands(p.Apps), ready, mibText(p.HeapInuse), perObject, added, mibText(p.RSS)}
			if informers {
				n := "–" // a controller without watch-mode informers
				if watching {
					n = fmt.Sprintf("%.0f", p.Informers)
				}
				row = append(row, n)
			}
			rows = append(rows, row)
		}
	}
	b.WriteString(table(headers, rows))
	b.WriteString(chartLink(imgDir, ManagedChart, "Heap in use after GC and heap per managed object against managed objects", charts))
	return b.String()
}

// levelsList is "1,000, 2,000, 4,000 and 8,000": the levels of the first
// result.
func levelsList(ms []record.ManagedResult) string {
	var levels []string
	for _, p := range ms[0].Points {
		if p.Objects > 0 {
			levels = append(levels, thousands(p.Objects))
		}
	}
	switch len(levels) {
	case 0:
		return "no"
	case 1:
		return levels[0]
	}
	return strings.Join(levels[:len(levels)-1], ", ") + " and " + levels[len(levels)-1]
}

// managedForced reports whether every heap of the managed scenario was
// read after a forced collection.
func managedForced(ms []record.ManagedResult) bool {
	for _, m := range ms {
		for _, p := range m.Points {
			if !p.ForcedGC {
				return false
			}
		}
	}
	return len(ms) > 0
}
