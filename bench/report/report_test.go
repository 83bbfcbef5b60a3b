package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

func fixtureResults() *record.Results {
	return &record.Results{
		Profile: record.QuickProfile(), Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), Elapsed: record.Duration(3 * time.Minute),
		Host: record.Host{OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"}, QPS: 100, Burst: 200,
		Controllers: []record.Controller{{Name: "steward", Command: "bin/steward controller --metrics-addr={metrics-addr}"},
			{Name: "steward-watch", Command: "bin/steward controller --metrics-addr={metrics-addr} --drift-detection=watch"},
			{Name: "owns", Command: "bin/owns --metrics-addr={metrics-addr}"}},
		Memory: []record.MemoryResult{
			{Controller: "steward", Apps: 20, Resources: 80, Points: []record.MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, HeapInuseMedian: 12 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 10.2 * mib, HeapInuseMedian: 12 * mib, RSS: 51 * mib}}},
			{Controller: "steward-watch", Apps: 20, Resources: 80, Points: []record.MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 10.6 * mib, RSS: 51 * mib}}},
			{Controller: "owns", Apps: 20, Resources: 80, Points: []record.MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 15 * mib, RSS: 56 * mib}}},
		},
		Steady: []record.SteadyResult{
			{Controller: "steward", Apps: 20, Resources: 80, Interval: record.Duration(10 * time.Second), Window: record.Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 1, ByVerb: map[string]float64{"GET": 1}, HasSkipped: true,
				Requests: record.RequestCounts{{Verb: "GET", Resource: "configmaps"}: 80, {Verb: "GET", Group: "apps", Resource: "deployments"}: 80}.List()},
			{Controller: "steward-watch", Apps: 20, Resources: 80, Interval: record.Duration(10 * time.Second), Window: record.Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 0.004, ByVerb: map[string]float64{"GET": 0.004}, HasSkipped: true, Skipped: 159, SkippedPerResource: 0.99375,
				Requests: record.RequestCounts{{Verb: "GET", Group: "apps", Resource: "deployments"}: 1}.List()},
			{Controller: "owns", Apps: 20, Resources: 80, Interval: record.Duration(10 * time.Second), Window: record.Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 1.25, ByVerb: map[string]float64{"APPLY": 1, "GET": 0.25}, EventsPerPass: 0.5,
				Requests: record.RequestCounts{{Verb: "APPLY", Resource: "configmaps"}: 160}.List()},
		},
		Drift: []record.DriftResult{{Controller: "steward", Interval: record.Duration(10 * time.Second), Repairs: []float64{1, 9, 5}, Edits: []float64{2, 4, 8}},
			{Controller: "steward-watch", Interval: record.Duration(10 * time.Second), Repairs: []float64{0.1, 0.3, 0.2}, Edits: []float64{0.1, 2.5, 0.2}},
			{Controller: "owns", Repairs: []float64{0.01, 0.02}}},
		Fleet: []record.FleetResult{{Controller: "steward", Apps: 100, Resources: 800, QPS: 100, Converged: record.Duration(12 * time.Second),
			Work: 2000, Bound: record.Duration(10 * time.Second), BusiestKind: "configmaps", OneLimiterBound: record.Duration(20 * time.Second),
			Requests: record.RequestCounts{{Verb: "GET", Resource: "configmaps"}: 2000}.List()},
			{Controller: "steward-watch", Apps: 100, Resources: 800, QPS: 100, Converged: record.Duration(12600 * time.Millisecond),
				Work: 2000, Bound: record.Duration(10 * time.Second), BusiestKind: "configmaps", OneLimiterBound: record.Duration(20 * time.Second)}},
		Managed: []record.ManagedResult{managedFixture("steward", 1500), managedFixture("steward-watch", 1000), managedFixture("owns", 6000)},
		BigApp: []record.BigAppResult{{Controller: "steward", Resources: 100, Dispatch: record.Duration(1500 * time.Millisecond), Requests: 210,
			Trackers: 1, Compression: "zstd", RawBytes: 76000, StoredBytes: 3700},
			{Controller: "owns", Resources: 100, Dispatch: record.Duration(time.Second), Requests: 300}},
		Soak: []record.SoakResult{soakFixture("steward", 100, 100), soakFixture("owns", 100, 110)},
		SoakBefore: &record.SoakReference{Label: "before the fix", Commit: "abc123", Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC),
			Soak: []record.SoakResult{soakFixture("steward", 150, 1150)}},
		Errors: []string{"drift/other: boom"},
	}
}

