package report

import (
	"strings"
	"testing"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// The scale section shows CPU and drift repair when the run measured them.
func TestScale_ReportsCPUAndDrift(t *testing.T) {
	res := &record.Results{Profile: record.FullProfile(), Scale: []record.ScaleResult{{Controller: "steward-watch", Apps: 10000, Resources: 80000,
		ConvergeCPU: record.CPUCost{CPUSeconds: 300}, Steady: record.SteadyWindow{Window: record.Duration(5 * time.Minute),
			CPUCost: record.CPUCost{CPUSeconds: 9, Reconciles: 10000, CPUPerReconcileMs: 0.9}, Cores: 0.03},
		PassCPU: record.CPUCost{CPUSeconds: 200}, Drift: record.FleetDrift{Edits: 1, Deletes: 1, Repairs: []float64{0.1, 0.3}}}}}
	s := scaleSection(res)
	want := "| steward-watch | 300.0 s | 10000 (10000) | 0.90 ms | 0.0300 | 200.0 s | 2 (1, 1) | 100 ms | 300 ms | 300 ms | 300 ms | 0 |"
	if !strings.Contains(s, want) {
		t.Errorf("scale section lacks\n%s\nin\n%s", want, s)
	}
}
