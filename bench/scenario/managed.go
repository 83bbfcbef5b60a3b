package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// watchInformersMetric is Steward's gauge of metadata-only informers in
// watch mode, by cluster.
const watchInformersMetric = "steward_watch_informers"

// managed measures heap in use against the number of objects a controller
// manages: first with no Application, then after adding apps, with the
// controller running, up to each level. Memory that grows with what a
// controller manages (its trackers, its watch cache) shows here, where
// the memory scenario holds the managed objects fixed.
func (r *runner) managed(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Managed
	if err := cfg.Validate(); err != nil {
		return err
	}
	shape := ShapeOf(cfg.ResourcesPer)
	if err := EnsureNamespace(ctx, s.cp.Client, benchNamespace); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	res := record.ManagedResult{Controller: s.controller.Name, ResourcesPer: shape.Resources()}
	sample := func(objects, apps int, ready time.Duration) error {
		if err := sleep(ctx, cfg.Settle.D()); err != nil {
			return err
		}
		m, err := measure.SampleMemory(ctx, s.proc, forcedGCs(cfg.Window, cfg.GCs))
		if err != nil {
			return err
		}
		p := record.ManagedPoint{Objects: objects, Apps: apps, HeapInuse: m.HeapInuse, RSS: m.RSS, ForcedGC: m.ForcedGC, Ready: record.Duration(ready)}
		if ss, err := s.proc.Metrics(ctx); err == nil {
			p.Informers = ss.Sum(watchInformersMetric, nil)
		}
		res.Points = append(res.Points, p)
		per := ""
		if objects > 0 {
			per = fmt.Sprintf(", %s per managed object", bytesText(int(res.PerObject(p))))
		}
		s.progress("%d managed objects (%d apps): heap in use after GC %.1f MiB%s, RSS %.1f MiB", objects, apps, p.HeapInuse/mib, per, p.RSS/mib)
		return nil
	}
	if err := sample(0, 0, 0); err != nil {
		return err
	}
	apps := 0
	for _, level := range cfg.Levels {
		want := level / shape.Resources()
		start := time.Now()
		if err := createApplicationsFrom(ctx, s, apps, want, shape); err != nil {
			return err
		}
		apps = want
		done, err := WaitReady(ctx, s.cp.Client, benchNamespace, apps, cfg.Timeout.D())
		if err != nil {
			return fmt.Errorf("%d managed objects: %w", level, err)
		}
		if err := sample(level, apps, done.Sub(start)); err != nil {
			return err
		}
	}
	r.res.Managed = append(r.res.Managed, res)
	return nil
}

// createApplicationsFrom creates the benchmark Applications from index
// from up to to, without the reconcile-interval annotation: the apps
// re-sync on the controller's default period.
func createApplicationsFrom(ctx context.Context, s *session, from, to int, shape AppShape) error {
	return parallel(ctx, to-from, 16, func(i int) error {
		app, err := NewApplication(benchNamespace, AppName(from+i), shape, nil)
		if err != nil {
			return err
		}
		if err := s.cp.Client.Create(ctx, app); err != nil {
			return fmt.Errorf("creating application %s: %w", app.Name, err)
		}
		return nil
	})
}
