package harness

import (
	"context"
	"time"
)

// renderStageMetric is Steward's histogram of reconcile stages; its
// stage="render" series times the render, CUE evaluation included.
const renderStageMetric = "steward_reconcile_stage_duration_seconds"

// usage is what a controller has spent since it started: the CPU of its
// process tree and the Application reconciles and renders its /metrics
// counted. A window's cost is the difference of two.
type usage struct {
	cpu                    CPUTime
	reconciles             float64
	renders, renderSeconds float64
}

// usage scrapes /metrics, then reads the process tree's CPU right after.
func (p *Process) usage(ctx context.Context) (usage, error) {
	ss, err := p.Metrics(ctx)
	if err != nil {
		return usage{}, err
	}
	return p.usageAt(ss)
}

// usageAt is usage with /metrics as ss, just scraped.
func (p *Process) usageAt(ss Samples) (usage, error) {
	cpu, err := p.CPU()
	if err != nil {
		return usage{}, err
	}
	render := map[string]string{"stage": "render"}
	return usage{cpu: cpu, reconciles: reconciles(ss),
		renders: ss.Sum(renderStageMetric+"_count", render), renderSeconds: ss.Sum(renderStageMetric+"_sum", render)}, nil
}

// costSince is the cost of the window from base to u; a zero base is the
// controller's start.
func (u usage) costSince(base usage) CPUCost {
	c := CPUCost{
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
