package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

func soakSection(res *record.Results, imgDir string, charts []string) string {
	if len(res.Soak) == 0 {
		return ""
	}
	s0 := res.Soak[0]
	var b strings.Builder
	fmt.Fprintf(&b, "## Soak: memory over time under work\n\n")
	fmt.Fprintf(&b, "%d Applications as a new user writes them with the built-in definitions only (a `webservice`\n", s0.Apps)
	fmt.Fprintf(&b, "with the `scaler`, `expose` and `labels` traits: a Deployment and a Service each) re-sync every %s\n", secs(s0.Interval))
	fmt.Fprintf(&b, "(`app.oam.dev/reconcile-interval`, the per-app form of `--application-re-sync-period`) for %s. The\n",
		minutesText(s0.Duration))
	fmt.Fprintf(&b, "harness marks the Deployments rolled out, as the Deployment controller the benchmark's control\n")
	fmt.Fprintf(&b, "plane lacks would, so the apps are Ready and the health policy is evaluated on every pass.\n")
	every := "every " + minutesText(res.Profile.Soak.SampleEvery)
	if res.Profile.Soak.SampleEvery.D() == time.Minute {
		every = "every minute"
	}
	fmt.Fprintf(&b, "From the moment all apps are Ready (minute 0), %s the harness makes the controller collect garbage\n", every)
	fmt.Fprintf(&b, "(`/debug/pprof/heap?gc=1`, served with `--pprof-addr`) and reads `HeapInuse` of `runtime.MemStats`\n")
	fmt.Fprintf(&b, "right after, with `VmRSS` from /proc. Growth is from minute %d (the first minute fills caches and\n", record.SoakFrom)
	fmt.Fprintf(&b, "pools) to the last; *per reconcile* divides that growth by the reconciles in between.")
	if soakMeasuredCPU(res.Soak) {
		fmt.Fprintf(&b, "\n*Children RSS* sums `VmRSS` of the controller's child processes (Steward's CUE evaluators) at\n")
		fmt.Fprintf(&b, "the same moments, which counts the binary's pages once per process; in brackets their `RssAnon`,\n")
		fmt.Fprintf(&b, "the heaps and stacks they do not share. *CPU per reconcile* is the CPU of the controller's process\n")
		fmt.Fprintf(&b, "tree (user and system time from /proc, child processes included) from minute 0 to the last,\n")
		fmt.Fprintf(&b, "divided by the reconciles in between, with the share its child processes used and the mean\n")
		fmt.Fprintf(&b, "render stage, as in the fleet scenario.")
	}
	fmt.Fprintf(&b, "\n\n")
	b.WriteString(soakGrowthTable(res.Soak))
	b.WriteString(soakHeapByPackage(res.Soak))
	b.WriteString("\nPer minute (reconciles counted from minute 0):\n\n")
	b.WriteString(soakMinuteTable(res.Soak))
	b.WriteString(chartLink(imgDir, SoakChart, "Heap in use after GC and RSS over the soak", charts))
	if ref := res.SoakBefore; ref != nil && len(ref.Soak) > 0 {
		commit := ""
		if ref.Commit != "" {
			commit = ", commit " + ref.Commit
		}
		fmt.Fprintf(&b, "### Before: %s\n\n", ref.Label)
		fmt.Fprintf(&b, "The same soak run on %s%s (%d apps for %s), drawn dashed in the chart above.\n\n",
			ref.Started.Format("2006-01-02 15:04 MST"), commit, ref.Soak[0].Apps, minutesText(ref.Soak[0].Duration))
		b.WriteString(soakGrowthTable(ref.Soak))
		b.WriteString("\n")
		b.WriteString(soakMinuteTable(ref.Soak))
		b.WriteString("\n")
	}
	return b.String()
}

// soakHeapTop is how many packages the soak section names per controller.
const soakHeapTop = 8

