package record

import "time"

// mib is a mebibyte, as the fixtures write heaps.
const mib = 1 << 20

// The fixtures are the results the report's tests render
// (bench/report/report_test.go): every default scenario, with earlier
// runs to merge with.

func fixtureResults() *Results {
	return &Results{
		Profile: QuickProfile(), Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), Elapsed: Duration(3 * time.Minute),
		Host: Host{OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"}, QPS: 100, Burst: 200,
		Controllers: []Controller{{Name: "steward", Command: "bin/steward controller --metrics-addr={metrics-addr}"},
			{Name: "steward-watch", Command: "bin/steward controller --metrics-addr={metrics-addr} --drift-detection=watch"},
			{Name: "owns", Command: "bin/owns --metrics-addr={metrics-addr}"}},
		Memory: []MemoryResult{
			{Controller: "steward", Apps: 20, Resources: 80, Points: []MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, HeapInuseMedian: 12 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 10.2 * mib, HeapInuseMedian: 12 * mib, RSS: 51 * mib}}},
			{Controller: "steward-watch", Apps: 20, Resources: 80, Points: []MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 10.6 * mib, RSS: 51 * mib}}},
			{Controller: "owns", Apps: 20, Resources: 80, Points: []MemoryPoint{
				{Unrelated: 0, HeapInuse: 10 * mib, RSS: 50 * mib},
				{Unrelated: 500, HeapInuse: 15 * mib, RSS: 56 * mib}}},
		},
		Steady: []SteadyResult{
			{Controller: "steward", Apps: 20, Resources: 80, Interval: Duration(10 * time.Second), Window: Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 1, ByVerb: map[string]float64{"GET": 1}, HasSkipped: true,
				Requests: RequestCounts{{Verb: "GET", Resource: "configmaps"}: 80, {Verb: "GET", Group: "apps", Resource: "deployments"}: 80}.List()},
			{Controller: "steward-watch", Apps: 20, Resources: 80, Interval: Duration(10 * time.Second), Window: Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 0.004, ByVerb: map[string]float64{"GET": 0.004}, HasSkipped: true, Skipped: 159, SkippedPerResource: 0.99375,
				Requests: RequestCounts{{Verb: "GET", Group: "apps", Resource: "deployments"}: 1}.List()},
			{Controller: "owns", Apps: 20, Resources: 80, Interval: Duration(10 * time.Second), Window: Duration(20 * time.Second),
				Reconciles: 40, Passes: 40, PerResource: 1.25, ByVerb: map[string]float64{"APPLY": 1, "GET": 0.25}, EventsPerPass: 0.5,
				Requests: RequestCounts{{Verb: "APPLY", Resource: "configmaps"}: 160}.List()},
		},
		Drift: []DriftResult{{Controller: "steward", Interval: Duration(10 * time.Second), Repairs: []float64{1, 9, 5}, Edits: []float64{2, 4, 8}},
			{Controller: "steward-watch", Interval: Duration(10 * time.Second), Repairs: []float64{0.1, 0.3, 0.2}, Edits: []float64{0.1, 2.5, 0.2}},
			{Controller: "owns", Repairs: []float64{0.01, 0.02}}},
		Fleet: []FleetResult{{Controller: "steward", Apps: 100, Resources: 800, QPS: 100, Converged: Duration(12 * time.Second),
			Work: 2000, Bound: Duration(10 * time.Second), BusiestKind: "configmaps", OneLimiterBound: Duration(20 * time.Second),
			Requests: RequestCounts{{Verb: "GET", Resource: "configmaps"}: 2000}.List()},
			{Controller: "steward-watch", Apps: 100, Resources: 800, QPS: 100, Converged: Duration(12600 * time.Millisecond),
				Work: 2000, Bound: Duration(10 * time.Second), BusiestKind: "configmaps", OneLimiterBound: Duration(20 * time.Second)}},
		Managed: []ManagedResult{managedFixture("steward", 1500), managedFixture("steward-watch", 1000), managedFixture("owns", 6000)},
		BigApp: []BigAppResult{{Controller: "steward", Resources: 100, Dispatch: Duration(1500 * time.Millisecond), Requests: 210,
			Trackers: 1, Compression: "zstd", RawBytes: 76000, StoredBytes: 3700},
			{Controller: "owns", Resources: 100, Dispatch: Duration(time.Second), Requests: 300}},
		Soak: []SoakResult{soakFixture("steward", 100, 100), soakFixture("owns", 100, 110)},
		SoakBefore: &SoakReference{Label: "before the fix", Commit: "abc123", Started: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC),
			Soak: []SoakResult{soakFixture("steward", 150, 1150)}},
		Errors: []string{"drift/other: boom"},
	}
}

// managedFixture is a managed scenario whose heap grows by perObject bytes
// per managed object from 8 MiB, at 1,000 and 2,000 objects.
func managedFixture(name string, perObject float64) ManagedResult {
	r := ManagedResult{Controller: name, ResourcesPer: 8}
	for _, n := range []int{0, 1000, 2000} {
		r.Points = append(r.Points, ManagedPoint{Objects: n, Apps: n / 8, HeapInuse: 8*mib + perObject*float64(n), RSS: 40 * mib,
			ForcedGC: true, Ready: Duration(time.Duration(n) * time.Millisecond)})
	}
	return r
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

// withCPU is fixtureResults with CPU measured for steward's fleet and
// soak, as the harness records it now; steward-watch's fleet and owns's
// soak are as recorded before it did.
func withCPU() *Results {
	res := fixtureResults()
	res.Fleet[0].CPUCost = CPUCost{CPUSeconds: 24, ChildCPUSeconds: 6, Reconciles: 1200, CPUPerReconcileMs: 20, Renders: 1000, RenderMeanSeconds: 0.004}
	sk := &res.Soak[0]
	sk.CPUCost = CPUCost{CPUSeconds: 9, ChildCPUSeconds: 4.5, Reconciles: 1800, CPUPerReconcileMs: 5, Renders: 1800, RenderMeanSeconds: 4.6e-6}
	for i := range sk.Points {
		sk.Points[i].Children, sk.Points[i].ChildRSS, sk.Points[i].ChildRSSAnon = 2, 30*mib, 12*mib
	}
	return res
}

func controllerNames(cs []Controller) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
