package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/steward-oam/steward/bench/record"
)

// Targets of issue 35, for Steward in watch mode at the scale scenario's
// size on the benchmark machine.
const (
	targetScaleSteadyCores = 0.05
	targetScaleDriftP99    = 1.0 // seconds
	targetScaleDriftMax    = 2.0 // seconds
	targetScaleHeap        = 512 << 20
	targetScalePassRatio   = 1.1
)

func scaleSection(res *record.Results) string {
	if len(res.Scale) == 0 {
		return ""
	}
	s0 := res.Scale[0]
	var b strings.Builder
	fmt.Fprintf(&b, "## Scale\n\n")
	fmt.Fprintf(&b, "How far one controller goes (issues 15 and 35; `make bench-scale`, not part of `make bench`). %s Applications of\n", thousands(s0.Apps))
	fmt.Fprintf(&b, "%d objects each (%s objects) exist before the controller starts, at client QPS %g and burst %d. *Ready after*\n",
		s0.Resources/max(s0.Apps, 1), thousands(s0.Resources), s0.QPS, s0.Burst)
	fmt.Fprintf(&b, "runs from the process start until the last app is Ready; heap in use after GC and RSS are read once\n")
	fmt.Fprintf(&b, "settled. Then the controller is restarted: the new process's first pass reconciles every app and\n")
	fmt.Fprintf(&b, "reads every object (watch mode trusts no cache on a process's first pass), and *full pass* runs from the\n")
	fmt.Fprintf(&b, "restart until it has reconciled every app, against the bound its requests set under the rate limit\n")
	fmt.Fprintf(&b, "(busiest kind, as in the fleet scenario); heap in use (not after GC) and RSS are sampled during it.\n\n")
	headers := []string{"controller", "apps", "ready after", "requests per object", "heap after GC", "per app", "RSS",
		"full pass", "bound (busiest kind)", "ratio", "peak heap in pass", "peak RSS in pass"}
	var rows [][]string
	for _, r := range res.Scale {
		rows = append(rows, []string{r.Controller, thousands(r.Apps), secs(r.Converged),
			fmt.Sprintf("%.2f", r.Requests/float64(max(r.Resources, 1))), fmt.Sprintf("%.1f MiB", r.Settled.HeapInuse/mib),
			bytesText(int(r.Settled.HeapInuse / float64(max(r.Apps, 1)))), fmt.Sprintf("%.1f MiB", r.Settled.RSS/mib),
			secs(r.Pass), fmt.Sprintf("%s (%s)", secs(r.PassBound), r.PassBusiestKind), fmt.Sprintf("%.2f×", r.PassRatio()),
			fmt.Sprintf("%.1f MiB", r.PassPeakHeap/mib), fmt.Sprintf("%.1f MiB", r.PassPeakRSS/mib)})
	}
	b.WriteString(table(headers, rows))
	b.WriteString("\n")
	if !slices.ContainsFunc(res.Scale, func(r record.ScaleResult) bool { return r.Steady.Window > 0 }) {
		return b.String()
	}
	steady := s0.Steady.Window
	fmt.Fprintf(&b, "### CPU and drift repair at scale\n\n")
	fmt.Fprintf(&b, "CPU is user and system time of the controller's process tree. *Converge* is the first process until every app\n")
	fmt.Fprintf(&b, "was Ready; *steady* a window of %s once settled, in which nothing changes and every app re-syncs at the\n", secs(steady))
	fmt.Fprintf(&b, "default period (5 min), so *expected* is apps × window ÷ period; *full pass* the restarted process until it\n")
	fmt.Fprintf(&b, "had reconciled every app. Between the steady window and the restart, %d hand changes hit random managed objects\n", s0.Drift.Edits+s0.Drift.Deletes)
	fmt.Fprintf(&b, "of random apps, one a second: an edit (Deployment `spec.replicas`, Service `spec.selector`, ConfigMap `data`) or a\n")
	fmt.Fprintf(&b, "delete, each timed from the request's return until a watch sees the object back as the manifest sets it (a\n")
	fmt.Fprintf(&b, "delete: until one of a new UID exists). A change not back within %s counts as unrepaired.\n\n", secs(res.Profile.Scale.Drift.Timeout))
	headers = []string{"controller", "converge CPU", "steady reconciles (expected)", "CPU per reconcile", "steady cores",
		"full pass CPU", "changes (edits, deletes)", "repair p50", "p95", "p99", "max", "unrepaired"}
	rows = nil
	for _, r := range res.Scale {
		expected := float64(r.Apps) * r.Steady.Window.Seconds() / defaultReSync.Seconds()
		rows = append(rows, append([]string{r.Controller, secf(r.ConvergeCPU.CPUSeconds),
			fmt.Sprintf("%.0f (%.0f)", r.Steady.Reconciles, expected), msText(r.Steady.CPUPerReconcileMs),
			fmt.Sprintf("%.4f", r.Steady.Cores), secf(r.PassCPU.CPUSeconds)}, driftCells(r.Drift)...))
	}
	b.WriteString(table(headers, rows))
	b.WriteString("\n")
	b.WriteString(partsTable(res.Scale))
	return b.String()
}

