package application

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// rescueTrackers re-creates the trackers of an Application that someone
// deleted by hand, and protects trackers written before Steward put its
// finalizer on them. Steward's finalizer holds a tracker deleted by
// someone else (a deletion timestamp while the finalizer is still on);
// the pass replaces it with a copy of itself, entries included, before
// anything else looks at the trackers, so no object it listed (garbage
// still to collect, objects kept for the Application's lifetime) is
// orphaned and the version it records is not rendered again.
func (r *Reconciler) rescueTrackers(ctx context.Context, s *facts.Pass, all []v1beta1.ResourceTracker) ([]v1beta1.ResourceTracker, error) {
	for i := range all {
		rt := &all[i]
		if rt.DeletionTimestamp.IsZero() {
			kubevelas := controllerutil.ContainsFinalizer(rt, v1beta1.FinalizerKubeVelaTracker)
			if err := r.Trackers.Protect(ctx, rt); err != nil {
				return nil, err
			}
			if kubevelas {
				// No KubeVela runs to remove its finalizer: left on, it
				// would hold the tracker forever once Steward deletes it.
				tookOver(ctx, s, "Replaced KubeVela's finalizer on its resource tracker", "replaced KubeVela's finalizer on resource tracker "+rt.Name, "resourceTracker", rt.Name)
			}
			continue
		}
		if tracker.KubeVelas(rt) && !tracker.Doomed(rt) {
			// KubeVela was deleting it when it stopped (its garbage
			// collection deletes an outdated tracker's objects before it
			// removes its finalizer): it is collected as an older
			// version, then let go (see collectGarbage).
			continue
		}
		if !tracker.Doomed(rt) {
			// Being deleted, and held by someone else's finalizer (a
			// foreground deletion, say) after Steward let it go: nothing
			// is written into it; a rescue copy keeps its entries until
			// it is gone and can be re-created.
			if err := r.Trackers.KeepRescue(ctx, rt); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("resource tracker %s is being deleted and held by finalizers %v: it is re-created once it is gone", rt.Name, rt.Finalizers)
		}
		fresh, err := r.Trackers.Recreate(ctx, rt)
		if err != nil {
			return nil, err
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Re-created a resource tracker deleted by hand", "resourceTracker", fresh.Name)
		s.Recreated = append(s.Recreated, fresh.Name)
		*rt = *fresh
	}
	return all, nil
}

// listTrackers lists the Application's trackers after finishing any
// re-creation a stopped pass left half done (see tracker.Recreate); when
// one was finished, the list is read from the API server, which the cache
// may not have caught up with.
func (r *Reconciler) listTrackers(ctx context.Context, s *facts.Pass) ([]v1beta1.ResourceTracker, error) {
	ref := tracker.RefOf(s.App)
	cached, restored, err := r.Trackers.ListRestoring(ctx, ref)
	if err != nil {
		return nil, err
	}
	if len(restored) == 0 && !s.ReadFresh {
		return cached, nil
	}
	for _, name := range restored {
		ctrl.LoggerFrom(ctx).V(1).Info("Re-created a resource tracker from its rescue copy", "resourceTracker", name)
	}
	s.Recreated = append(s.Recreated, restored...)
	return r.Trackers.ListFresh(ctx, ref)
}

// releaseOrphanTrackers lets trackers go that someone deletes after their
// Application is gone: there is nothing to re-create them for. The
// Application is looked up on the API server first, so that a cache that
// has not seen it yet does not release a tracker it still needs.
func (r *Reconciler) releaseOrphanTrackers(ctx context.Context, key client.ObjectKey) error {
	ref := tracker.AppRef{Name: key.Name, Namespace: key.Namespace}
	trackers, err := r.Trackers.List(ctx, ref)
	if err != nil {
		return err
	}
	var doomed []*v1beta1.ResourceTracker
	for i := range trackers {
		if tracker.Doomed(&trackers[i]) {
			doomed = append(doomed, &trackers[i])
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	reader := r.Trackers.Reader
	if reader == nil {
		reader = r.Client
	}
	if err := reader.Get(ctx, key, &v1beta1.Application{}); !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("reading application %s: %w", key, err)
		}
		return nil
	}
	if err := r.Trackers.DropRescued(ctx, ref); err != nil {
		return err
	}
	for _, rt := range doomed {
		if err := r.Trackers.Release(ctx, rt); err != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Released a resource tracker of a deleted application", "resourceTracker", rt.Name)
	}
	return nil
}

// loadTrackers finds the Application's trackers: root, the current
// versioned one and the older ones. Current is the tracker of the version
// the Application asks for (its publishVersion, else its generation) when
// it exists, else the newest one of this Application; trackers left by an
// earlier Application of the same name (another UID) are always older.
func (r *Reconciler) loadTrackers(ctx context.Context, s *facts.Pass) error {
	all, err := r.listTrackers(ctx, s)
	if err != nil {
		s.SetRetry(err)
		return err
	}
	if all, err = r.rescueTrackers(ctx, s, all); err != nil {
		s.SetRetry(err)
		return err
	}
	// KubeVela's trackers, left by a KubeVela that delivered the
	// Application before Steward, are never the live version nor the
	// root: their objects are collected like an older version's (those
	// of KubeVela's root are adopted into Steward's root first), then the
	// trackers go (see collectGarbage and docs/migration.md).
	all = slices.DeleteFunc(all, func(rt v1beta1.ResourceTracker) bool {
		if !tracker.KubeVelas(&rt) {
			return false
		}
		if rt.Spec.Type == v1beta1.ResourceTrackerTypeRoot {
			s.KubeVelaRoots = append(s.KubeVelaRoots, rt)
		} else {
			s.Older = append(s.Older, rt)
		}
		return true
	})
	current := tracker.Current(all, s.App)
	for i := range all {
		rt := all[i]
		switch rt.Spec.Type {
		case v1beta1.ResourceTrackerTypeRoot:
			s.Root = &rt
		case v1beta1.ResourceTrackerTypeComponentRevision:
			s.Comprev = &rt
		case v1beta1.ResourceTrackerTypeVersioned:
			if rt.Labels[v1beta1.LabelAppUID] == string(s.App.UID) {
				s.NewestGeneration = max(s.NewestGeneration, rt.Spec.ApplicationGeneration)
			}
			if i == current {
				s.Current = &rt
			} else {
				s.Older = append(s.Older, rt)
			}
		}
	}
	if s.Rules, s.RulesErr = policy.Parse(s.App); s.RulesErr != nil {
		s.Rules = &policy.Rules{}
	}
	return nil
}

// adoptTrackers moves the trackers of an Application into this replica's
// shard, when sharding is on: an Application assigned here from another
// shard (or from before sharding) brings its history, which this
// replica's label-selected cache would otherwise never show. It lists
// from the API server only when the cache shows no tracker of the
// Application's own (its UID) although the Application has been
// delivered before (its status says so), at most once per process unless
// a tracker write finds a tracker the cache did not show (see
// notAdopted). It reports whether any tracker moved, so that the pass
// reads them from the API server.
func (r *Reconciler) adoptTrackers(ctx context.Context, app *v1beta1.Application) (bool, error) {
	if !r.Options.Sharding.Enabled {
		return false, nil
	}
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	if r.Adopted.Has(key) {
		return false, nil
	}
	ref := tracker.RefOf(app)
	cached, err := r.Trackers.List(ctx, ref)
	if err != nil {
		return false, err
	}
	own := slices.ContainsFunc(cached, func(rt v1beta1.ResourceTracker) bool {
		return rt.Labels[v1beta1.LabelAppUID] == string(app.UID)
	})
	delivered := app.Status.LatestRevision != nil || len(app.Status.AppliedResources) > 0 || app.Status.ObservedGeneration > 0
	if own || !delivered {
		r.Adopted.Add(key)
		return false, nil
	}
	n, err := r.Trackers.Adopt(ctx, ref)
	if err != nil {
		return false, err
	}
	if n > 0 {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Moved resource trackers into this shard", "shard", r.Options.Sharding.ShardID, "resourceTrackers", n)
	}
	r.Adopted.Add(key)
	return n > 0, nil
}

// notAdopted makes the next pass of app look for trackers outside the
// shard again: a tracker write found one the cache did not show
// (AlreadyExists), as when the Application came back from another shard
// that had moved its trackers.
func (r *Reconciler) notAdopted(app *v1beta1.Application, err error) {
	if r.Options.Sharding.Enabled && apierrors.IsAlreadyExists(err) {
		r.Adopted.Forget(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
}

// scopeFunc says whether an object's kind is namespaced in the cluster
// it goes to.
type scopeFunc func(cluster string, obj *unstructured.Unstructured) (bool, error)

// namespacedIn returns the scopeFunc of a pass. The scope of a kind
// decides the object's key in the trackers, so it is never guessed: a kind
// of a Kubernetes API group (no dot in the group, or a *.k8s.io group) has
// the same scope in every cluster and comes from the hub's discovery;
// any other kind comes from the discovery of the cluster the object goes
// to (its client's RESTMapper, cached). A kind that cluster does not serve
// is an error with reason KindNotFound, and nothing is recorded until it
// is served.
func (r *Reconciler) namespacedIn(ctx context.Context) scopeFunc {
	return func(clusterName string, obj *unstructured.Unstructured) (bool, error) {
		gvk := obj.GroupVersionKind()
		mapper := r.Mapper
		if !builtinGroup(gvk.Group) {
			c, err := r.Clusters.GetClient(ctx, clusterName)
			if err != nil {
				return false, &facts.ReasonError{Reason: v1beta1.ReasonClusterUnreachable, Err: err}
			}
			mapper = c.RESTMapper()
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			where := "the cluster"
			if !v1beta1.IsLocalCluster(clusterName) {
				where = fmt.Sprintf("cluster %q", clusterName)
			}
			return false, &facts.ReasonError{Reason: v1beta1.ReasonKindNotFound,
				Err: fmt.Errorf("kind %s %q is not served by %s: install the CustomResourceDefinition that serves the kind (%w)", gvk.Kind, gvk.GroupVersion(), where, err)}
		}
		if err != nil {
			err = fmt.Errorf("finding the scope of kind %s %q: %w", gvk.Kind, gvk.GroupVersion(), err)
			if facts.IsUnreachable(err) {
				err = &facts.ReasonError{Reason: v1beta1.ReasonClusterUnreachable, Err: err}
			}
			return false, err
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
}

// builtinGroup reports API groups only Kubernetes itself serves: a
// CustomResourceDefinition's group needs a dot, and *.k8s.io groups are
// reserved.
func builtinGroup(group string) bool {
	return !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}
