package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// scale measures how far one controller goes (issues 15 and 35): Apps
// Applications exist before it starts; it is timed until all are Ready,
// with the CPU it spent, its heap and RSS read once settled; its CPU is
// measured over a steady window at the default re-sync period (with a CPU
// profile), then random hand edits and deletes of managed objects are
// each timed until repaired; then it is restarted, and the
// restarted process's first pass over every app, which reads every object
// (watch mode trusts no cache on a process's first pass), is timed
// against the bound its requests set under the client rate limit, with
// heap and RSS sampled during the pass.
func (r *runner) scale(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Scale
	shape := ShapeOf(cfg.ResourcesPer)
	res := record.ScaleResult{Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources(), QPS: cfg.QPS, Burst: cfg.Burst}
	c, err := s.converge(ctx, cfg.Apps, shape, cfg.Timeout.D(), cfg.QPS, cfg.Burst)
	if err != nil {
		return err
	}
	res.Converged, res.Requests, res.ConvergeCPU = record.Duration(c.took), c.work.Total(), c.cost
	s.progress("%d apps ready after %s; %.0f requests (%.2f per object)", cfg.Apps, res.Converged.D().Round(time.Second),
		res.Requests, res.Requests/float64(res.Resources))
	if err := sleep(ctx, cfg.Settle.D()); err != nil {
		return err
	}
	if res.Settled, err = measure.SampleMemory(ctx, s.proc, forcedGCs(cfg.Window, cfg.GCs)); err != nil {
		return err
	}
	s.progress("settled: heap in use after GC %.1f MiB (%s per app), RSS %.1f MiB; converging took %.1f s of CPU", res.Settled.HeapInuse/mib,
		bytesText(int(res.Settled.HeapInuse/float64(cfg.Apps))), res.Settled.RSS/mib, res.ConvergeCPU.CPUSeconds)
	if res.Steady, err = s.steady(ctx, s.proc, cfg.Steady.D(), ""); err != nil {
		return err
	}
	if res.Drift, err = s.driftFleet(ctx, s.cp.Client, cfg.Apps, shape, cfg.Drift); err != nil {
		return err
	}

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
		if measure.Reconciles(ss) >= float64(cfg.Apps) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("restarted controller reconciled %.0f of %d apps within %s", measure.Reconciles(ss), cfg.Apps, cfg.Timeout.D())
		}
	}
	res.Pass = record.Duration(time.Since(start))
	used, err := s.proc.Usage(ctx)
	if err != nil {
		return err
	}
	res.PassCPU = used.CostSince(measure.Usage{})
	all, err := s.work(ctx, base, ownBase)
	if err != nil {
		return err
	}
	work := all.Filter(measure.IsWork)
	res.PassRequests = work.Total()
	bound := time.Duration(0)
	res.PassBusiestKind, bound = busiestKind(work, cfg.QPS, cfg.Burst)
	res.PassBound = record.Duration(bound)
	s.progress("restarted: every app reconciled after %s; %.0f requests, bound %s by %s; peak heap in use %.1f MiB, RSS %.1f MiB; CPU %.1f s",
		res.Pass.D().Round(time.Second), res.PassRequests, res.PassBound.D().Round(time.Second), res.PassBusiestKind,
		res.PassPeakHeap/mib, res.PassPeakRSS/mib, res.PassCPU.CPUSeconds)
	r.res.Scale = append(r.res.Scale, res)
	return nil
}

// steady measures p's CPU over window, with a CPU profile named after the
// session and tag when p serves pprof.
func (s *session) steady(ctx context.Context, p *measure.Process, window time.Duration, tag string) (record.SteadyWindow, error) {
	name := s.scenario + "-" + s.controller.Name
	if tag != "" {
		name += "-" + tag
	}
	w, err := measure.SteadyWindow(ctx, p, window, s.runner.opts.LogDir, name+"-steady.pprof")
	if err != nil {
		return w, err
	}
	s.progress("%ssteady over %s: %.1f s CPU, %.0f reconciles, %s per reconcile, %.4f cores", tagText(tag), window,
		w.CPUSeconds, w.Reconciles, msText(w.CPUPerReconcileMs), w.Cores)
	return w, nil
}

// driftFleet makes the scenario's hand changes to the apps and times
// their repairs.
func (s *session) driftFleet(ctx context.Context, c client.WithWatch, apps int, shape AppShape, cfg record.FleetDriftConfig) (record.FleetDrift, error) {
	rng := rand.New(rand.NewPCG(35, uint64(len(s.scenario)+len(s.controller.Name))))
	d, err := driftFleet(ctx, c, benchNamespace, apps, shape, cfg, rng, s.progress)
	if err != nil {
		return d, err
	}
	p50, p95, p99, hi := d.Quantiles()
	s.progress("drift: %d edits and %d deletes %v; repaired p50 %.3f s, p95 %.3f s, p99 %.3f s, max %.3f s; %d not repaired within %s",
		d.Edits, d.Deletes, d.ByKind, p50, p95, p99, hi, d.Unrepaired, cfg.Timeout.D())
	return d, nil
}

func tagText(tag string) string {
	if tag == "" {
		return ""
	}
	return tag + ": "
}
