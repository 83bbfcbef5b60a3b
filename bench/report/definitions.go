package report

import (
	"fmt"
	"strings"

	"github.com/steward-oam/steward/bench/record"
)

// definitionsSection reports the definitions scenario.
func definitionsSection(res *record.Results) string {
	if len(res.Definitions) == 0 {
		return ""
	}
	d0 := res.Definitions[0]
	var b strings.Builder
	fmt.Fprintf(&b, "## Definition revisions and admission\n\n")
	fmt.Fprintf(&b, "%s Applications of one ComponentDefinition (a ConfigMap each), %d of them annotated\n", thousands(d0.Apps), d0.AutoUpdate)
	fmt.Fprintf(&b, "`app.oam.dev/autoUpdate: \"true\"`. The definition is then changed %d times; each change is timed until every\n", d0.Changes)
	fmt.Fprintf(&b, "autoUpdate Application delivered it (the controller waits 3 s after a change to gather a burst). Requests are\n")
	fmt.Fprintf(&b, "the controller's over all changes: they grow with the autoUpdate Applications, not the fleet; plain\n")
	fmt.Fprintf(&b, "Applications keep what they rendered (the column counts those that did not). Revisions are the\n")
	fmt.Fprintf(&b, "DefinitionRevisions at the end (one per spec). Then valid two-component Applications are created with\n")
	fmt.Fprintf(&b, "server-side dry run through the API server and the webhook: what `kubectl apply` waits for.\n\n")
	headers := []string{"controller", "apps (autoUpdate)", "changes", "per change", "requests", "plain re-rendered", "revisions", "heap before → after", "admission p50 / p95 / p99 / max"}
	var rows [][]string
	for _, d := range res.Definitions {
		var lat []string
		for _, l := range d.ChangeLatency {
			lat = append(lat, secs(l))
		}
		rows = append(rows, []string{d.Controller, fmt.Sprintf("%s (%d)", thousands(d.Apps), d.AutoUpdate), fmt.Sprint(d.Changes),
			strings.Join(lat, ", "), fmt.Sprintf("%.0f", d.ChangeRequests), fmt.Sprint(d.PlainRerendered), fmt.Sprint(d.Revisions),
			mibText(d.HeapBefore.HeapInuse) + " → " + mibText(d.HeapAfter.HeapInuse),
			fmt.Sprintf("%s / %s / %s / %s", ms(d.AdmissionP50), ms(d.AdmissionP95), ms(d.AdmissionP99), ms(d.AdmissionMax))})
	}
	b.WriteString(table(headers, rows))
	b.WriteString("\n")
	return b.String()
}

// ms writes a latency in milliseconds, to a tenth.
func ms(d record.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.D().Microseconds())/1000) }
