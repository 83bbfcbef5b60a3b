package scenario

import (
	"testing"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// A scenario's CPU is spread over the process's lifetime; a process that
// did not run a measurable time used no cores.
func TestScenarioCPU_CoresOverTheLifetime(t *testing.T) {
	c := scenarioCPU(record.ScenarioSteady, "steward", record.CPUCost{CPUSeconds: 2, Reconciles: 400}, 40*time.Second)
	if c.Scenario != record.ScenarioSteady || c.Controller != "steward" || c.Seconds != 40 || c.Cores != 0.05 || c.Reconciles != 400 {
		t.Errorf("scenarioCPU = %+v", c)
	}
	if c := scenarioCPU(record.ScenarioDrift, "owns", record.CPUCost{CPUSeconds: 1.5}, 0); c.Seconds != 0 || c.Cores != 0 {
		t.Errorf("scenarioCPU of no lifetime = %+v", c)
	}
}
