package application

import (
	"context"
	"fmt"
	"sort"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/tracker"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kindClass orders deletions: workloads first (they use the rest), then
// what exposes them, then configuration, and Namespaces and
// CustomResourceDefinitions last, once everything else is gone (deleting
// them first would delete their contents behind the tracker's back).
func kindClass(kind string) int {
	switch kind {
	case "Namespace", "CustomResourceDefinition":
		return 3
	case "ConfigMap", "Secret", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
		"PersistentVolumeClaim", "PersistentVolume", "StorageClass", "PriorityClass":
		return 2
	case "Service", "Ingress", "HTTPRoute", "Gateway", "NetworkPolicy", "HorizontalPodAutoscaler", "PodDisruptionBudget":
		return 1
	default:
		return 0
	}
}

const lastClass = 3

// deletionOrder sorts entries for deletion: by kind class, and within a
// class in reverse dependency order (entries are recorded in dependency
// order, so a component's position in the list stands for its place).
func deletionOrder(entries []v1beta1.ManagedResource) []v1beta1.ManagedResource {
	pos := map[string]int{}
	for i, e := range entries {
		if _, ok := pos[e.Component]; !ok {
			pos[e.Component] = i
		}
	}
	out := append([]v1beta1.ManagedResource(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := kindClass(out[i].Kind), kindClass(out[j].Kind)
		if ci != cj {
			return ci < cj
		}
		return pos[out[i].Component] > pos[out[j].Component]
	})
	return out
}

// deleteInOrder carries out delete decisions (inventory.Garbage,
// inventory.Deletion): the objects are deleted in deletion order, each
// cluster on its own (concurrently), each decision's reason logged, and
// it returns the keys whose entries can be dropped (object gone, or not
// ours). Namespaces and CRDs wait until every other object of their
// cluster is confirmed gone. What happened is merged into the scope's
// garbage-collection report.
func (r *Reconciler) deleteInOrder(ctx context.Context, s *scope, applier apply.Applier, doomed []inventory.Decision) map[tracker.Key]bool {
	entries := make([]v1beta1.ManagedResource, len(doomed))
	whys := make(map[tracker.Key]inventory.Why, len(doomed))
	for i, d := range doomed {
		entries[i] = d.Entry
		whys[d.Key()] = d.Why
	}
	passes := r.eachCluster(byCluster(entries), func(g clusterGroup, p *clusterShare) {
		c, err := r.getClient(ctx, s, g)
		if detached(err) {
			r.leaveDetached(ctx, g, p)
			return
		}
		if err != nil {
			f := clusterFailure(g.cluster, err)
			logFailed(ctx, f)
			p.gc.failures = append(p.gc.failures, f)
			p.setRetry(err)
			return
		}
		othersLeft := false
		for _, e := range deletionOrder(g.entries) {
			last := kindClass(e.Kind) == lastClass
			if last && othersLeft {
				p.gc.pending = append(p.gc.pending, tracker.KeyOf(e))
				continue
			}
			drop, err := r.deleteEntry(ctx, s, p, c, applier, e, string(whys[tracker.KeyOf(e)]))
			if drop {
				p.drop[tracker.KeyOf(e)] = true
				continue
			}
			if err != nil && isUnreachable(err) {
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
		s.merge(p)
		for k := range p.drop {
			drop[k] = true
		}
	}
	return drop
}

// leaveDetached drops the entries of a cluster that is no longer
// registered: nothing can delete them, and detaching with --force said to
// leave them behind. They are reported once, in an event.
func (r *Reconciler) leaveDetached(ctx context.Context, g clusterGroup, p *clusterShare) {
	for _, e := range g.entries {
		decisionLog(ctx, tracker.KeyOf(e), decisionLevel).Info("Left behind: the cluster was detached", "component", e.Component)
		p.drop[tracker.KeyOf(e)] = true
		p.gc.leftBehind = append(p.gc.leftBehind, tracker.KeyOf(e))
	}
}

// deleteEntry deletes the object of an entry and reports whether the entry
// can be dropped: the object is gone, or it is not ours to delete. A
// failure is recorded in the pass and returned; an unreachable cluster is
// recorded as the cluster's failure.
func (r *Reconciler) deleteEntry(ctx context.Context, s *scope, p *clusterShare, c client.Client, applier apply.Applier, e v1beta1.ManagedResource, why string) (bool, error) {
	key := tracker.KeyOf(e)
	res, err := applier.Delete(ctx, c, tracker.Ref(e))
	if err == nil {
		logDeleted(ctx, key, e.Component, why, res)
		switch res.Action {
		case apply.Gone, apply.Skipped:
			return true, nil
		case apply.Deleted:
			p.gc.deleted = append(p.gc.deleted, objectChange{Key: key, Action: apply.Deleted})
			p.gc.pending = append(p.gc.pending, key)
			return false, nil
		case apply.Terminating:
			p.gc.pending = append(p.gc.pending, key)
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
	f := entryFailure(e, v1beta1.ReasonDeleteFailed, err)
	logFailed(ctx, f)
	p.gc.failures = append(p.gc.failures, f)
	p.setRetry(err)
	return false, err
}

// entryFailure is the failure of one entry's object; when its cluster
// cannot be reached at all it is the cluster's failure instead, reported
// once for all of the cluster's objects.
func entryFailure(e v1beta1.ManagedResource, reason string, err error) objectFailure {
	if isUnreachable(err) {
		return clusterFailure(e.Cluster, err)
	}
	if e.Cluster != "" {
		err = fmt.Errorf("cluster %q: %w", e.Cluster, err)
	}
	return objectFailure{Key: tracker.KeyOf(e), Component: e.Component, Reason: reason, Err: err}
}
