package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/tracker"
)

// clusterShare collects what one cluster's share of a phase did. The
// shares of different clusters run concurrently, each with its own, and
// are merged into the scope afterwards in cluster order.
type clusterShare struct {
	keep     keepReport
	gc       gcReport
	drop     map[tracker.Key]bool
	retryErr error
}

func newClusterShare() *clusterShare { return &clusterShare{drop: map[tracker.Key]bool{}} }

func (p *clusterShare) setRetry(err error) {
	if p.retryErr == nil {
		p.retryErr = err
	}
}

// merge adds a cluster's share to the scope.
func (s *scope) merge(p *clusterShare) {
	s.keep.applied += p.keep.applied
	s.keep.gated += p.keep.gated
	s.keep.changes = append(s.keep.changes, p.keep.changes...)
	s.keep.failures = append(s.keep.failures, p.keep.failures...)
	s.keep.drifted = append(s.keep.drifted, p.keep.drifted...)
	s.keep.conflicts = append(s.keep.conflicts, p.keep.conflicts...)
	s.keep.unread = append(s.keep.unread, p.keep.unread...)
	for _, w := range p.keep.waiting {
		s.keep.waiting = appendOnce(s.keep.waiting, w)
	}
	for _, w := range p.keep.unhealthyDeps {
		s.keep.unhealthyDeps = appendOnce(s.keep.unhealthyDeps, w)
	}
	for k, v := range p.keep.live {
		s.keep.remember(k, v)
	}
	s.gc.deleted = append(s.gc.deleted, p.gc.deleted...)
	s.gc.pending = append(s.gc.pending, p.gc.pending...)
	s.gc.failures = append(s.gc.failures, p.gc.failures...)
	s.gc.leftBehind = append(s.gc.leftBehind, p.gc.leftBehind...)
	if p.retryErr != nil {
		s.setRetry(p.retryErr)
	}
}

// clusterGroup is the entries of one cluster, in recorded order.
type clusterGroup struct {
	cluster string
	entries []v1beta1.ManagedResource
}

// byCluster groups entries by cluster, clusters in order of first
// appearance.
func byCluster(entries []v1beta1.ManagedResource) []clusterGroup {
	idx := map[string]int{}
	var out []clusterGroup
	for _, e := range entries {
		name := v1beta1.ClusterKey(e.Cluster)
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, clusterGroup{cluster: name})
		}
		out[i].entries = append(out[i].entries, e)
	}
	return out
}

// eachCluster runs fn for every group, at most ClusterConcurrency at a
// time, so that a slow or unreachable cluster does not hold up the others.
// It returns one pass per group, in group order.
func (r *ApplicationReconciler) eachCluster(groups []clusterGroup, fn func(g clusterGroup, p *clusterShare)) []*clusterShare {
	return r.eachClusterAtMost(0, groups, fn)
}

// eachClusterAtMost is eachCluster with at most limit groups at a time
// when limit is positive and below ClusterConcurrency: a deploy step's
// parallelism.
func (r *ApplicationReconciler) eachClusterAtMost(limit int, groups []clusterGroup, fn func(g clusterGroup, p *clusterShare)) []*clusterShare {
	passes := make([]*clusterShare, len(groups))
	for i := range groups {
		passes[i] = newClusterShare()
	}
	if len(groups) == 1 {
		fn(groups[0], passes[0])
		return passes
	}
	var eg errgroup.Group
	n := max(r.Options.ClusterConcurrency, 1)
	if limit > 0 && limit < n {
		n = limit
	}
	eg.SetLimit(n)
	for i, g := range groups {
		eg.Go(func() error {
			fn(g, passes[i])
			return nil
		})
	}
	_ = eg.Wait() // fn reports into its pass, never as an error
	return passes
}

// clusterFailure records that a whole cluster could not be reached.
func clusterFailure(name string, err error) objectFailure {
	if name == "" {
		name = v1beta1.ClusterLocal
	}
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("cluster %q", name)) {
		err = fmt.Errorf("cluster %q: %w", name, err)
	}
	return objectFailure{Key: tracker.Key{Cluster: name}, Reason: v1beta1.ReasonClusterUnreachable, Err: err}
}

// isUnreachable reports errors that mean a cluster cannot be reached or is
// no longer registered, as opposed to refusals a user must fix.
func isUnreachable(err error) bool {
	return cluster.IsUnreachable(err) || errors.Is(err, cluster.ErrNotRegistered)
}

// getClient returns the client of a group's cluster, acting as the
// Application's identity; an error says the cluster cannot be used now
// (not registered, or down at its last probe).
func (r *ApplicationReconciler) getClient(ctx context.Context, s *scope, g clusterGroup) (client.Client, error) {
	c, err := s.clients.GetClient(ctx, g.cluster)
	if err == nil {
		err = cluster.KnownDown(r.Clusters, g.cluster)
	}
	return c, err
}

// detached reports whether err says the cluster is no longer registered:
// its objects were left behind on purpose (steward cluster detach --force).
func detached(err error) bool { return errors.Is(err, cluster.ErrNotRegistered) }
