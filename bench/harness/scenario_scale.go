package harness

import (
	"context"
	"fmt"
	"time"
)

// scale measures how far one controller goes (issue 15): Apps
// Applications exist before it starts; it is timed until all are Ready,
// its heap and RSS read once settled; then it is restarted, and the
// restarted process's first pass over every app, which reads every object
// (watch mode trusts no cache on a process's first pass), is timed
// against the bound its requests set under the client rate limit, with
// heap and RSS sampled during the pass.
func (r *runner) scale(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Scale
	shape := ShapeOf(cfg.ResourcesPer)
	res := ScaleResult{Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources(), QPS: cfg.QPS, Burst: cfg.Burst}
	c, err := s.converge(ctx, cfg.Apps, shape, cfg.Timeout.D(), cfg.QPS, cfg.Burst)
	if err != nil {
		return err
	}
	res.Converged, res.Requests = Duration(c.took), c.work.Total()
	s.progress("%d apps ready after %s; %.0f requests (%.2f per object)", cfg.Apps, res.Converged.D().Round(time.Second),
		res.Requests, res.Requests/float64(res.Resources))
	if err := sleep(ctx, cfg.Settle.D()); err != nil {
		return err
	}
	if res.Settled, err = sampleMemory(ctx, s.proc, cfg.memory()); err != nil {
		return err
	}
	s.progress("settled: heap in use after GC %.1f MiB (%s per app), RSS %.1f MiB", res.Settled.HeapInuse/mib,
		bytesText(int(res.Settled.HeapInuse/float64(cfg.Apps))), res.Settled.RSS/mib)

	// The full pass of a restarted controller.
	if err := s.proc.Stop(); err != nil {
		return fmt.Errorf("stopping the controller: %w", err)
	}
	s.proc = nil
	base, err := s.cp.Requests(ctx)
	if err != nil {
		return err
	}
	ownBase := s.cp.Own.Snapshot()
	start := time.Now()
	if err := s.startWith(ctx, cfg.QPS, cfg.Burst); err != nil {
		return err
	}
	deadline := time.Now().Add(cfg.Timeout.D())
	for {
		if err := sleep(ctx, cfg.SampleEvery.D()); err != nil {
			return err
		}
		ss, err := s.proc.Metrics(ctx)
		if err != nil {
			return err
		}
		m, err := s.proc.Memory(ctx)
		if err != nil {
			return err
		}
		res.PassPeakHeap, res.PassPeakRSS = max(res.PassPeakHeap, m.HeapInuse), max(res.PassPeakRSS, m.RSS)
		if reconciles(ss) >= float64(cfg.Apps) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("restarted controller reconciled %.0f of %d apps within %s", reconciles(ss), cfg.Apps, cfg.Timeout.D())
		}
	}
	res.Pass = Duration(time.Since(start))
	all, err := s.work(ctx, base, ownBase)
	if err != nil {
		return err
	}
	work := all.Filter(isWork)
	res.PassRequests = work.Total()
	bound := time.Duration(0)
	res.PassBusiestKind, bound = busiestKind(work, cfg.QPS, cfg.Burst)
	res.PassBound = Duration(bound)
	s.progress("restarted: every app reconciled after %s; %.0f requests, bound %s by %s; peak heap in use %.1f MiB, RSS %.1f MiB",
		res.Pass.D().Round(time.Second), res.PassRequests, res.PassBound.D().Round(time.Second), res.PassBusiestKind,
		res.PassPeakHeap/mib, res.PassPeakRSS/mib)
	r.res.Scale = append(r.res.Scale, res)
	return nil
}
