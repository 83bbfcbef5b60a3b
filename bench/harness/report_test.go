package harness

import (
	"bytes"
	"os"
	"path/filepath"
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
		Errors: []string{"drift/other: boom"},
	}
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
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, name := range []string{MemoryChart, RequestsChart} {
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
