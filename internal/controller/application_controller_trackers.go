package controller

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
)

// rescueTrackers re-creates the trackers of an Application that someone
// deleted by hand, and protects trackers written before Steward put its
// finalizer on them. Steward's finalizer holds a tracker deleted by
// someone else (a deletion timestamp while the finalizer is still on);
// the pass replaces it with a copy of itself, entries included, before
// anything else looks at the trackers, so no object it listed (garbage
// still to collect, objects kept for the Application's lifetime) is
// orphaned and the version it records is not rendered again.
func (r *ApplicationReconciler) rescueTrackers(ctx context.Context, s *scope, all []v1beta1.ResourceTracker) ([]v1beta1.ResourceTracker, error) {
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
				s.tookOver(ctx, "Replaced KubeVela's finalizer on its resource tracker", "replaced KubeVela's finalizer on resource tracker "+rt.Name, "resourceTracker", rt.Name)
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
		s.recreated = append(s.recreated, fresh.Name)
		*rt = *fresh
	}
	return all, nil
}

// listTrackers lists the Application's trackers after finishing any
// re-creation a stopped pass left half done (see tracker.Recreate); when
// one was finished, the list is read from the API server, which the cache
// may not have caught up with.
func (r *ApplicationReconciler) listTrackers(ctx context.Context, s *scope) ([]v1beta1.ResourceTracker, error) {
	ref := tracker.RefOf(s.app)
	restored, err := r.Trackers.RestoreRescued(ctx, ref)
	if err != nil {
		return nil, err
	}
	if len(restored) == 0 && !s.readFresh {
		return r.Trackers.List(ctx, ref)
	}
	for _, name := range restored {
		ctrl.LoggerFrom(ctx).V(1).Info("Re-created a resource tracker from its rescue copy", "resourceTracker", name)
	}
	s.recreated = append(s.recreated, restored...)
	return r.Trackers.ListFresh(ctx, ref)
}

// releaseOrphanTrackers lets trackers go that someone deletes after their
// Application is gone: there is nothing to re-create them for. The
// Application is looked up on the API server first, so that a cache that
// has not seen it yet does not release a tracker it still needs.
func (r *ApplicationReconciler) releaseOrphanTrackers(ctx context.Context, key client.ObjectKey) error {
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
func (r *ApplicationReconciler) loadTrackers(ctx context.Context, s *scope) error {
	all, err := r.listTrackers(ctx, s)
	if err != nil {
		s.setRetry(err)
		return err
	}
	if all, err = r.rescueTrackers(ctx, s, all); err != nil {
		s.setRetry(err)
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
			s.kubevelaRoots = append(s.kubevelaRoots, rt)
		} else {
			s.older = append(s.older, rt)
		}
		return true
	})
	current := tracker.Current(all, s.app)
	for i := range all {
		rt := all[i]
		switch rt.Spec.Type {
		case v1beta1.ResourceTrackerTypeRoot:
			s.root = &rt
		case v1beta1.ResourceTrackerTypeComponentRevision:
			s.comprev = &rt
		case v1beta1.ResourceTrackerTypeVersioned:
			if rt.Labels[v1beta1.LabelAppUID] == string(s.app.UID) {
				s.newestGeneration = max(s.newestGeneration, rt.Spec.ApplicationGeneration)
			}
			if i == current {
				s.current = &rt
			} else {
				s.older = append(s.older, rt)
			}
		}
	}
	if s.rules, s.rulesErr = policy.Parse(s.app); s.rulesErr != nil {
		s.rules = &policy.Rules{}
	}
	return nil
}
