package measure

import (
	"math"
	"testing"
)

const metricsPage = `# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 40
apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="POST",version="v1"} 3 1700000000000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="core.oam.dev",resource="applications",scope="resource",subresource="status",verb="PATCH",version="v1beta1"} 5
apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 9
go_memstats_heap_inuse_bytes 1.2345e+07

odd_label{path="a \"quoted\" \\ value\nnext",empty=""} +Inf
`

// gcPage is a summary and a histogram as client_golang writes them: Memory
// reads go_gc_duration_seconds_count, which exists only as a line of the
// summary.
const gcPage = `# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 1.5e-05
go_gc_duration_seconds{quantile="1"} 0.002
go_gc_duration_seconds_sum 0.0125
go_gc_duration_seconds_count 17
# TYPE steward_reconcile_duration_seconds histogram
steward_reconcile_duration_seconds_bucket{controller="application",le="0.1"} 3
steward_reconcile_duration_seconds_bucket{controller="application",le="1"} 5
steward_reconcile_duration_seconds_bucket{controller="application",le="+Inf"} 6
steward_reconcile_duration_seconds_sum{controller="application"} 4.5
steward_reconcile_duration_seconds_count{controller="application"} 6
`

func TestParseText_FlattensSummariesAndHistograms(t *testing.T) {
	ss, err := ParseText([]byte(gcPage))
	if err != nil {
		t.Fatalf("ParseText: %v", err)
	}
	if got := ss.Sum("go_gc_duration_seconds_count", nil); got != 17 {
		t.Errorf("go_gc_duration_seconds_count = %v, want 17", got)
	}
	if got := ss.Sum("go_gc_duration_seconds", map[string]string{"quantile": "1"}); got != 0.002 {
		t.Errorf("quantile 1 = %v, want 0.002", got)
	}
	app := map[string]string{"controller": "application"}
	if got := ss.Sum("steward_reconcile_duration_seconds_count", app); got != 6 {
		t.Errorf("histogram count = %v, want 6", got)
	}
	if got := ss.Sum("steward_reconcile_duration_seconds_bucket", map[string]string{"le": "1"}); got != 5 {
		t.Errorf("bucket le=1 = %v, want 5", got)
	}
	if got := ss.Sum("steward_reconcile_duration_seconds_bucket", map[string]string{"le": "+Inf"}); got != 6 {
		t.Errorf("bucket le=+Inf = %v, want 6", got)
	}
}

func TestParseText_ReadsSamplesLabelsAndSpecialValues(t *testing.T) {
	ss, err := ParseText([]byte(metricsPage))
	if err != nil {
		t.Fatalf("ParseText: %v", err)
	}
	if len(ss) != 7 {
		t.Fatalf("got %d samples, want 7", len(ss))
	}
	if got := ss.Sum("apiserver_request_total", map[string]string{"resource": "configmaps"}); got != 42 {
		t.Errorf("configmaps = %v, want 42 (both codes)", got)
	}
	if got := ss.Sum("go_memstats_heap_inuse_bytes", nil); got != 12345000 {
		t.Errorf("heap = %v, want 12345000", got)
	}
	odd := ss[len(ss)-1]
	if want := "a \"quoted\" \\ value\nnext"; odd.Labels["path"] != want {
		t.Errorf("escaped label = %q, want %q", odd.Labels["path"], want)
	}
	if v, ok := odd.Labels["empty"]; !ok || v != "" {
		t.Errorf("empty label = %q, %v; want present and empty", v, ok)
	}
	if !math.IsInf(odd.Value, 1) {
		t.Errorf("value = %v, want +Inf", odd.Value)
	}
	if !ss.Has("odd_label") || ss.Has("missing") {
		t.Errorf("Has is wrong")
	}
}

func TestParseText_RejectsMalformedLines(t *testing.T) {
	for _, page := range []string{
		"no_value\n",
		"x{a=\"1\" 3\n",
		"x{a=1} 3\n",
		"x 1 2 3\n",
		"x notanumber\n",
		"# TYPE x counter\nx -\n",
	} {
		if _, err := ParseText([]byte(page)); err == nil {
			t.Errorf("ParseText(%q) succeeded, want an error", page)
		}
	}
}
