package scenario

import (
	"testing"

	"github.com/steward-oam/steward/bench/record"
)

// The scale and shards scenarios run only when named.
func TestOptions_OptInScenariosRunOnlyWhenNamed(t *testing.T) {
	opts := Options{Controllers: []record.Controller{{Name: "steward", Command: "steward controller"}}, QPS: 1, Burst: 1}
	if opts.runs(record.ScenarioScale) || opts.runs(record.ScenarioShards) || !opts.runs(record.ScenarioFleet) {
		t.Fatal("a run of the default scenarios runs scale or shards, or not fleet")
	}
	opts.Scenarios = []string{record.ScenarioScale}
	if !opts.runs(record.ScenarioScale) || opts.Validate() != nil {
		t.Fatal("scale named but not run")
	}
}
