package application

import (
	"context"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/order"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/tracker"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deleteInOrder carries out delete decisions (inventory.Garbage,
// inventory.Deletion): the objects are deleted in deletion order, each
// cluster on its own (concurrently), each decision's reason logged, and
// it returns the keys whose entries can be dropped (object gone, or not
// ours). Namespaces and CRDs wait until every other object of their
// cluster is confirmed gone. What happened is merged into the pass's
// garbage-collection report.
func (r *Reconciler) deleteInOrder(ctx context.Context, s *facts.Pass, applier apply.Applier, doomed []inventory.Decision) map[tracker.Key]bool {
	entries := make([]v1beta1.ManagedResource, len(doomed))
	whys := make(map[tracker.Key]inventory.Why, len(doomed))
	for i, d := range doomed {
		entries[i] = d.Entry
		whys[d.Key()] = d.Why
	}
	passes := r.eachCluster(facts.ByCluster(entries), func(g facts.ClusterGroup, p *facts.ClusterShare) {
		c, err := r.getClient(ctx, s, g)
		if facts.Detached(err) {
			r.leaveDetached(ctx, g, p)
			return
		}
		if err != nil {
			f := facts.ClusterFailure(g.Cluster, err)
			decisionlog.Failed(ctx, f)
			p.GC.Failures = append(p.GC.Failures, f)
			p.SetRetry(err)
			return
		}
		othersLeft := false
		for _, e := range order.ForDeletion(g.Entries) {
			last := order.KindClass(e.Kind) == order.LastClass
			if last && othersLeft {
				p.GC.Pending = append(p.GC.Pending, tracker.KeyOf(e))
				continue
			}
			drop, err := r.deleteEntry(ctx, s, p, c, applier, e, string(whys[tracker.KeyOf(e)]))
			if drop {
				p.Drop[tracker.KeyOf(e)] = true
				continue
			}
			if err != nil && facts.IsUnreachable(err) {
				// The cluster is gone for now (recorded as the cluster's
				// failure): the rest waits for it.
				return
			}
			if !last {
				othersLeft = true
			}
		}
	})
	drop := map[tracker.Key]bool{}
	for _, p := range passes {
		s.Merge(p)
		for k := range p.Drop {
			drop[k] = true
		}
	}
	return drop
}

// leaveDetached drops the entries of a cluster that is no longer
// registered: nothing can delete them, and detaching with --force said to
// leave them behind. They are reported once, in an event.
func (r *Reconciler) leaveDetached(ctx context.Context, g facts.ClusterGroup, p *facts.ClusterShare) {
	for _, e := range g.Entries {
		decisionlog.For(ctx, tracker.KeyOf(e), decisionlog.Decision).Info("Left behind: the cluster was detached", "component", e.Component)
		p.Drop[tracker.KeyOf(e)] = true
		p.GC.LeftBehind = append(p.GC.LeftBehind, tracker.KeyOf(e))
	}
}

// deleteEntry deletes the object of an entry and reports whether the entry
// can be dropped: the object is gone, or it is not ours to delete. A
// failure is recorded in the pass and returned; an unreachable cluster is
// recorded as the cluster's failure.
func (r *Reconciler) deleteEntry(ctx context.Context, s *facts.Pass, p *facts.ClusterShare, c client.Client, applier apply.Applier, e v1beta1.ManagedResource, why string) (bool, error) {
	key := tracker.KeyOf(e)
	res, err := applier.Delete(ctx, c, tracker.Ref(e))
	if err == nil {
		decisionlog.Deleted(ctx, key, e.Component, why, res)
		switch res.Action {
		case apply.Gone, apply.Skipped:
			return true, nil
		case apply.Deleted:
			p.GC.Deleted = append(p.GC.Deleted, facts.Change{Key: key, Action: apply.Deleted})
			p.GC.Pending = append(p.GC.Pending, key)
			return false, nil
		case apply.Terminating:
			p.GC.Pending = append(p.GC.Pending, key)
			return false, nil
		}
	}
	if meta.IsNoMatchError(err) {
		// The kind is no longer served: no such object can exist.
		return true, nil
	}
	if r.confirmGone(ctx, s, e, err) {
		return true, nil
	}
	f := facts.EntryFailure(e, v1beta1.ReasonDeleteFailed, err)
	decisionlog.Failed(ctx, f)
	p.GC.Failures = append(p.GC.Failures, f)
	p.SetRetry(err)
	return false, err
}