// managedFixture is a managed scenario whose heap grows by perObject bytes
// per managed object from 8 MiB, at 1,000 and 2,000 objects.
func managedFixture(name string, perObject float64) record.ManagedResult {
	r := record.ManagedResult{Controller: name, ResourcesPer: 8}
	for _, n := range []int{0, 1000, 2000} {
		r.Points = append(r.Points, record.ManagedPoint{Objects: n, Apps: n / 8, HeapInuse: 8*mib + perObject*float64(n), RSS: 40 * mib,
			ForcedGC: true, Ready: record.Duration(time.Duration(n) * time.Millisecond)})
	}
	return r
}

// soakFixture is a three-minute soak whose heap goes linearly from
// minute 2 (at2 MiB) to minute 3 (at3 MiB), with 600 reconciles a minute.
func soakFixture(name string, at2, at3 float64) record.SoakResult {
	r := record.SoakResult{Controller: name, Apps: 30, Interval: record.Duration(10 * time.Second), Duration: record.Duration(3 * time.Minute)}
	for m, heap := range []float64{20, 50, at2, at3} {
		r.Points = append(r.Points, record.SoakPoint{Minute: float64(m), HeapInuse: heap * mib, HeapAlloc: heap * mib * 0.9,
			RSS: (heap + 40) * mib, Reconciles: float64(600 * m)})
	}
	return r
}

