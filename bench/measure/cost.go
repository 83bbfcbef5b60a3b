package measure

import (
	"context"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// renderStageMetric is Steward's histogram of reconcile stages; its
// stage="render" series times the render, CUE evaluation included.
const renderStageMetric = "steward_reconcile_stage_duration_seconds"

// ReconcileMetric counts reconciles in every controller-runtime
// controller; "application" is the controller name of Steward, KubeVela
// and the baseline.
const ReconcileMetric = "controller_runtime_reconcile_total"

// Reconciles sums the application controller's reconciles, or every
// controller's when none is named application.
func Reconciles(ss Samples) float64 {
	if n := ss.Sum(ReconcileMetric, map[string]string{"controller": "application"}); n > 0 {
		return n
	}
	return ss.Sum(ReconcileMetric, nil)
}

// Usage is what a controller has spent since it started: the CPU of its
// process tree and the Application reconciles and renders its /metrics
// counted. A window's cost is the difference of two (CostSince); the zero
// Usage is the controller's start.
type Usage struct {
	cpu                    CPUTime
	reconciles             float64
	renders, renderSeconds float64
}

// Usage scrapes /metrics, then reads the process tree's CPU right after.
func (p *Process) Usage(ctx context.Context) (Usage, error) {
	ss, err := p.Metrics(ctx)
	if err != nil {
		return Usage{}, err
	}
	return p.UsageAt(ss)
}

// UsageAt is Usage with /metrics as ss, just scraped.
func (p *Process) UsageAt(ss Samples) (Usage, error) {
	cpu, err := p.CPU()
	if err != nil {
		return Usage{}, err
	}
	render := map[string]string{"stage": "render"}
	return Usage{cpu: cpu, reconciles: Reconciles(ss),
		renders: ss.Sum(renderStageMetric+"_count", render), renderSeconds: ss.Sum(renderStageMetric+"_sum", render)}, nil
}

// CostSince is the cost of the window from base to u; a zero base is the
// controller's start.
func (u Usage) CostSince(base Usage) record.CPUCost {
	c := record.CPUCost{
		CPUSeconds:      (u.cpu.Total - base.cpu.Total).Seconds(),
		ChildCPUSeconds: (u.cpu.Descendants - base.cpu.Descendants).Seconds(),
		Reconciles:      u.reconciles - base.reconciles,
		Renders:         u.renders - base.renders,
	}
	if c.Reconciles > 0 {
		c.CPUPerReconcileMs = c.CPUSeconds / c.Reconciles * float64(time.Second/time.Millisecond)
	}
	if c.Renders > 0 {
		c.RenderMeanSeconds = (u.renderSeconds - base.renderSeconds) / c.Renders
	}
	return c
}