// partsTable shows where each controller's steady window went, from its
// CPU profile: each part's share of the samples.
func partsTable(runs []record.ScaleResult) string {
	var names []string
	shares := map[string]map[string]float64{}
	var order []string
	for _, r := range runs {
		if len(r.Steady.Parts) == 0 {
			continue
		}
		names = append(names, r.Controller)
		shares[r.Controller] = map[string]float64{}
		for _, p := range r.Steady.Parts {
			shares[r.Controller][p.Part] = p.Share
			if !slices.Contains(order, p.Part) {
				order = append(order, p.Part)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Where the steady window's CPU went, from a CPU profile of the whole window (`--pprof-addr`; the file is\n")
	fmt.Fprintf(&b, "`bench/results/logs/<run>/scale-<controller>-steady.pprof`, read it with `go tool pprof -top bin/steward <file>`). A\n")
	fmt.Fprintf(&b, "sample counts in the first part of this list whose functions are on its stack, so the parts add up to the whole:\n")
	fmt.Fprintf(&b, "tracker decoding inside health evaluation counts as tracker decoding.\n\n")
	headers := append([]string{"part"}, names...)
	var rows [][]string
	for _, part := range order {
		row := []string{part}
		for _, n := range names {
			if v, ok := shares[n][part]; ok {
				row = append(row, fmt.Sprintf("%.0f%%", v*100))
			} else {
				row = append(row, "–")
			}
		}
		rows = append(rows, row)
	}
	b.WriteString(table(headers, rows))
	b.WriteString("\n")
	return b.String()
}

// defaultReSync is Steward's --application-re-sync-period default, the
// period the scale and shards scenarios run at.
const defaultReSync = record.Duration(5 * 60 * 1e9)

// driftCells are the changes, repair quantiles and unrepaired count.
func driftCells(d record.FleetDrift) []string {
	if len(d.Repairs)+d.Unrepaired == 0 {
		return []string{"-", "-", "-", "-", "-", "-"}
	}
	p50, p95, p99, hi := d.Quantiles()
	return []string{fmt.Sprintf("%d (%d, %d)", d.Edits+d.Deletes, d.Edits, d.Deletes), repairText(p50), repairText(p95), repairText(p99),
		repairText(hi), fmt.Sprintf("%d", d.Unrepaired)}
}

// repairText is a repair time: milliseconds under a second, where watch
// mode's repairs are.
func repairText(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0f ms", s*1000)
	}
	return secf(s)
}

// singleRun is the one-controller reference of a shards run: its own, or
// the scale scenario's run of the same controller over the same fleet.
type singleRun struct {
	label     string
	converged record.Duration
	memory    record.MemoryPoint
	steady    record.SteadyWindow
	drift     record.FleetDrift
}

func singleOf(res *record.Results, r record.ShardsResult) (singleRun, bool) {
	if r.SingleConverged > 0 {
		return singleRun{"one controller", r.SingleConverged, r.Single, r.SingleSteady, record.FleetDrift{}}, true
	}
	for _, sc := range res.Scale {
		if sc.Controller == r.Controller && sc.Apps == r.Apps && sc.Resources == r.Resources {
			return singleRun{"one controller (scale scenario)", sc.Converged, sc.Settled, sc.Steady, sc.Drift}, true
		}
	}
	return singleRun{}, false
}

func shardsSection(res *record.Results) string {
	if len(res.Shards) == 0 {
		return ""
	}
	s0 := res.Shards[0]
	var b strings.Builder
	fmt.Fprintf(&b, "## Shards\n\n")
	fmt.Fprintf(&b, "One controller against %d shards of it (issues 15 and 35; `make bench-shards`, not part of `make bench`; see\n", s0.Shards)
	fmt.Fprintf(&b, "[sharding.md](sharding.md)). %s Applications of %d objects each. %d replicas (`master`, `shard-1`, ...) start on a\n",
		thousands(s0.Apps), s0.Resources/max(s0.Apps, 1), s0.Shards)
	fmt.Fprintf(&b, "fresh control plane, then the fleet is created; the master assigns every app to a shard. *Ready after* runs from\n")
	fmt.Fprintf(&b, "the replicas' start until the last app is Ready; heap in use after GC and RSS are read once settled. One\n")
	fmt.Fprintf(&b, "controller converging the same fleet (created before it starts) is the reference: run by this scenario, or,\n")
	fmt.Fprintf(&b, "where the row says so, the scale scenario's run of the same controller at the same client limits.\n")
	steady := s0.Replicas != nil && s0.Replicas[0].Steady.Window > 0
	if steady {
		fmt.Fprintf(&b, "*Steady cores* is each process's CPU over a window of %s once settled, at the default re-sync period (every\n", secs(s0.Replicas[0].Steady.Window))
		fmt.Fprintf(&b, "replica over the same window); the sharded fleet then takes the scale scenario's hand changes, each\n")
		fmt.Fprintf(&b, "repaired by the replica of its app's shard (the drift columns are the whole sharded run's).\n")
	}
	b.WriteString("\n")
	headers := []string{"controller", "run", "apps", "ready after", "heap after GC", "share of one controller's", "RSS"}
	if steady {
		headers = append(headers, "steady cores", "share of one controller's", "changes (edits, deletes)", "repair p50", "p95", "p99", "max", "unrepaired")
	}
	var rows [][]string
	for _, r := range res.Shards {
		one, ok := singleOf(res, r)
		if ok {
			row := []string{r.Controller, one.label, thousands(r.Apps), secs(one.converged),
				fmt.Sprintf("%.1f MiB", one.memory.HeapInuse/mib), "1.00", fmt.Sprintf("%.1f MiB", one.memory.RSS/mib)}
			if steady {
				row = append(append(row, fmt.Sprintf("%.4f", one.steady.Cores), "1.00"), driftCells(one.drift)...)
			}
			rows = append(rows, row)
		}
		share := func(x, of float64) string {
			if !ok || of <= 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", x/of)
		}
		for i, p := range r.Replicas {
			row := []string{r.Controller, "shard " + p.Shard, thousands(p.Apps), secs(r.ShardedConverged),
				fmt.Sprintf("%.1f MiB", p.Memory.HeapInuse/mib), share(p.Memory.HeapInuse, one.memory.HeapInuse),
				fmt.Sprintf("%.1f MiB", p.Memory.RSS/mib)}
			if steady {
				row = append(row, fmt.Sprintf("%.4f", p.Steady.Cores), share(p.Steady.Cores, one.steady.Cores))
				if i == 0 {
					row = append(row, driftCells(r.Drift)...)
				} else {
					row = append(row, "", "", "", "", "", "")
				}
			}
			rows = append(rows, row)
		}
	}
	b.WriteString(table(headers, rows))
	b.WriteString("\n")
	return b.String()
}