func TestWriteReport_WritesTablesChartsAndTargets(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "docs", "benchmarks.md")
	img := filepath.Join(dir, "docs", "img")
	if err := os.MkdirAll(filepath.Dir(md), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(fixtureResults(), md, img, "bench/results/latest.json"); err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	data, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{
		"## Summary", "| Target | issue | steward | steward-watch | owns | met |",
		"| heap in use (after GC) grows < 5% from 0 to 500 unrelated Deployments | 7, 12 | +2.0% | +6.0% | +50.0% | steward: yes, steward-watch: **no** |",
		"| API requests per tracked resource per steady-state pass: ≤ 1 in timer mode, 0 in watch mode | 7, 12 | 1.00 | 0.00 | 1.25 | steward: yes, steward-watch: yes |",
		"| 0 event writes per steady-state pass | 7 | 0.00 | 0.00 | 0.50 | steward: yes, steward-watch: yes |",
		"| drift repair of a deleted Deployment: median < 1.00 s and max < 2.00 s in watch mode (median / max) | 12 | 5.00 s / 9.00 s | 0.20 s / 0.30 s | 0.01 s / 0.02 s | steward-watch: yes |",
		"| drift repair of an edited Deployment (spec.replicas): median < 1.00 s and max < 2.00 s in watch mode (median / max) | 12 | 4.00 s / 8.00 s | 0.20 s / 2.50 s | – | steward-watch: **no** |",
		"| fleet of 100 apps ready within 1.3× of the client-QPS bound | 7 | 1.20× (12.0 s vs 10.0 s) | 1.26× (12.6 s vs 10.0 s) | – | steward: yes |",
		"| fleet of 100 apps: watch mode ready no later than timer mode (10% allowed for noise) | 12 | 12.0 s (1.00× timer) | 12.6 s (1.05× timer) | – | steward-watch: yes |",
		"| heap in use per managed object < 2.0 KiB in watch mode: growth per object added from 1,000 to 2,000 managed objects (in brackets: heap beyond the empty controller per object at 2,000) | 12 | 1.5 KiB (1.5 KiB) | 1000 B (1000 B) | 5.9 KiB (5.9 KiB) | steward-watch: yes |",
		"| soak: heap in use after GC at minute 3 within 5% of minute 2 (30 apps, re-sync 10.0 s) | 10 | +0.0% | – | +10.0% | steward: yes |",
		"**steward-watch** is watch mode (`--drift-detection=watch`", "**steward** is timer mode (`--drift-detection=timer`)",
		"| steward-watch | 40 (40) | 1 | 0.00 | GET <0.01 | 0.00 | 0.99 |", "| owns | 40 (40) | 160 | 1.25 | GET 0.25, APPLY 1.00 | 0.50 | – |",
		"| steward | delete | 3 | 1.00 s | 5.00 s | 5.00 s | 9.00 s |", "| steward | edit | 3 | 2.00 s | 4.00 s | 4.67 s | 8.00 s |",
		"| steward-watch | edit | 3 | 0.10 s | 0.20 s | 0.93 s | 2.50 s |", "| owns | delete | 2 | 0.01 s | 0.01 s | 0.01 s | 0.02 s |",
		"## Heap per managed object", "manages 1,000 and 2,000 objects",
		"| steward-watch | 0 | 0 | – | 8.0 MiB | – | – | 40.0 MiB |",
		"| steward-watch | 2,000 | 250 | 2.00 s | 9.9 MiB | 1000 B | 1000 B | 40.0 MiB |",
		"| owns | 1,000 | 125 | 1.00 s | 13.7 MiB | 5.9 KiB | 5.9 KiB | 40.0 MiB |", "](img/bench-managed.png)",
		"## Memory vs unrelated objects", "![Heap in use and RSS against unrelated Deployments](img/bench-memory.png)",
		"`GET deployments.apps`", "10.0 s (configmaps)",
		"| steward | 1.50 s | 210 | 1 | zstd | 74.2 KiB | 3.6 KiB |", "| owns | 1.00 s | 300 | 0 | – | – | – |",
		"drift/other: boom", "](img/bench-requests.png)",
		"| steward | 100.0 MiB | 100.0 MiB (minute 3) | +0.0% | 600 | 0 B | 140.0 MiB |",
		"| owns | 100.0 MiB | 110.0 MiB (minute 3) | +10.0% | 600 | 17.1 KiB | 150.0 MiB |",
		"| 2 | 100.0 MiB | 140.0 MiB | 1200 | 100.0 MiB | 140.0 MiB | 1200 |",
		"### Before: before the fix", "| steward | 150.0 MiB | 1150.0 MiB (minute 3) | +666.7% | 600 | 1.67 MiB | 1190.0 MiB |",
		"](img/bench-soak.png)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, name := range []string{MemoryChart, RequestsChart, SoakChart, ManagedChart} {
		png, err := os.ReadFile(filepath.Join(img, name))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("chart %s is not a PNG: %v", name, err)
		}
	}
}

func TestThousands(t *testing.T) {
	if thousands(6000) != "6,000" || thousands(100) != "100" || thousands(1234567) != "1,234,567" {
		t.Errorf("thousands is wrong")
	}
}

