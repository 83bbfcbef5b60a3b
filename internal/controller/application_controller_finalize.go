package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
)

// deletionPoll is how soon a deleting Application is looked at again while
// its objects are still terminating.
const deletionPoll = 2 * time.Second

// finalize deletes every object the Application's trackers record (except
// skipGC entries; with the orphan finalizer, objects are released instead:
// left in place without ownership labels), then the trackers, then removes
// the finalizers. An entry is dropped only once its object is confirmed
// gone. A failed delete is retried; only objects in a cluster that stays
// unreachable past --application-deletion-timeout are given up, and an
// event names them. It records what it did on the scope: Reconcile's one
// deferred status write shows the deletion (phase deleting, Ready False
// with reason Deleting) and emits its events.
func (r *ApplicationReconciler) finalize(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	if !controllerutil.ContainsFinalizer(app, v1beta1.FinalizerResourceTracker) {
		s.aborted = true // not ours to delete, nor to describe
		return ctrl.Result{}, nil
	}
	if gone, err := r.replacedOrGone(ctx, app); gone || err != nil {
		s.aborted = true
		return ctrl.Result{}, err
	}
	s.deleting = true
	if r.bindIdentity(s); s.identityErr != nil {
		return ctrl.Result{}, s.identityErr
	}
	if res, done, err := r.deleteRecorded(ctx, s, false); !done || err != nil {
		return res, err
	}
	r.warned.forget(app.Namespace + "/" + app.Name)
	r.Metrics.DeleteApp(app.Namespace, app.Name)
	// The last status is written while the Application is still ours:
	// once the finalizer goes, the name may already belong to another.
	err := r.patchStatus(ctx, s)
	s.statusWritten, s.statusErr = true, err
	if err != nil && !apierrors.IsNotFound(err) {
		// Kept until the status is written; endPass reports the failed
		// write as it does for every pass.
		return ctrl.Result{}, nil
	}
	// Guarded by the resourceVersion read: a finalizer another controller
	// added meanwhile is never dropped with ours.
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(app, v1beta1.FinalizerResourceTracker)
	controllerutil.RemoveFinalizer(app, v1beta1.FinalizerOrphanResource)
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// deleteRecorded deletes what the Application's trackers record, as
// finalize describes, then the trackers. done is false while objects are
// still terminating or a delete failed: res says when to look again.
//
// ownOnly limits it to the trackers the Application itself recorded (its
// UID label), leaving what an earlier Application of the same name left
// for a later one to take over.
func (r *ApplicationReconciler) deleteRecorded(ctx context.Context, s *scope, ownOnly bool) (res ctrl.Result, done bool, err error) {
	app := s.app
	// Read from the API server: a tracker the cache has not seen yet must
	// not be missed, or its objects would be orphaned.
	// A re-creation a stopped pass left half done is finished first, so
	// that the objects of its tracker are deleted with the others.
	if _, err := r.Trackers.RestoreRescuedFresh(ctx, tracker.RefOf(app)); err != nil {
		return ctrl.Result{}, false, err
	}
	trackers, err := r.Trackers.ListFresh(ctx, tracker.RefOf(app))
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if ownOnly {
		trackers = slices.DeleteFunc(trackers, func(rt v1beta1.ResourceTracker) bool {
			return rt.Labels[v1beta1.LabelAppUID] != string(app.UID)
		})
	}
	// Component-revision trackers are records, not objects: they go once
	// everything else is gone.
	var records []v1beta1.ResourceTracker
	trackers = slices.DeleteFunc(trackers, func(rt v1beta1.ResourceTracker) bool {
		if rt.Spec.Type == v1beta1.ResourceTrackerTypeComponentRevision {
			records = append(records, rt)
			return true
		}
		return false
	})
	all, err := inventory.Newest(newestFirst(app, trackers)...)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	// The policies of the Application as it is now count too: a rule added
	// to a published version's spec is not rendered until the next
	// publishVersion, but it already says what must stay.
	rules, rulesErr := policy.Parse(app)
	if rulesErr != nil {
		rules = &policy.Rules{}
	}
	types := componentTypes(app)
	applier := r.applierFor(app)
	drop := map[tracker.Key]bool{}
	var doomed []v1beta1.ManagedResource
	orphan := controllerutil.ContainsFinalizer(app, v1beta1.FinalizerOrphanResource)
	for _, e := range all {
		switch {
		case e.SkipGC || keptByPolicy(rules, resourceOf(e, types)):
			ctrl.LoggerFrom(ctx).V(1).Info("Left in place on deletion", "object", tracker.KeyOf(e).String(), "component", e.Component)
			drop[tracker.KeyOf(e)] = true
		case orphan:
			if r.releaseEntry(ctx, s, applier, e) {
				drop[tracker.KeyOf(e)] = true
			}
		default:
			doomed = append(doomed, e)
		}
	}
	for k := range r.deleteInOrder(ctx, s, applier, doomed, "application deleted") {
		drop[k] = true
	}
	if !orphan && len(drop) == len(all) {
		// Every object is gone: the Helm releases are uninstalled.
		if err := r.uninstallReleases(ctx, s, trackers); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	remaining, err := r.pruneTrackers(ctx, trackers, drop)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if remaining > 0 && !r.givingUp(app, s.gc.failures) {
		if len(s.gc.failures) > 0 {
			s.deletionRetried = true
			return ctrl.Result{}, false, fmt.Errorf("deleting application %s/%s: %s", app.Namespace, app.Name, describeFailures(s.gc.failures, 3))
		}
		return ctrl.Result{RequeueAfter: deletionPoll}, false, nil
	}
	for i := range records {
		if err := r.Trackers.Delete(ctx, &records[i]); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	if remaining > 0 {
		s.deletionGaveUp = true
		for i := range trackers {
			if err := r.Trackers.Delete(ctx, &trackers[i]); err != nil {
				return ctrl.Result{}, false, err
			}
		}
	}
	// Every tracker is gone: a rescue copy left by a stopped re-creation
	// must not outlive them, or an Application created later under this
	// name would take it back.
	if !ownOnly {
		if err := r.Trackers.DropRescued(ctx, tracker.RefOf(app)); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	return ctrl.Result{}, true, nil
}

// replacedOrGone reports whether the Application read from the cache is
// no longer on the API server: its finalizer was removed by hand, and
// perhaps an Application of the same name created since. A stale copy
// must not delete what the trackers of that name list: the new
// Application may want it.
func (r *ApplicationReconciler) replacedOrGone(ctx context.Context, app *v1beta1.Application) (bool, error) {
	if r.Trackers.Reader == nil {
		return false, nil
	}
	live, err := r.liveApp(ctx, app)
	if live == nil || err != nil {
		return err == nil, err
	}
	if live.UID != app.UID || live.DeletionTimestamp.IsZero() {
		ctrl.LoggerFrom(ctx).V(1).Info("Skipped finalizing a stale copy of the application", "uid", app.UID, "liveUID", live.UID)
		return true, nil
	}
	return false, nil
}

// releaseEntry strips the ownership labels of an entry's object; true when
// the entry can be dropped.
func (r *ApplicationReconciler) releaseEntry(ctx context.Context, s *scope, applier apply.Applier, e v1beta1.ManagedResource) bool {
	c, err := s.clients.GetClient(ctx, e.Cluster)
	if err == nil {
		_, err = applier.Release(ctx, c, tracker.Ref(e))
	}
	if err != nil && r.confirmGone(ctx, s, e, err) {
		return true
	}
	if err != nil {
		s.gc.failures = append(s.gc.failures, objectFailure{Key: tracker.KeyOf(e), Component: e.Component, Reason: v1beta1.ReasonDeleteFailed, Err: err})
		return false
	}
	return true
}

// pruneTrackers drops the given entries from every tracker and deletes the
// trackers left empty. It returns the number of entries left.
func (r *ApplicationReconciler) pruneTrackers(ctx context.Context, trackers []v1beta1.ResourceTracker, drop map[tracker.Key]bool) (int, error) {
	remaining := 0
	for i := range trackers {
		rt := &trackers[i]
		entries, err := tracker.Entries(rt)
		if err != nil {
			return 0, err
		}
		left := inventory.Remove(entries, drop)
		remaining += len(left)
		if len(left) == 0 {
			if err := r.Trackers.Delete(ctx, rt); err != nil {
				return 0, err
			}
			continue
		}
		if err := r.Trackers.Save(ctx, rt, left, 0); err != nil {
			return 0, err
		}
	}
	return remaining, nil
}

// givingUp reports whether the deletion has waited long enough on objects
// that only unreachable clusters hold.
func (r *ApplicationReconciler) givingUp(app *v1beta1.Application, failures []objectFailure) bool {
	if len(failures) == 0 || app.DeletionTimestamp == nil || time.Since(app.DeletionTimestamp.Time) < r.Options.DeletionTimeout {
		return false
	}
	for _, f := range failures {
		if !isUnreachable(f.Err) {
			return false
		}
	}
	return true
}

// newestFirst orders trackers by how recent their view of the
// Application is: its live version (the versioned tracker of this
// Application kept at the highest generation: each pass moves the live one
// to the Application's generation, a rollback included), root, the other
// versioned trackers of this Application by generation (newest first),
// then those of an earlier Application of the same name. The live version
// is not found by name: deleting an Application bumps its generation.
func newestFirst(app *v1beta1.Application, trackers []v1beta1.ResourceTracker) []*v1beta1.ResourceTracker {
	out := pointers(trackers)
	mine := func(rt *v1beta1.ResourceTracker) bool {
		return rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned && rt.Labels[v1beta1.LabelAppUID] == string(app.UID)
	}
	var live *v1beta1.ResourceTracker
	for _, rt := range out {
		if mine(rt) && (live == nil || rt.Spec.ApplicationGeneration > live.Spec.ApplicationGeneration) {
			live = rt
		}
	}
	rank := func(rt *v1beta1.ResourceTracker) int {
		switch {
		case rt == live:
			return 0
		case rt.Spec.Type == v1beta1.ResourceTrackerTypeRoot:
			return 1
		case mine(rt):
			return 2
		default:
			return 3
		}
	}
	slices.SortStableFunc(out, func(a, b *v1beta1.ResourceTracker) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return cmp.Compare(b.Spec.ApplicationGeneration, a.Spec.ApplicationGeneration)
	})
	return out
}

// keptByPolicy reports whether the resource policies say Steward must
// never delete r: a garbage-collect rule with strategy never, or a
// read-only rule.
func keptByPolicy(rules *policy.Rules, r policy.Resource) bool {
	return rules.GCStrategy(r) == policy.Never || rules.ReadOnly(r)
}
