package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
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
// shard (issue 15). On the session's control plane one process converges
// the fleet, then its heap after GC and RSS are read once settled; on a
// second, fresh control plane the Shards replicas are started together
// before the same fleet is created (the master waits one renew period for
// the other shards, then assigns), timed until every app is Ready, and
// each replica's heap and RSS are read the same way.
func (r *runner) shards(ctx context.Context, s *session) error {
	if !strings.Contains(s.controller.Command, "steward controller") {
		s.progress("skipped: not a steward controller (sharding is Steward's)")
		return nil
	}
	cfg := r.opts.Profile.Shards
	shape := ShapeOf(cfg.ResourcesPer)
	res := ShardsResult{Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources(), Shards: cfg.Shards}
	c, err := s.converge(ctx, cfg.Apps, shape, cfg.Timeout.D(), r.opts.QPS, r.opts.Burst)
	if err != nil {
		return err
	}
	converged := c.took
	res.SingleConverged = Duration(converged)
	if err := sleep(ctx, cfg.Settle.D()); err != nil {
		return err
	}
	if res.Single, err = sampleMemory(ctx, s.proc, cfg.memory()); err != nil {
		return err
	}
	s.progress("one controller: %d apps ready after %s; heap after GC %.1f MiB, RSS %.1f MiB", cfg.Apps,
		converged.Round(time.Millisecond), res.Single.HeapInuse/mib, res.Single.RSS/mib)
	if err := s.proc.Stop(); err != nil {
		return err
	}
	s.proc = nil

	cp, err := StartControlPlane(ctx, r.opts.BinDir, r.opts.CRDDir, r.opts.DefinitionDirs)
	if err != nil {
		return err
	}
	var procs []*Process
	defer func() {
		for _, p := range procs {
			err = errors.Join(err, p.Stop())
		}
		err = errors.Join(err, cp.Stop())
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
		p, err := StartController(ctx, c, cp.Kubeconfig, logPath, r.opts.QPS, r.opts.Burst)
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
	res.ShardedConverged = Duration(done.Sub(start))
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
		m, err := sampleMemory(ctx, p, cfg.memory())
		if err != nil {
			return err
		}
		res.Replicas = append(res.Replicas, ReplicaResult{Shard: ids[i], Apps: perShard[ids[i]], Memory: m})
		s.progress("shard %s: %d apps; heap after GC %.1f MiB (%.2f of one controller's), RSS %.1f MiB", ids[i], perShard[ids[i]],
			m.HeapInuse/mib, m.HeapInuse/max(res.Single.HeapInuse, 1), m.RSS/mib)
	}
	s.progress("%d shards: %d apps ready after %s from the replicas' start (one controller: %s)", cfg.Shards, cfg.Apps,
		res.ShardedConverged.D().Round(time.Millisecond), res.SingleConverged.D().Round(time.Millisecond))
	r.res.Shards = append(r.res.Shards, res)
	return nil
}
