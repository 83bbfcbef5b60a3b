package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func fixtureResults() *Results {
	return &Results{
		Profile: QuickProfile(), Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), Elapsed: Duration(3 * time.Minute),
		Host: Host{OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"}, QPS: 100, Burst: 200,
		Controllers: []Controller{{Name: "steward", Command: "bin/steward controller --metrics-addr={metrics-addr}"},
			{Name: "owns", Command: "bin/owns --metrics-addr={metrics-addr}"}},
		Memory: []MemoryResult{
			{Controller: "steward", Apps: 20, Resources: 80, Points: []MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, HeapInuseMedian: 12 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 10.2 * mib, HeapInuseMedian: 12 * mib, RSS: 51 * mib}}},
			{Controller: "owns", Apps: 20, Resources: 80, Points: []MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 15 * mib, RSS: 56 * mib}}},
		},
		Steady: []SteadyResult{
			{Controller: "steward", Apps: 20, Resources: 80, Interval: Duration(10 * time.Second), Window: Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 1, ByVerb: map[string]float64{"GET": 1},
				Requests: RequestCounts{{Verb: "GET", Resource: "configmaps"}: 80, {Verb: "GET", Group: "apps", Resource: "deployments"}: 80}.List()},
			{Controller: "owns", Apps: 20, Resources: 80, Interval: Duration(10 * time.Second), Window: Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 1.25, ByVerb: map[string]float64{"APPLY": 1, "GET": 0.25}, EventsPerPass: 0.5,
				Requests: RequestCounts{{Verb: "APPLY", Resource: "configmaps"}: 160}.List()},
		},
		Drift: []DriftResult{{Controller: "steward", Interval: Duration(10 * time.Second), Repairs: []float64{1, 9, 5}},
			{Controller: "owns", Repairs: []float64{0.01, 0.02}}},
		Fleet: []FleetResult{{Controller: "steward", Apps: 100, Resources: 800, QPS: 100, Converged: Duration(12 * time.Second),
			Work: 2000, Bound: Duration(10 * time.Second), BusiestKind: "configmaps", OneLimiterBound: Duration(20 * time.Second),
			Requests: RequestCounts{{Verb: "GET", Resource: "configmaps"}: 2000}.List()}},
		BigApp: []BigAppResult{{Controller: "steward", Resources: 100, Dispatch: Duration(1500 * time.Millisecond), Requests: 210,
			Trackers: 1, Compression: "zstd", RawBytes: 76000, StoredBytes: 3700},
			{Controller: "owns", Resources: 100, Dispatch: Duration(time.Second), Requests: 300}},
		Soak: []SoakResult{soakFixture("steward", 100, 100), soakFixture("owns", 100, 110)},
		SoakBefore: &SoakReference{Label: "before the fix", Commit: "abc123", Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC),
			Soak: []SoakResult{soakFixture("steward", 150, 1150)}},
		Errors: []string{"drift/other: boom"},
	}
}

// soakFixture is a three-minute soak whose heap goes linearly from
// minute 2 (at2 MiB) to minute 3 (at3 MiB), with 600 reconciles a minute.
func soakFixture(name string, at2, at3 float64) SoakResult {
	r := SoakResult{Controller: name, Apps: 30, Interval: Duration(10 * time.Second), Duration: Duration(3 * time.Minute)}
	for m, heap := range []float64{20, 50, at2, at3} {
		r.Points = append(r.Points, SoakPoint{Minute: float64(m), HeapInuse: heap * mib, HeapAlloc: heap * mib * 0.9,
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
	if err := WriteReport(fixtureResults(), md, img, "bench/results/latest.json"); err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	data, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{
		"## Summary", "| heap in use (after GC) grows < 5% from 0 to 500 unrelated Deployments | +2.0% | +50.0% | yes |",
		"| ≤ 1 API request per tracked resource per steady-state pass | 1.00 | 1.25 | yes |",
		"| 0 event writes per steady-state pass | 0.00 | 0.50 | yes |",
		"1.20× (12.0 s vs 10.0 s)", "## Memory vs unrelated objects", "![Heap in use and RSS against unrelated Deployments](img/bench-memory.png)",
		"`GET deployments.apps`", "| steward | 3 | 1.00 s | 5.00 s | 5.00 s | 9.00 s |", "10.0 s (configmaps)",
		"| steward | 1.50 s | 210 | 1 | zstd | 74.2 KiB | 3.6 KiB |", "| owns | 1.00 s | 300 | 0 | – | – | – |",
		"drift/other: boom", "](img/bench-requests.png)",
		"| soak: heap in use after GC at minute 3 within 5% of minute 2 (30 apps, re-sync 10.0 s) | +0.0% | +10.0% | yes |",
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
	for _, name := range []string{MemoryChart, RequestsChart, SoakChart} {
		png, err := os.ReadFile(filepath.Join(img, name))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("chart %s is not a PNG: %v", name, err)
		}
	}
}

func TestResults_RoundTripThroughJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	want := fixtureResults()
	if err := want.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fleet[0].Converged != want.Fleet[0].Converged || got.Profile.Steady.Interval != want.Profile.Steady.Interval ||
		len(got.Steady[0].Requests) != 2 || got.Memory[1].Growth() != want.Memory[1].Growth() {
		t.Errorf("round trip changed the results: %+v", got)
	}
}

func TestStats_MinMedianMeanMax(t *testing.T) {
	lo, med, mean, hi := stats([]float64{4, 1, 3, 2})
	if lo != 1 || med != 2.5 || mean != 2.5 || hi != 4 {
		t.Errorf("stats = %v %v %v %v", lo, med, mean, hi)
	}
	if thousands(6000) != "6,000" || thousands(100) != "100" || thousands(1234567) != "1,234,567" {
		t.Errorf("thousands is wrong")
	}
}

func TestMerge_KeepsTheScenariosARunSkipped(t *testing.T) {
	prev := fixtureResults()
	prev.Host.Commit = "old"
	cur := &Results{Profile: FullProfile(), Host: Host{Commit: "new"}, Soak: []SoakResult{soakFixture("steward", 1, 1)}}
	got := Merge(prev, cur, []string{ScenarioSoak})
	if len(got.Soak) != 1 || got.Soak[0].Points[2].HeapInuse != mib || len(got.Steady) != 2 || len(got.Fleet) != 1 ||
		got.Profile.Steady != prev.Profile.Steady || got.Profile.Soak != FullProfile().Soak {
		t.Errorf("Merge = %+v", got)
	}
	if len(got.Earlier) != 1 || got.Earlier[0].Commit != "old" || slices.Contains(got.Earlier[0].Scenarios, ScenarioSoak) ||
		!slices.Contains(got.Earlier[0].Scenarios, ScenarioSteady) {
		t.Errorf("Earlier = %+v", got.Earlier)
	}
	if all := Merge(prev, cur, nil); all != cur {
		t.Errorf("a run of every scenario kept something")
	}
}