// soakHeapByPackage says, per controller whose soak ended with a heap
// profile, where its heap in use lay: "top in-use heap by package: 4.2 MiB
// k8s.io/client-go/tools/cache (31%), ...". Soaks recorded before the
// harness read the profile say nothing.
func soakHeapByPackage(results []record.SoakResult) string {
	var b strings.Builder
	for _, sk := range results {
		if len(sk.HeapByPackage) == 0 {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\nAfter the last point the harness reads a heap profile after the same forced collection\n")
			fmt.Fprintf(&b, "(`/debug/pprof/heap?gc=1`, kept in the run's log directory for `go tool pprof -inuse_space`) and\n")
			fmt.Fprintf(&b, "sums its in-use space by the Go package of the allocating function (the innermost frame outside\n")
			fmt.Fprintf(&b, "the runtime, reflect and sync, which allocate for their callers). The profile estimates from its\n")
			fmt.Fprintf(&b, "samples, one per 512 KiB allocated by default, so figures under a MiB are rough and the sum differs\n")
			fmt.Fprintf(&b, "from `HeapAlloc`; `GODEBUG=memprofilerate=4096` in stewardbench's environment samples finely:\n\n")
		}
		total := 0.0
		for _, h := range sk.HeapByPackage {
			total += h.Bytes
		}
		fmt.Fprintf(&b, "- **%s**, %s in the profile (`%s`): top in-use heap by package: %s\n", sk.Controller, mibText(total),
			filepath.Base(sk.HeapProfile), record.HeapPackagesText(sk.HeapByPackage, soakHeapTop))
	}
	return b.String()
}

// soakMeasuredCPU reports whether any soak was recorded with CPU and
// child processes; the tables of older ones have no columns for them.
func soakMeasuredCPU(results []record.SoakResult) bool {
	return slices.ContainsFunc(results, func(sk record.SoakResult) bool { return sk.Measured() })
}

func soakGrowthTable(results []record.SoakResult) string {
	headers := []string{"controller", fmt.Sprintf("heap after GC, minute %d", record.SoakFrom), "last minute", "growth", "reconciles in between", "per reconcile", "RSS, last minute"}
	withCPU := soakMeasuredCPU(results)
	if withCPU {
		headers = append(headers, "children RSS, last minute", "CPU per reconcile", "in child processes", "render, mean")
	}
	var rows [][]string
	for _, sk := range results {
		from, _ := sk.From()
		last, _ := sk.Last()
		row := []string{sk.Controller, mibText(from.HeapInuse), fmt.Sprintf("%s (minute %.0f)", mibText(last.HeapInuse), last.Minute),
			signedPct(sk.Growth()), fmt.Sprintf("%.0f", last.Reconciles-from.Reconciles),
			bytesText(int(math.Round(sk.RetainedPerReconcile()))), mibText(last.RSS)}
		if withCPU {
			cpu := cpuCells(sk.CPUCost)
			row = append(row, childRSSText(sk, last), cpu[2], cpu[3], cpu[5])
		}
		rows = append(rows, row)
	}
	return table(headers, rows)
}

// childRSSText is the children's RSS at p, "12.0 MiB (anon 8.0 MiB)", or
// a dash for a soak recorded before the harness read it.
func childRSSText(sk record.SoakResult, p record.SoakPoint) string {
	if !sk.Measured() {
		return "–"
	}
	return fmt.Sprintf("%s (anon %s)", mibText(p.ChildRSS), mibText(p.ChildRSSAnon))
}

// soakMinuteTable has a row per sample and, per controller, heap in use
// after GC, RSS, its children's RSS when measured, and reconciles so far.
func soakMinuteTable(results []record.SoakResult) string {
	withCPU := soakMeasuredCPU(results)
	headers := []string{"minute"}
	n := 0
	for _, sk := range results {
		headers = append(headers, sk.Controller+" heap after GC", sk.Controller+" RSS")
		if withCPU {
			headers = append(headers, sk.Controller+" children RSS")
		}
		headers = append(headers, sk.Controller+" reconciles")
		n = max(n, len(sk.Points))
	}
	var rows [][]string
	for i := range n {
		row := []string{fmt.Sprint(i)}
		for _, sk := range results {
			if i >= len(sk.Points) {
				row = append(row, "–", "–", "–")
				if withCPU {
					row = append(row, "–")
				}
				continue
			}
			p := sk.Points[i]
			row[0] = fmt.Sprintf("%.0f", p.Minute)
			row = append(row, mibText(p.HeapInuse), mibText(p.RSS))
			if withCPU {
				row = append(row, childRSSText(sk, p))
			}
			row = append(row, fmt.Sprintf("%.0f", p.Reconciles))
		}
		rows = append(rows, row)
	}
	return table(headers, rows)
}
