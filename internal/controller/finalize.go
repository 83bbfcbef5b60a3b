package controller

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/tracker"
)

// deletionPoll is how soon a deleting Application is looked at again while
// its objects are still terminating.
const deletionPoll = 2 * time.Second

// finalize deletes every object the Application's trackers record (except
// skipGC entries, and all of them when the orphan finalizer is set), then
// the trackers, then removes the finalizers. An entry is dropped only once
// its object is confirmed gone; a failed delete is retried.
func (r *ApplicationReconciler) finalize(ctx context.Context, app *v1beta1.Application) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(app, v1beta1.FinalizerResourceTracker) {
		return ctrl.Result{}, nil
	}
	s := newScope(app)
	orphan := controllerutil.ContainsFinalizer(app, v1beta1.FinalizerOrphanResource)
	trackers, err := r.Trackers.List(ctx, tracker.RefOf(app))
	if err != nil {
		return ctrl.Result{}, err
	}
	applier := apply.Applier{Owner: apply.Owner{Name: app.Name, Namespace: app.Namespace}}
	remaining := 0
	for i := range trackers {
		rt := &trackers[i]
		entries, err := tracker.Entries(rt)
		if err != nil {
			return ctrl.Result{}, err
		}
		drop := map[tracker.Key]bool{}
		for _, e := range entries {
			if orphan || e.SkipGC || r.deleteEntry(ctx, s, applier, e, &s.gc.failures) {
				drop[tracker.KeyOf(e)] = true
			}
		}
		left := tracker.Remove(entries, drop)
		remaining += len(left)
		if len(left) == 0 {
			if err := r.Trackers.Delete(ctx, rt); err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		if err := r.Trackers.Save(ctx, rt, left, 0); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(s.gc.failures) > 0 {
		return ctrl.Result{}, fmt.Errorf("deleting application %s/%s: %s", app.Namespace, app.Name, describeFailures(s.gc.failures, 3))
	}
	if remaining > 0 {
		return ctrl.Result{RequeueAfter: deletionPoll}, nil
	}
	patch := client.MergeFrom(app.DeepCopy())
	controllerutil.RemoveFinalizer(app, v1beta1.FinalizerResourceTracker)
	controllerutil.RemoveFinalizer(app, v1beta1.FinalizerOrphanResource)
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}
