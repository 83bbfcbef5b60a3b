package scenario

import (
	"context"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// skippedMetric counts the objects a Steward pass in watch mode neither
// read nor patched because the watch cache showed them unchanged.
const skippedMetric = "steward_statekeep_skipped_total"

// steadySettle lets the requests of the initial dispatch drain before
// the window opens.
const steadySettle = 3 * time.Second

// steady counts the requests and event writes of the re-sync passes of
// apps that are already delivered and unchanged.
func (r *runner) steady(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Steady
	shape := ShapeOf(cfg.ResourcesPer)
	ann := map[string]string{v1beta1.AnnotationReconcileInterval: cfg.Interval.D().String()}
	if err := CreateApplications(ctx, s.cp.Client, benchNamespace, cfg.Apps, shape, ann); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if _, err := WaitReady(ctx, s.cp.Client, benchNamespace, cfg.Apps, 5*time.Minute); err != nil {
		return err
	}
	if err := sleep(ctx, steadySettle); err != nil {
		return err
	}

	base, err := s.cp.Requests(ctx)
	if err != nil {
		return err
	}
	ownBase := s.cp.Own.Snapshot()
	before, err := s.proc.Metrics(ctx)
	if err != nil {
		return err
	}
	usedBefore, err := s.proc.UsageAt(before)
	if err != nil {
		return err
	}
	window := time.Duration(cfg.Passes) * cfg.Interval.D()
	if err := sleep(ctx, window); err != nil {
		return err
	}
	after, err := s.proc.Metrics(ctx)
	if err != nil {
		return err
	}
	usedAfter, err := s.proc.UsageAt(after)
	if err != nil {
		return err
	}
	all, err := s.work(ctx, base, ownBase)
	if err != nil {
		return err
	}

	res := record.SteadyResult{
		Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources(),
		Interval: cfg.Interval, Window: record.Duration(window),
		Reconciles:  measure.Reconciles(after) - measure.Reconciles(before),
		Passes:      float64(cfg.Apps) * window.Seconds() / cfg.Interval.Seconds(),
		EventWrites: all.Filter(measure.IsEventWrite).Total(),
		Skipped:     after.Sum(skippedMetric, nil) - before.Sum(skippedMetric, nil),
		HasSkipped:  after.Has(skippedMetric),
	}
	res.CPU = usedAfter.CostSince(usedBefore)
	res.Cores = res.CPU.CoresOver(window)
	work := all.Filter(measure.IsWork)
	res.Requests = work.List()
	perApp := res.Reconciles
	if !after.Has(measure.ReconcileMetric) {
		perApp = res.Passes
	}
	denominator := perApp * float64(shape.Resources())
	if denominator > 0 {
		res.PerResource = work.Total() / denominator
		res.ByVerb = map[string]float64{}
		for verb, n := range work.ByVerb() {
			res.ByVerb[verb] = n / denominator
		}
		res.EventsPerPass = res.EventWrites / perApp
		res.SkippedPerResource = res.Skipped / denominator
	}
	r.res.Steady = append(r.res.Steady, res)
	s.progress("%.0f reconciles (%.0f expected), %.0f requests: %.2f per resource per pass, %.2f event writes per pass, %.2f objects skipped per resource per pass; CPU %.2f ms per reconcile, %.4f cores",
		res.Reconciles, res.Passes, work.Total(), res.PerResource, res.EventsPerPass, res.SkippedPerResource, res.CPU.CPUPerReconcileMs, res.Cores)
	return nil
}
