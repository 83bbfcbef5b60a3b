package scenario

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// shardLeaseNamespace holds the shards' Leases in the shards scenario.
const shardLeaseNamespace = "steward-system"

// shardArgs are the flags a replica of the shards scenario adds to the
// controller's command line: quick Lease renewals, so that the master
// counts every shard within its first seconds.
func shardArgs(id string) string {
	return " --enable-sharding --shard-id=" + id + " --sharding-lease-namespace=" + shardLeaseNamespace +
		" --sharding-lease-renew-period=2s --sharding-lease-duration=10s"
}

// shards compares one controller with Shards replicas of it, one per
// shard (issues 15 and 35). On the session's control plane one process
// converges the fleet (unless SkipSingle: the scale scenario's run is the
// reference), then its heap after GC and RSS are read once settled; on a
// second, fresh control plane the Shards replicas are started together
// before the same fleet is created (the master waits one renew period for
// the other shards, then assigns), timed until every app is Ready, and
// each replica's heap and RSS are read the same way. Each run's CPU is
// measured over the same steady window (every replica over one window);
// the sharded fleet then takes the scale scenario's hand changes.
func (r *runner) shards(ctx context.Context, s *session) (err error) {
	if !strings.Contains(s.controller.Command, "steward controller") {
		s.progress("skipped: not a steward controller (sharding is Steward's)")
		return nil
	}
	cfg := r.opts.Profile.Shards
	shape := ShapeOf(cfg.ResourcesPer)
	res := record.ShardsResult{Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources(), Shards: cfg.Shards}
	if !cfg.SkipSingle {
		if err := s.single(ctx, cfg, shape, &res); err != nil {
			return err
		}
	}

	// The replicas get a fresh control plane, unless the session's is.
	cp := s.cp
	if !cfg.SkipSingle {
		fresh, err := measure.StartControlPlane(ctx, r.opts.BinDir, r.opts.CRDDir, r.opts.DefinitionDirs)
		if err != nil {
			return err
		}
		cp = fresh
	}
	var procs []*measure.Process
	defer func() {
		for _, p := range procs {
			err = errors.Join(err, p.Stop())
		}
		if cp != s.cp {
			err = errors.Join(err, cp.Stop())
		}
	}()
	if err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shardLeaseNamespace}}); err != nil {
		return err
	}
	ids := make([]string, cfg.Shards)
	start := time.Now()
	for i := range ids {
		ids[i] = "master"
		if i > 0 {
			ids[i] = fmt.Sprintf("shard-%d", i)
		}
		c := s.controller
		c.Command += shardArgs(ids[i])
		logPath := filepath.Join(r.opts.LogDir, s.scenario+"-"+s.controller.Name+"-"+ids[i]+".log")
		p, err := measure.StartController(ctx, c, cp.Kubeconfig, logPath, r.opts.QPS, r.opts.Burst)
		if err != nil {
			return err
		}
		procs = append(procs, p)
	}
	if err := CreateApplications(ctx, cp.Client, benchNamespace, cfg.Apps, shape, nil); err != nil {
		return err
	}
	done, err := WaitReady(ctx, cp.Client, benchNamespace, cfg.Apps, cfg.Timeout.D())
	if err != nil {
		return err
	}
	res.ShardedConverged = record.Duration(done.Sub(start))
	if err := sleep(ctx, cfg.Settle.D()); err != nil {
		return err
	}
	var apps v1beta1.ApplicationList
	if err := cp.Client.List(ctx, &apps, client.InNamespace(benchNamespace)); err != nil {
		return err
	}
	perShard := map[string]int{}
	for _, a := range apps.Items {
		perShard[a.Labels[v1beta1.LabelScheduledShardID]]++
	}
	for i, p := range procs {
		m, err := measure.SampleMemory(ctx, p, forcedGCs(cfg.Window, cfg.GCs))
		if err != nil {
			return err
		}
		res.Replicas = append(res.Replicas, record.ReplicaResult{Shard: ids[i], Apps: perShard[ids[i]], Memory: m})
		s.progress("shard %s: %d apps; heap after GC %.1f MiB, RSS %.1f MiB", ids[i], perShard[ids[i]], m.HeapInuse/mib, m.RSS/mib)
	}
	// Every replica over the same window.
	windows := make([]record.SteadyWindow, len(procs))
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			windows[i], errs[i] = s.steady(ctx, p, cfg.Steady.D(), ids[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := range res.Replicas {
		res.Replicas[i].Steady = windows[i]
	}
	if res.Drift, err = s.driftFleet(ctx, cp.Client, cfg.Apps, shape, cfg.Drift); err != nil {
		return err
	}
	s.progress("%d shards: %d apps ready after %s from the replicas' start (one controller: %s)", cfg.Shards, cfg.Apps,
		res.ShardedConverged.D().Round(time.Millisecond), res.SingleConverged.D().Round(time.Millisecond))
	r.res.Shards = append(r.res.Shards, res)
	return nil
}

// single is the shards scenario's one-controller run, on the session's
// control plane.
func (s *session) single(ctx context.Context, cfg record.ShardsConfig, shape AppShape, res *record.ShardsResult) error {
	c, err := s.converge(ctx, cfg.Apps, shape, cfg.Timeout.D(), s.runner.opts.QPS, s.runner.opts.Burst)
	if err != nil {
		return err
	}
	res.SingleConverged = record.Duration(c.took)
	if err := sleep(ctx, cfg.Settle.D()); err != nil {
		return err
	}
	if res.Single, err = measure.SampleMemory(ctx, s.proc, forcedGCs(cfg.Window, cfg.GCs)); err != nil {
		return err
	}
	s.progress("one controller: %d apps ready after %s; heap after GC %.1f MiB, RSS %.1f MiB", cfg.Apps,
		c.took.Round(time.Millisecond), res.Single.HeapInuse/mib, res.Single.RSS/mib)
	if res.SingleSteady, err = s.steady(ctx, s.proc, cfg.Steady.D(), "single"); err != nil {
		return err
	}
	err = s.proc.Stop()
	s.proc = nil
	return err
}
