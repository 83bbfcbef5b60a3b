package metrics_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/steward-oam/steward/internal/metrics"
)

func newMetrics(t *testing.T) (*metrics.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

func TestNew_RegistersEveryMetricWithThePrefix(t *testing.T) {
	m, reg := newMetrics(t)
	// Touch every collector so that it has a series to gather.
	m.ObserveStage(metrics.StageRender, time.Millisecond)
	m.ObserveStateKeepPass(time.Second)
	m.SetTrackedResources("ns", "app", 3)
	m.SetTrackerSize("ns", "app", 100, 40)
	m.DriftRepaired("Deployment")
	m.GCDeleted("Service")
	m.ObserveRenderCache("ComponentDefinition", true)
	m.SetWatchInformers("local", 2)
	m.WatchEvent(metrics.WatchChanged)
	m.KeepSkipped()
	m.InstrumentTransport(okTransport(200)).RoundTrip(request(t, "GET", "/api/v1/namespaces/ns/configmaps/a"))

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"steward_api_requests_total", "steward_cue_evaluation_duration_seconds", "steward_cue_evaluator_cpu_seconds_total",
		"steward_cue_evaluators_started_total", "steward_drift_repaired_total", "steward_gc_deletions_total",
		"steward_reconcile_stage_duration_seconds", "steward_render_cache_lookups_total",
		"steward_statekeep_pass_duration_seconds", "steward_statekeep_skipped_total", "steward_tracked_resources",
		"steward_tracker_size_bytes", "steward_watch_events_total", "steward_watch_informers",
	}
	var got []string
	for _, mf := range mfs {
		got = append(got, mf.GetName())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("gathered %v, want %v", got, want)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
}

func TestNew_TwiceOnOneRegistryShares(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := metrics.New(reg)
	if err != nil {
		t.Fatalf("second New: %v", err)
	}
	a.DriftRepaired("Deployment")
	b.DriftRepaired("Deployment")
	if n, _ := testutil.GatherAndCount(reg, "steward_drift_repaired_total"); n != 1 {
		t.Fatalf("%d series, want 1", n)
	}
	const want = `
# HELP steward_drift_repaired_total Objects StateKeep found changed or deleted and restored, by kind.
# TYPE steward_drift_repaired_total counter
steward_drift_repaired_total{kind="Deployment"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "steward_drift_repaired_total"); err != nil {
		t.Fatal(err)
	}
}

func TestNew_ConflictingCollectorIsAnError(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "steward_tracked_resources", Help: "x"}))
	if _, err := metrics.New(reg); err == nil {
		t.Fatal("want an error for a foreign collector of the same name")
	}
}

func TestStages_RecordDurations(t *testing.T) {
	m, reg := newMetrics(t)
	done := m.StartStage(metrics.StageApply)
	done()
	m.ObserveStage(metrics.StageApply, 2*time.Second)
	m.ObserveStage(metrics.StageGC, time.Millisecond)
	if n, _ := testutil.GatherAndCount(reg, "steward_reconcile_stage_duration_seconds"); n != 2 {
		t.Fatalf("%d stage series, want 2 (apply, gc)", n)
	}
	m.ObserveStateKeepPass(3 * time.Second)
	if n, _ := testutil.GatherAndCount(reg, "steward_statekeep_pass_duration_seconds"); n != 1 {
		t.Fatalf("%d statekeep series, want 1", n)
	}
}

func TestDeleteApp_RemovesOnlyThatAppsSeries(t *testing.T) {
	m, reg := newMetrics(t)
	m.SetTrackedResources("prod", "shop", 5)
	m.SetTrackedResources("prod", "blog", 2)
	m.SetTrackedResources("dev", "shop", 1)
	m.SetTrackerSize("prod", "shop", 2000, 500)
	m.SetTrackerSize("prod", "blog", 100, 100)
	m.DriftRepaired("Deployment")

	m.DeleteApp("prod", "shop")

	const want = `
# HELP steward_tracked_resources Objects recorded in an Application's resource trackers.
# TYPE steward_tracked_resources gauge
steward_tracked_resources{app="blog",namespace="prod"} 2
steward_tracked_resources{app="shop",namespace="dev"} 1
# HELP steward_tracker_size_bytes Size of an Application's resource trackers: the manifests as JSON (raw) and as stored after compression (stored).
# TYPE steward_tracker_size_bytes gauge
steward_tracker_size_bytes{app="blog",encoding="raw",namespace="prod"} 100
steward_tracker_size_bytes{app="blog",encoding="stored",namespace="prod"} 100
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "steward_tracked_resources", "steward_tracker_size_bytes"); err != nil {
		t.Fatal(err)
	}
	if n, _ := testutil.GatherAndCount(reg, "steward_drift_repaired_total"); n != 1 {
		t.Fatalf("DeleteApp removed a global series")
	}
}

func TestObserveRenderCache_CountsHitsAndMisses(t *testing.T) {
	m, reg := newMetrics(t)
	observe := m.ObserveRenderCache // the render.CacheObserver passed to render.WithCacheObserver
	observe("ComponentDefinition", false)
	observe("ComponentDefinition", true)
	observe("ComponentDefinition", true)
	observe("TraitDefinition", true)
	const want = `
# HELP steward_render_cache_lookups_total Lookups of compiled definition templates by definition kind and result (hit, miss); a miss compiles CUE.
# TYPE steward_render_cache_lookups_total counter
steward_render_cache_lookups_total{kind="ComponentDefinition",result="hit"} 2
steward_render_cache_lookups_total{kind="ComponentDefinition",result="miss"} 1
steward_render_cache_lookups_total{kind="TraitDefinition",result="hit"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "steward_render_cache_lookups_total"); err != nil {
		t.Fatal(err)
	}
}

func TestNilMetrics_DoNothing(t *testing.T) {
	var m *metrics.Metrics
	m.ObserveStage(metrics.StageRender, time.Second)
	m.StartStage(metrics.StageStatus)()
	m.ObserveStateKeepPass(time.Second)
	m.SetTrackedResources("a", "b", 1)
	m.SetTrackerSize("a", "b", 1, 1)
	m.DriftRepaired("Deployment")
	m.GCDeleted("Deployment")
	m.ObserveRenderCache("ComponentDefinition", true)
	m.DeleteApp("a", "b")
	rt := http.DefaultTransport
	if m.InstrumentTransport(rt) != rt {
		t.Fatal("nil Metrics wrapped the transport")
	}
}
