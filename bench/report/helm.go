package report

import (
	"fmt"
	"strings"

	"github.com/steward-oam/steward/bench/record"
	"github.com/steward-oam/steward/bench/scenario"
)

// helmSection reports the helm scenario.
func helmSection(res *record.Results) string {
	if len(res.Helm) == 0 {
		return ""
	}
	h0 := res.Helm[0]
	var b strings.Builder
	fmt.Fprintf(&b, "## Helm charts\n\n")
	fmt.Fprintf(&b, "%s Applications, each one `helmchart` component of the same chart (a Deployment, a Service and\n", thousands(h0.Apps))
	fmt.Fprintf(&b, "five ConfigMaps, with its own values) from a Helm repository on loopback, plus the release summary\n")
	fmt.Fprintf(&b, "ConfigMap: %d objects each, the fleet scenario's shape. They exist before the controller starts; the time runs\n", scenario.HelmObjectsPerApp)
	fmt.Fprintf(&b, "until the last is Ready, and the bound is the fleet's (its busiest kind's requests − burst) ÷ QPS at\n")
	fmt.Fprintf(&b, "QPS %g, burst %d. Downloads are the archives the repository served; the cache column is\n", h0.QPS, h0.Burst)
	fmt.Fprintf(&b, "`steward_helm_chart_cache_total`. Heap is in use after a forced collection once every app is Ready.\n\n")
	headers := []string{"controller", "ready after", "requests", "bound (busiest kind)", "ratio", "downloads", "index reads", "cache hit / miss / fetch", "heap after GC"}
	var rows [][]string
	for _, h := range res.Helm {
		rows = append(rows, []string{h.Controller, secs(h.Converged), fmt.Sprintf("%.0f", h.Work),
			fmt.Sprintf("%s (%s)", secs(h.Bound), h.BusiestKind), fmt.Sprintf("%.2f×", h.Ratio()),
			fmt.Sprint(h.Downloads), fmt.Sprint(h.IndexReads),
			fmt.Sprintf("%.0f / %.0f / %.0f", h.Cache["hit"], h.Cache["miss"], h.Cache["fetch"]), mibText(h.Heap.HeapInuse)})
	}
	b.WriteString(table(headers, rows))
	b.WriteString("\n")
	return b.String()
}
