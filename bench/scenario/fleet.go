package scenario

import (
	"context"
	"time"

	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// fleet creates every Application before the controller starts, then
// times the controller from process start until the last app is ready,
// with the CPU its process tree spent meanwhile.
func (r *runner) fleet(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Fleet
	shape := ShapeOf(cfg.ResourcesPer)
	c, err := s.converge(ctx, cfg.Apps, shape, cfg.Timeout.D(), r.opts.QPS, r.opts.Burst)
	if err != nil {
		return err
	}
	kind, bound := busiestKind(c.work, r.opts.QPS, r.opts.Burst)
	res := record.FleetResult{
		Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources(), QPS: r.opts.QPS, Burst: r.opts.Burst,
		Converged: record.Duration(c.took), Requests: c.work.List(), Work: c.work.Total(),
		Bound: record.Duration(bound), BusiestKind: kind, OneLimiterBound: record.Duration(seconds(c.work.Total() / r.opts.QPS)),
		CPUCost: c.cost,
	}
	r.res.Fleet = append(r.res.Fleet, res)
	s.progress("%d apps ready after %s; %.0f requests, bound %s by %s (%.2f×)", cfg.Apps, c.took.Round(time.Millisecond),
		res.Work, res.Bound.D().Round(time.Millisecond), kind, res.Ratio())
	s.progress("CPU %.2f s (%.0f%% in child processes), %.0f reconciles: %.2f ms per reconcile; render mean %.2f ms over %.0f",
		res.CPUSeconds, res.ChildShare()*100, res.Reconciles, res.CPUPerReconcileMs, res.RenderMeanSeconds*1000, res.Renders)
	return nil
}

// convergence is what converge measured: the time from the controller's
// start until every app was Ready, and the work requests it sent and the
// CPU its process tree spent meanwhile.
type convergence struct {
	took time.Duration
	work record.RequestCounts
	cost record.CPUCost
}

// converge creates apps Applications before the controller starts, starts
// it at qps and burst, and measures it until every app is Ready.
func (s *session) converge(ctx context.Context, apps int, shape AppShape, timeout time.Duration, qps float64, burst int) (convergence, error) {
	return s.convergeWith(ctx, apps, timeout, qps, burst, func(ctx context.Context) error {
		return CreateApplications(ctx, s.cp.Client, benchNamespace, apps, shape, nil)
	})
}

// convergeWith is converge with the Applications create makes.
func (s *session) convergeWith(ctx context.Context, apps int, timeout time.Duration, qps float64, burst int,
	create func(context.Context) error) (convergence, error) {
	start := time.Now()
	if err := create(ctx); err != nil {
		return convergence{}, err
	}
	s.progress("created %d applications in %s", apps, time.Since(start).Round(time.Millisecond))
	base, err := s.cp.Requests(ctx)
	if err != nil {
		return convergence{}, err
	}
	ownBase := s.cp.Own.Snapshot()
	start = time.Now()
	if err := s.startWith(ctx, qps, burst); err != nil {
		return convergence{}, err
	}
	done, err := WaitReady(ctx, s.cp.Client, benchNamespace, apps, timeout)
	if err != nil {
		return convergence{}, err
	}
	// Read first: the controller goes on reconciling (the status writes
	// of its last passes) while the apiserver's counts are fetched.
	used, err := s.proc.Usage(ctx)
	if err != nil {
		return convergence{}, err
	}
	all, err := s.work(ctx, base, ownBase)
	if err != nil {
		return convergence{}, err
	}
	// The process's counters and CPU start at zero: a zero base is its start.
	return convergence{took: done.Sub(start), work: all.Filter(measure.IsWork), cost: used.CostSince(measure.Usage{})}, nil
}

// busiestKind returns the resource with the most requests and the time its
// client rate limiter needs for them: a token bucket of burst tokens
// refilled at qps lets n requests through in no less than (n − burst) ÷ qps.
func busiestKind(work record.RequestCounts, qps float64, burst int) (string, time.Duration) {
	perKind := map[string]float64{}
	for k, n := range work {
		kind := k.Resource
		if k.Group != "" {
			kind += "." + k.Group
		}
		perKind[kind] += n
	}
	busiest, most := "", 0.0
	for kind, n := range perKind {
		if n > most || (n == most && kind < busiest) {
			busiest, most = kind, n
		}
	}
	return busiest, seconds(max(most-float64(burst), 0) / qps)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