// The report says which earlier run each kept scenario comes from.
func TestReport_NamesTheRunsKeptScenariosComeFrom(t *testing.T) {
	older := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	prev := fixtureResults()
	prev.Host.Commit, prev.Note = "mid", "soak after the fix"
	prev.Earlier = []record.EarlierRun{{Scenarios: []string{record.ScenarioBigApp, record.ScenarioDrift}, Profile: "full", Started: older, Commit: "old"}}
	cur := &record.Results{Profile: record.FullProfile(), Host: record.Host{Commit: "new"}}
	got := record.Merge(prev, cur, []string{record.ScenarioMemory, record.ScenarioSteady, record.ScenarioDrift, record.ScenarioFleet, record.ScenarioManaged})
	page := renderReport(got, "img", "latest.json", nil)
	for _, want := range []string{"The bigapp results come from an earlier run (profile **full**, 2026-11-01 00:00 UTC, commit old)",
		"The soak results come from an earlier run (profile **quick**, 2026-11-30 08:00 UTC, commit mid; its note: soak after the fix)"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestSubjects_TimerAndWatchMode(t *testing.T) {
	res := &record.Results{Controllers: []record.Controller{{Name: "w", Command: "steward controller --drift-detection watch"},
		{Name: "t", Command: "steward controller"}, {Name: "w2", Command: "steward controller " + record.WatchModeFlag}}}
	if timer, wm := subjects(res); timer != "t" || wm != "w" {
		t.Errorf("subjects = %q %q, want t w", timer, wm)
	}
	if timer, wm := subjects(&record.Results{Controllers: []record.Controller{{Name: "a", Command: "x"}}}); timer != "a" || wm != "" {
		t.Errorf("subjects = %q %q, want a and none", timer, wm)
	}
}

func TestSummary_WithoutWatchModeChecksTimerTargetsOnly(t *testing.T) {
	res := fixtureResults()
	res.Controllers = slices.DeleteFunc(res.Controllers, record.Controller.IsWatchMode)
	page := summarySection(res)
	for _, want := range []string{"| Target | issue | steward | owns | met |",
		"| drift repair of a deleted Deployment: median < 1.00 s and max < 2.00 s in watch mode (median / max) | 12 | 5.00 s / 9.00 s | 0.01 s / 0.02 s | – |"} {
		if !strings.Contains(page, want) {
			t.Errorf("summary lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "watch mode ready no later") {
		t.Errorf("summary compares fleets without a watch-mode controller")
	}
}

func TestDriftSection_OlderResultsWithoutEdits(t *testing.T) {
	res := fixtureResults()
	res.Profile.Drift.Edits = 0
	for i := range res.Drift {
		res.Drift[i].Edits = nil
	}
	page := driftSection(res)
	if strings.Contains(page, "| edit |") || strings.Contains(page, "*Edit*") || !strings.Contains(page, "| steward | delete | 3 |") {
		t.Errorf("drift section of results without edits:\n%s", page)
	}
}

// The scale scenario's results kept from an earlier run are reported.
func TestScale_KeptResultsAreReported(t *testing.T) {
	prev := fixtureResults()
	prev.Scale = []record.ScaleResult{{Controller: "steward", Apps: 10000, Resources: 80000, QPS: 400, Burst: 600,
		Converged: record.Duration(300 * time.Second), Requests: 130000, Settled: record.MemoryPoint{HeapInuse: 512 * mib, RSS: 700 * mib},
		Pass: record.Duration(120 * time.Second), PassRequests: 80000, PassBound: record.Duration(100 * time.Second), PassBusiestKind: "configmaps",
		PassPeakHeap: 600 * mib, PassPeakRSS: 800 * mib}}
	got := record.Merge(prev, &record.Results{Profile: record.FullProfile(), Controllers: []record.Controller{{Name: "steward", Command: "new"}, {Name: "extra"}}}, record.AllScenarios)
	md := renderReport(got, "img", "latest.json", nil)
	for _, want := range []string{"## Scale", "10,000 Applications of\n8 objects each (80,000 objects)",
		"| steward | 10,000 | 300.0 s | 1.62 | 512.0 MiB | 52.4 KiB | 700.0 MiB | 120.0 s | 100.0 s (configmaps) | 1.20× | 600.0 MiB | 800.0 MiB |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The shards scenario's results kept from an earlier run show each
// replica against one controller.
func TestShards_KeptResultsAreReported(t *testing.T) {
	prev := fixtureResults()
	prev.Shards = []record.ShardsResult{{Controller: "steward", Apps: 1000, Resources: 8000, Shards: 2,
		SingleConverged: record.Duration(60 * time.Second), Single: record.MemoryPoint{HeapInuse: 30 * mib, RSS: 90 * mib},
		ShardedConverged: record.Duration(50 * time.Second), Replicas: []record.ReplicaResult{
			{Shard: "master", Apps: 500, Memory: record.MemoryPoint{HeapInuse: 15 * mib, RSS: 60 * mib}},
			{Shard: "shard-1", Apps: 500, Memory: record.MemoryPoint{HeapInuse: 12 * mib, RSS: 55 * mib}}}}}
	got := record.Merge(prev, &record.Results{Profile: record.FullProfile(), Controllers: prev.Controllers}, record.AllScenarios)
	md := renderReport(got, "img", "latest.json", nil)
	for _, want := range []string{"## Shards", "| steward | one controller | 1,000 | 60.0 s | 30.0 MiB | 1.00 | 90.0 MiB |",
		"| steward | shard master | 500 | 50.0 s | 15.0 MiB | 0.50 | 60.0 MiB |", "| steward | shard shard-1 | 500 | 50.0 s | 12.0 MiB | 0.40 | 55.0 MiB |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A fleet kept from an earlier run is labelled with the burst it ran at,
// not with the burst of the run that kept it.
func TestFleetSection_NamesTheFleetsOwnBurst(t *testing.T) {
	res := &record.Results{Burst: 600, Fleet: []record.FleetResult{{Controller: "steward", Apps: 100, Resources: 800, QPS: 100, Burst: 200}}}
	if got := fleetSection(res); !strings.Contains(got, "QPS 100, burst 200") {
		t.Fatalf("fleet section:\n%s", got)
	}
	res.Fleet[0].Burst = 0
	if got := fleetSection(res); !strings.Contains(got, "QPS 100, burst 600") {
		t.Fatalf("a fleet recorded without its burst takes the run's:\n%s", got)
	}
}

// withCPU is fixtureResults with CPU measured for steward's fleet and
// soak, as the harness records it now; steward-watch's fleet and owns's
// soak are as recorded before it did.
func withCPU() *record.Results {
	res := fixtureResults()
	res.Fleet[0].CPUCost = record.CPUCost{CPUSeconds: 24, ChildCPUSeconds: 6, Reconciles: 1200, CPUPerReconcileMs: 20, Renders: 1000, RenderMeanSeconds: 0.004}
	sk := &res.Soak[0]
	sk.CPUCost = record.CPUCost{CPUSeconds: 9, ChildCPUSeconds: 4.5, Reconciles: 1800, CPUPerReconcileMs: 5, Renders: 1800, RenderMeanSeconds: 4.6e-6}
	for i := range sk.Points {
		sk.Points[i].Children, sk.Points[i].ChildRSS, sk.Points[i].ChildRSSAnon = 2, 30*mib, 12*mib
	}
	return res
}

func TestReport_CPUPerReconcileAndChildRSS(t *testing.T) {
	page := renderReport(withCPU(), "img", "latest.json", nil)
	for _, want := range []string{
		"| controller | CPU | reconciles | CPU per reconcile | in child processes | renders | render, mean |",
		"| steward | 24.0 s | 1200 | 20.00 ms | 25% | 1000 | 4.00 ms |",
		"| steward-watch | – | – | – | – | – | – |",
		"| controller | heap after GC, minute 2 | last minute | growth | reconciles in between | per reconcile | RSS, last minute | children RSS, last minute | CPU per reconcile | in child processes | render, mean |",
		"| steward | 100.0 MiB | 100.0 MiB (minute 3) | +0.0% | 600 | 0 B | 140.0 MiB | 30.0 MiB (anon 12.0 MiB) | 5.00 ms | 50% | 4.6 µs |",
		"| owns | 100.0 MiB | 110.0 MiB (minute 3) | +10.0% | 600 | 17.1 KiB | 150.0 MiB | – | – | – | – |",
		"| minute | steward heap after GC | steward RSS | steward children RSS | steward reconciles | owns heap after GC | owns RSS | owns children RSS | owns reconciles |",
		"| 2 | 100.0 MiB | 140.0 MiB | 30.0 MiB (anon 12.0 MiB) | 1200 | 100.0 MiB | 140.0 MiB | – | 1200 |",
		// The reference soak was recorded without: its tables are as before.
		"| steward | 150.0 MiB | 1150.0 MiB (minute 3) | +666.7% | 600 | 1.67 MiB | 1190.0 MiB |\n",
		"| minute | steward heap after GC | steward RSS | steward reconciles |\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The steady table shows each controller's CPU when it was measured.
func TestReport_SteadyShowsCPU(t *testing.T) {
	res := fixtureResults()
	res.Steady[0].CPU, res.Steady[0].Cores = record.CPUCost{CPUSeconds: 0.1, Reconciles: 40, CPUPerReconcileMs: 2.5}, 0.005
	page := steadySection(res, "img", nil)
	for _, want := range []string{"| event writes per pass | CPU per reconcile | cores |", "| 2.50 ms | 0.0050 |", "| 0.00 | – | – |"} {
		if !strings.Contains(page, want) {
			t.Errorf("steady section lacks %q:\n%s", want, page)
		}
	}
}

// Results recorded before the harness measured CPU (kept by --merge, or
// soak-before.json) render as they did: no CPU table, no children columns.
func TestReport_ResultsWithoutCPURenderAsBefore(t *testing.T) {
	page := renderReport(fixtureResults(), "img", "latest.json", nil)
	for _, absent := range []string{"CPU per reconcile", "children RSS", "| controller | CPU |"} {
		if strings.Contains(page, absent) {
			t.Errorf("report of results without CPU has %q", absent)
		}
	}
	if !strings.Contains(page, "| steward | 100.0 MiB | 100.0 MiB (minute 3) | +0.0% | 600 | 0 B | 140.0 MiB |\n") {
		t.Errorf("soak table changed for results without CPU:\n%s", soakSection(fixtureResults(), "img", nil))
	}
}

// Every scenario's CPU, per controller, is one table row.
func TestReport_CPUByScenario(t *testing.T) {
	res := fixtureResults()
	res.CPU = []record.ScenarioCPU{
		{Scenario: record.ScenarioSteady, Controller: "steward", CPUCost: record.CPUCost{CPUSeconds: 2, ChildCPUSeconds: 0.5, Reconciles: 400, CPUPerReconcileMs: 5,
			Renders: 20, RenderMeanSeconds: 0.004}, Seconds: 40, Cores: 0.05},
		{Scenario: record.ScenarioDrift, Controller: "owns", CPUCost: record.CPUCost{CPUSeconds: 1.5}},
	}
	page := renderReport(res, "img", "latest.json", nil)
	for _, want := range []string{"## CPU by scenario", "| steady | steward | 2.00 s | 400 | 5.00 ms | 25% | 20 | 4.00 ms | 40.0 s | 0.050 |",
		"| drift | owns | 1.50 s | 0 | – | 0% | – | – | 0.00 s | 0.000 |"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(renderReport(fixtureResults(), "img", "latest.json", nil), "## CPU by scenario") {
		t.Error("a run without CPU has the CPU section")
	}
	dir := t.TempDir()
	if err := Write(res, filepath.Join(dir, "benchmarks.md"), filepath.Join(dir, "img"), "latest.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "img", CPUChart)); err != nil {
		t.Errorf("no CPU chart: %v", err)
	}
}

// A soak that ended with a heap profile says where its heap lay; one
// recorded before the harness read it says nothing.
func TestSoakSection_TopInUseHeapByPackage(t *testing.T) {
	res := fixtureResults()
	res.Soak[0].HeapProfile = "bench/results/logs/20261207T000000Z/soak-steward-heap.pprof"
	res.Soak[0].HeapByPackage = []record.HeapPackage{
		{Package: "k8s.io/client-go/tools/cache", Bytes: 3 * mib, Share: 0.5},
		{Package: "cuelang.org/go/internal/core/adt", Bytes: 2 * mib, Share: 1.0 / 3},
		{Package: "other packages", Bytes: 1 * mib, Share: 1.0 / 6},
	}
	page := soakSection(res, "img", nil)
	want := "- **steward**, 6.0 MiB in the profile (`soak-steward-heap.pprof`): top in-use heap by package: " +
		"3.0 MiB k8s.io/client-go/tools/cache (50%), 2.0 MiB cuelang.org/go/internal/core/adt (33%), 1.0 MiB other packages (17%)\n"
	if !strings.Contains(page, want) {
		t.Errorf("soak section lacks %q:\n%s", want, page)
	}
	if strings.Contains(page, "**owns**") {
		t.Errorf("a soak without a heap profile has a heap line:\n%s", page)
	}
}
