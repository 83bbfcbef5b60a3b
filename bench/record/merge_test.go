package record

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMerge_KeepsTheScenariosARunSkipped(t *testing.T) {
	prev := fixtureResults()
	prev.Host.Commit = "old"
	cur := &Results{Profile: FullProfile(), Host: Host{Commit: "new"}, Soak: []SoakResult{soakFixture("steward", 1, 1)}}
	got := Merge(prev, cur, []string{ScenarioSoak})
	if len(got.Soak) != 1 || got.Soak[0].Points[2].HeapInuse != mib || len(got.Steady) != 3 || len(got.Fleet) != 2 || len(got.Managed) != 3 ||
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

func TestMerge_AttributesKeptScenariosToTheRunTheyCameFrom(t *testing.T) {
	older := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	prev := fixtureResults()
	prev.Host.Commit, prev.Note = "mid", "soak after the fix"
	prev.Earlier = []EarlierRun{{Scenarios: []string{ScenarioBigApp, ScenarioDrift}, Profile: "full", Started: older, Commit: "old"}}
	cur := &Results{Profile: FullProfile(), Host: Host{Commit: "new"}}
	got := Merge(prev, cur, []string{ScenarioMemory, ScenarioSteady, ScenarioDrift, ScenarioFleet, ScenarioManaged})
	if len(got.Earlier) != 2 {
		t.Fatalf("Earlier = %+v, want the older run (bigapp) and prev (soak)", got.Earlier)
	}
	if e := got.Earlier[0]; e.Commit != "old" || !slices.Equal(e.Scenarios, []string{ScenarioBigApp}) {
		t.Errorf("older run = %+v, want bigapp only", e)
	}
	if e := got.Earlier[1]; e.Commit != "mid" || !slices.Equal(e.Scenarios, []string{ScenarioSoak}) || e.Note != "soak after the fix" {
		t.Errorf("previous run = %+v, want soak only, with its note", e)
	}
	if len(got.BigApp) != 2 || len(got.Soak) != 2 || got.Managed != nil || got.Drift != nil {
		t.Errorf("Merge kept the wrong scenarios: bigapp %d, soak %d, managed %d, drift %d", len(got.BigApp), len(got.Soak), len(got.Managed), len(got.Drift))
	}
}

// The opt-in scenarios survive a run of the default scenarios, and the
// controllers are those of both runs: the previous ones, as this run ran
// them, then the new.
func TestMerge_KeepsTheOptInScenariosOfARunOfTheDefaults(t *testing.T) {
	prev := fixtureResults()
	prev.Scale = []ScaleResult{{Controller: "steward", Apps: 10000, Resources: 80000, QPS: 400, Burst: 600,
		Converged: Duration(300 * time.Second), Requests: 130000, Settled: MemoryPoint{HeapInuse: 512 * mib, RSS: 700 * mib},
		Pass: Duration(120 * time.Second), PassRequests: 80000, PassBound: Duration(100 * time.Second), PassBusiestKind: "configmaps",
		PassPeakHeap: 600 * mib, PassPeakRSS: 800 * mib}}
	got := Merge(prev, &Results{Profile: FullProfile(), Controllers: []Controller{{Name: "steward", Command: "new"}, {Name: "extra"}}}, AllScenarios)
	if len(got.Scale) != 1 {
		t.Fatal("a run of the default scenarios dropped the scale results")
	}
	if names := controllerNames(got.Controllers); !slices.Equal(names, append(controllerNames(prev.Controllers), "extra")) ||
		got.Controllers[0].Command != "new" {
		t.Errorf("controllers %+v: want the previous ones, as this run ran them, then the new", got.Controllers)
	}

	prev = fixtureResults()
	prev.Shards = []ShardsResult{{Controller: "steward", Apps: 1000, Resources: 8000, Shards: 2,
		SingleConverged: Duration(60 * time.Second), Single: MemoryPoint{HeapInuse: 30 * mib, RSS: 90 * mib},
		ShardedConverged: Duration(50 * time.Second), Replicas: []ReplicaResult{
			{Shard: "master", Apps: 500, Memory: MemoryPoint{HeapInuse: 15 * mib, RSS: 60 * mib}},
			{Shard: "shard-1", Apps: 500, Memory: MemoryPoint{HeapInuse: 12 * mib, RSS: 55 * mib}}}}}
	got = Merge(prev, &Results{Profile: FullProfile(), Controllers: prev.Controllers}, AllScenarios)
	if len(got.Shards) != 1 {
		t.Fatal("a run of the default scenarios dropped the shards results")
	}
}

// Merging keeps the CPU of the scenarios kept and replaces that of those run.
func TestMerge_KeepsTheCPUOfKeptScenarios(t *testing.T) {
	prev := &Results{Steady: []SteadyResult{{Controller: "steward"}}, Drift: []DriftResult{{Controller: "steward"}},
		CPU: []ScenarioCPU{{Scenario: ScenarioSteady, Controller: "steward"}, {Scenario: ScenarioDrift, Controller: "steward"}}}
	cur := &Results{Drift: []DriftResult{{Controller: "steward"}}, CPU: []ScenarioCPU{{Scenario: ScenarioDrift, Controller: "new"}}}
	got := Merge(prev, cur, []string{ScenarioDrift})
	var names []string
	for _, c := range got.CPU {
		names = append(names, c.Scenario+"/"+c.Controller)
	}
	if strings.Join(names, ",") != "drift/new,steady/steward" {
		t.Errorf("merged CPU = %v", names)
	}
}
