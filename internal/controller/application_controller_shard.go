package controller

import (
	"context"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

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
func (r *ApplicationReconciler) adoptTrackers(ctx context.Context, app *v1beta1.Application) (bool, error) {
	if !r.Options.Sharding.Enabled {
		return false, nil
	}
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	if r.adopted.has(key) {
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
		r.adopted.add(key)
		return false, nil
	}
	n, err := r.Trackers.Adopt(ctx, ref)
	if err != nil {
		return false, err
	}
	if n > 0 {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Moved resource trackers into this shard", "shard", r.Options.Sharding.ShardID, "resourceTrackers", n)
	}
	r.adopted.add(key)
	return n > 0, nil
}

// notAdopted makes the next pass of app look for trackers outside the
// shard again: a tracker write found one the cache did not show
// (AlreadyExists), as when the Application came back from another shard
// that had moved its trackers.
func (r *ApplicationReconciler) notAdopted(app *v1beta1.Application, err error) {
	if r.Options.Sharding.Enabled && apierrors.IsAlreadyExists(err) {
		r.adopted.forget(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	}
}

// adoptedApps are the Applications whose trackers this process has moved
// into its shard (or found there).
type adoptedApps struct {
	mu   sync.Mutex
	apps map[types.NamespacedName]struct{}
}

func (a *adoptedApps) has(k types.NamespacedName) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.apps[k]
	return ok
}

func (a *adoptedApps) add(k types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.apps == nil {
		a.apps = map[types.NamespacedName]struct{}{}
	}
	a.apps[k] = struct{}{}
}

func (a *adoptedApps) forget(k types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.apps, k)
}
