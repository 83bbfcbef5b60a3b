package report

import (
	"fmt"
	"strings"

	"github.com/steward-oam/steward/bench/record"
)

// bigAppSection reports the big app: dispatch time and the sizes of its
// ResourceTrackers, in all and by tracker.
func bigAppSection(res *record.Results) string {
	if len(res.BigApp) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Big app\n\n")
	fmt.Fprintf(&b, "One Application of %d objects (%d components of a Deployment, a Service and two ConfigMaps) is\n",
		res.BigApp[0].Resources, res.BigApp[0].Resources/4)
	fmt.Fprintf(&b, "created with the controller running; dispatch is the time until it is Ready. Raw is the JSON of\n")
	fmt.Fprintf(&b, "the decoded managed resources of its ResourceTrackers, stored the JSON of the tracker objects\n")
	fmt.Fprintf(&b, "themselves (what etcd keeps, against its 1.5 MiB limit per object).\n\n")
	headers := []string{"controller", "dispatch", "requests", "trackers", "compression", "raw", "stored"}
	var rows [][]string
	for _, a := range res.BigApp {
		raw, stored, comp := "–", "–", "–"
		if a.Trackers > 0 {
			raw, stored, comp = bytesText(a.RawBytes), bytesText(a.StoredBytes), a.CompressionName()
		}
		rows = append(rows, []string{a.Controller, secs(a.Dispatch), fmt.Sprintf("%.0f", a.Requests), fmt.Sprint(a.Trackers), comp, raw, stored})
	}
	b.WriteString(table(headers, rows))
	rows = nil
	for _, a := range res.BigApp {
		for _, t := range a.PerTracker {
			rows = append(rows, []string{a.Controller, "`" + t.Name + "`", t.Type, fmt.Sprint(t.Entries), bytesText(t.RawBytes), bytesText(t.StoredBytes)})
		}
	}
	if len(rows) > 0 {
		b.WriteString("\nBy tracker:\n\n")
		b.WriteString(table([]string{"controller", "tracker", "type", "entries", "raw", "stored"}, rows))
	}
	b.WriteString("\n")
	return b.String()
}
