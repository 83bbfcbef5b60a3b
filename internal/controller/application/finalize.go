package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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
// event names them. It records what it did on the pass (facts.Pass): Reconcile's one
// deferred status write shows the deletion (phase deleting, Ready False
// with reason Deleting) and emits its events.
func (r *Reconciler) finalize(ctx context.Context, s *facts.Pass) (ctrl.Result, error) {
	app := s.App
	if !controllerutil.ContainsFinalizer(app, v1beta1.FinalizerResourceTracker) {
		s.Aborted = true // not ours to delete, nor to describe
		return ctrl.Result{}, nil
	}
	if gone, err := r.replacedOrGone(ctx, app); gone || err != nil {
		s.Aborted = true
		return ctrl.Result{}, err
	}
	s.Deleting = true
	if r.bindIdentity(s); s.IdentityErr != nil {
		return ctrl.Result{}, s.IdentityErr
	}
	if res, done, err := r.deleteRecorded(ctx, s, false); !done || err != nil {
		return res, err
	}
	if err := r.Revisions.Delete(ctx, app); err != nil {
		return ctrl.Result{}, err
	}
	r.Metrics.DeleteApp(app.Namespace, app.Name)
	// The last status is written while the Application is still ours:
	// once the finalizer goes, the name may already belong to another.
	err := r.patchStatus(ctx, s)
	s.StatusWritten, s.StatusErr = true, err
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
func (r *Reconciler) deleteRecorded(ctx context.Context, s *facts.Pass, ownOnly bool) (res ctrl.Result, done bool, err error) {
	app := s.App
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
	// The policies of the Application as it is now count too: a rule added
	// to a published version's spec is not rendered until the next
	// publishVersion, but it already says what must stay.
	rules, rulesErr := policy.Parse(app)
	if rulesErr != nil {
		rules = &policy.Rules{}
	}
	orphan := controllerutil.ContainsFinalizer(app, v1beta1.FinalizerOrphanResource)
	removal, err := inventory.Deletion(inventory.NewestFirst(string(app.UID), trackers), inventory.KeeperOf(app, rules), orphan)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	applier := r.applierFor(app)
	drop := map[tracker.Key]bool{}
	for _, d := range removal.Left {
		decisionlog.For(ctx, d.Key(), decisionlog.Decision).Info("Left in place on deletion", "component", d.Entry.Component, "reason", string(d.Why))
		drop[d.Key()] = true
	}
	for _, d := range removal.Released {
		if r.releaseEntry(ctx, s, applier, d.Entry) {
			drop[d.Key()] = true
		}
	}
	for k := range r.deleteInOrder(ctx, s, applier, removal.Doomed) {
		drop[k] = true
	}
	all := len(removal.Left) + len(removal.Released) + len(removal.Doomed)
	if !orphan && len(drop) == all {
		// Every object is gone: the Helm releases are uninstalled.
		if err := r.uninstallReleases(ctx, s, trackers); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	remaining, err := r.pruneTrackers(ctx, trackers, drop)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if remaining > 0 && !r.givingUp(app, s.GC.Failures) {
		if len(s.GC.Failures) > 0 {
			s.DeletionRetried = true
			return ctrl.Result{}, false, fmt.Errorf("deleting application %s/%s: %s", app.Namespace, app.Name, status.DescribeFailures(s.GC.Failures, 3))
		}
		return ctrl.Result{RequeueAfter: deletionPoll}, false, nil
	}
	for i := range records {
		if err := r.Trackers.Delete(ctx, &records[i]); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	if remaining > 0 {
		s.DeletionGaveUp = true
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
func (r *Reconciler) replacedOrGone(ctx context.Context, app *v1beta1.Application) (bool, error) {
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
func (r *Reconciler) releaseEntry(ctx context.Context, s *facts.Pass, applier apply.Applier, e v1beta1.ManagedResource) bool {
	c, err := s.Clients.GetClient(ctx, e.Cluster)
	if err == nil {
		_, err = applier.Release(ctx, c, tracker.Ref(e))
	}
	if err != nil && r.confirmGone(ctx, s, e, err) {
		return true
	}
	if err != nil {
		s.GC.Failures = append(s.GC.Failures, facts.Failure{Key: tracker.KeyOf(e), Component: e.Component, Reason: v1beta1.ReasonDeleteFailed, Err: err})
		return false
	}
	return true
}

// pruneTrackers drops the given entries from every tracker and deletes the
// trackers left empty. It returns the number of entries left.
func (r *Reconciler) pruneTrackers(ctx context.Context, trackers []v1beta1.ResourceTracker, drop map[tracker.Key]bool) (int, error) {
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
func (r *Reconciler) givingUp(app *v1beta1.Application, failures []facts.Failure) bool {
	if len(failures) == 0 || app.DeletionTimestamp == nil || time.Since(app.DeletionTimestamp.Time) < r.Options.DeletionTimeout {
		return false
	}
	for _, f := range failures {
		if !facts.IsUnreachable(f.Err) {
			return false
		}
	}
	return true
}

// An Application can vanish as its finalizer is added. A DELETE that the
// API server judged on a copy without finalizers removes the object even
// though Steward's finalizer write, which landed in between, succeeded
// (kubernetes/kubernetes#77988). Steward is then never asked to finalize,
// so a pass that went on to record and apply would leave its objects and
// trackers behind with no owner. Two guards keep that from happening:
// until the Application has a tracker of its own (its UID), each pass
// reads it from the API server before it records anything; and when such
// a pass finds the Application gone at its end, it deletes what the
// Application recorded itself.

// errVanished ends a pass whose Application is gone from the API server.
var errVanished = errors.New("the application was deleted as its finalizer was added")

// vanishedCleanupTimeout bounds how long a pass waits for the objects of a
// vanished Application to go: nothing would look at them again.
const vanishedCleanupTimeout = 10 * time.Second

// confirmPresent returns errVanished when the Application, which has no
// tracker of its own yet (or whose finalizer this pass added), is no
// longer on the API server, or was replaced by one of the same name.
func (r *Reconciler) confirmPresent(ctx context.Context, s *facts.Pass) error {
	if !s.FinalizerAdded && s.HasOwnTracker() {
		return nil
	}
	live, err := r.liveApp(ctx, s.App)
	if err != nil {
		return err
	}
	if live == nil || live.UID != s.App.UID {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped the pass: the Application was deleted as its finalizer was added; nothing is recorded or applied")
		return errVanished
	}
	s.Guarded = true
	return nil
}

// liveApp reads app from the API server; nil when it is not found.
func (r *Reconciler) liveApp(ctx context.Context, app *v1beta1.Application) (*v1beta1.Application, error) {
	reader := r.Trackers.Reader
	if reader == nil {
		reader = r.Client
	}
	live := &v1beta1.Application{}
	err := reader.Get(ctx, client.ObjectKeyFromObject(app), live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return live, nil
}

// cleanUpVanished deletes what the Application of s recorded (the trackers
// with its UID, and their objects) when its pass, guarded by
// confirmPresent, found it gone at the end. It follows the Application's
// policies as the pass read them, as finalize would have. It stops as soon
// as an Application of that name exists again: a new one takes over what
// is recorded under the name. What a pass could not delete within
// vanishedCleanupTimeout is logged and left recorded.
func (r *Reconciler) cleanUpVanished(ctx context.Context, s *facts.Pass) {
	log := ctrl.LoggerFrom(ctx)
	deadline := time.Now().Add(vanishedCleanupTimeout)
	for first := true; ; first = false {
		live, err := r.liveApp(ctx, s.App)
		if live != nil || err != nil {
			if err != nil {
				log.Error(err, "Could not tell whether the Application was deleted as its finalizer was added")
			}
			return
		}
		if first {
			log.V(decisionlog.Decision).Info("The Application was deleted as its finalizer was added: deleting what it recorded")
		}
		ds := facts.NewPass(s.App)
		if r.bindIdentity(ds); ds.IdentityErr != nil {
			log.Error(ds.IdentityErr, "Left the objects of an Application deleted as its finalizer was added: its identity cannot be used")
			return
		}
		res, done, err := r.deleteRecorded(ctx, ds, true)
		r.events().EmitDeletion(ds)
		if done && err == nil {
			r.Metrics.DeleteApp(s.App.Namespace, s.App.Name)
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log.Error(err, "Left objects of an Application deleted as its finalizer was added: they stay recorded in its resource trackers", "failures", status.DescribeFailures(ds.GC.Failures, 10))
			return
		}
		wait := res.RequeueAfter
		if wait <= 0 {
			wait = deletionPoll
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}
