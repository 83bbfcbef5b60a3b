package harness

import (
	"context"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// reconcileMetric counts reconciles in every controller-runtime
// controller; "application" is the controller name of Steward, KubeVela
// and the baseline.
const reconcileMetric = "controller_runtime_reconcile_total"

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
	usedBefore, err := s.proc.usageAt(before)
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
	usedAfter, err := s.proc.usageAt(after)
	if err != nil {
		return err
	}
	all, err := s.work(ctx, base, ownBase)
	if err != nil {
		return err
	}

	res := SteadyResult{
		Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources(),
		Interval: cfg.Interval, Window: Duration(window),
		Reconciles:  reconciles(after) - reconciles(before),
		Passes:      float64(cfg.Apps) * window.Seconds() / cfg.Interval.Seconds(),
		EventWrites: all.Filter(isEventWrite).Total(),
		Skipped:     after.Sum(skippedMetric, nil) - before.Sum(skippedMetric, nil),
		HasSkipped:  after.Has(skippedMetric),
	}
	res.CPU = usedAfter.costSince(usedBefore)
	res.Cores = res.CPU.coresOver(window)
	work := all.Filter(isWork)
	res.Requests = work.List()
	perApp := res.Reconciles
	if !after.Has(reconcileMetric) {
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

// reconciles sums the application controller's reconciles, or every
// controller's when none is named application.
func reconciles(ss Samples) float64 {
	if n := ss.Sum(reconcileMetric, map[string]string{"controller": "application"}); n > 0 {
		return n
	}
	return ss.Sum(reconcileMetric, nil)
}
