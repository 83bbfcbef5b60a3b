package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/steward-oam/steward/bench/record"
)

// Formatting helpers of the report.

// mib is a mebibyte: the report writes heaps and RSS in MiB.
const mib = 1 << 20

func chartLink(imgDir, name, alt string, charts []string) string {
	for _, c := range charts {
		if c == name {
			return fmt.Sprintf("\n![%s](%s/%s)\n\n", alt, imgDir, name)
		}
	}
	return "\n"
}

// table renders a Markdown table.
func table(headers []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(headers, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" --- |", len(headers)) + "\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

func verbText(byVerb map[string]float64) string {
	var parts []string
	for _, v := range sortedVerbs(byVerb) {
		if n := byVerb[v]; n < 0.005 {
			parts = append(parts, fmt.Sprintf("%s <0.01", v))
		} else {
			parts = append(parts, fmt.Sprintf("%s %.2f", v, n))
		}
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

func verbCounts(byVerb map[string]float64) string {
	var parts []string
	for _, v := range sortedVerbs(byVerb) {
		parts = append(parts, fmt.Sprintf("%s %.0f", v, byVerb[v]))
	}
	return strings.Join(parts, ", ")
}

// sortedVerbs orders verbs as verbOrder, unknown ones last.
func sortedVerbs(byVerb map[string]float64) []string {
	rank := map[string]int{}
	for i, v := range verbOrder {
		rank[v] = i + 1
	}
	var verbs []string
	for v, n := range byVerb {
		if n != 0 {
			verbs = append(verbs, v)
		}
	}
	sort.Slice(verbs, func(i, j int) bool {
		ri, rj := rank[verbs[i]], rank[verbs[j]]
		if ri == 0 {
			ri = len(verbOrder) + 1
		}
		if rj == 0 {
			rj = len(verbOrder) + 1
		}
		if ri != rj {
			return ri < rj
		}
		return verbs[i] < verbs[j]
	})
	return verbs
}

func lastLevel(ms []record.MemoryResult) int {
	last := 0
	for _, m := range ms {
		if n := len(m.Points); n > 0 {
			last = max(last, m.Points[n-1].Unrelated)
		}
	}
	return last
}

func findMemory(ms []record.MemoryResult, name string) (record.MemoryResult, bool) {
	for _, m := range ms {
		if m.Controller == name {
			return m, true
		}
	}
	return record.MemoryResult{}, false
}

func findSteady(ss []record.SteadyResult, name string) (record.SteadyResult, bool) {
	for _, s := range ss {
		if s.Controller == name {
			return s, true
		}
	}
	return record.SteadyResult{}, false
}

func findFleet(fs []record.FleetResult, name string) (record.FleetResult, bool) {
	for _, f := range fs {
		if f.Controller == name {
			return f, true
		}
	}
	return record.FleetResult{}, false
}

func findDrift(ds []record.DriftResult, name string) (record.DriftResult, bool) {
	for _, d := range ds {
		if d.Controller == name {
			return d, true
		}
	}
	return record.DriftResult{}, false
}

func findManaged(ms []record.ManagedResult, name string) (record.ManagedResult, bool) {
	for _, m := range ms {
		if m.Controller == name {
			return m, true
		}
	}
	return record.ManagedResult{}, false
}

func findSoak(ss []record.SoakResult, name string) (record.SoakResult, bool) {
	for _, s := range ss {
		if s.Controller == name {
			return s, true
		}
	}
	return record.SoakResult{}, false
}

// forced reports whether the memory scenario forced its collections.
func forced(ms []record.MemoryResult) bool {
	for _, m := range ms {
		for _, p := range m.Points {
			if !p.ForcedGC {
				return false
			}
		}
	}
	return len(ms) > 0
}

func minutesText(d record.Duration) string {
	if m := d.D().Minutes(); m >= 1 && m == math.Trunc(m) {
		if m == 1 {
			return "1 minute"
		}
		return fmt.Sprintf("%.0f minutes", m)
	}
	return secs(d)
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func signedPct(f float64) string { return fmt.Sprintf("%+.1f%%", f*100) }

func mibText(b float64) string { return fmt.Sprintf("%.1f MiB", b/mib) }

// msText writes milliseconds; under 0.1 ms (a render the controller's
// cache answered) in microseconds.
func msText(ms float64) string {
	if ms > 0 && ms < 0.1 {
		return fmt.Sprintf("%.1f µs", ms*1000)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

func pctText(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

func secs(d record.Duration) string { return secf(d.Seconds()) }

func secf(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

func bytesText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// thousands writes 6000 as 6,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func relToCwd(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}
