package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// adoptTrackers moves the trackers of an Application into this replica's
// shard on its first pass in the process, when sharding is on: an
// Application assigned here from another shard (or from before sharding)
// brings its history, which this replica's label-selected cache would
// otherwise never show. It reports whether any tracker moved, so that the
// pass reads them from the API server. Each Application costs one list
// per process; the trackers of an Application that never moved are not
// written.
func (r *ApplicationReconciler) adoptTrackers(ctx context.Context, app *v1beta1.Application) (bool, error) {
	if !r.Options.Sharding.Enabled {
		return false, nil
	}
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	if r.adopted.has(key) {
		return false, nil
	}
	n, err := r.Trackers.Adopt(ctx, tracker.RefOf(app))
	if err != nil {
		return false, err
	}
	if n > 0 {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Moved resource trackers into this shard", "shard", r.Options.Sharding.ShardID, "resourceTrackers", n)
	}
	r.adopted.add(key)
	return n > 0, nil
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
