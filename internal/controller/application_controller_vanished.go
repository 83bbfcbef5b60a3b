package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

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
func (r *ApplicationReconciler) confirmPresent(ctx context.Context, s *scope) error {
	if !s.finalizerAdded && s.hasOwnTracker() {
		return nil
	}
	live, err := r.liveApp(ctx, s.app)
	if err != nil {
		return err
	}
	if live == nil || live.UID != s.app.UID {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Skipped the pass: the Application was deleted as its finalizer was added; nothing is recorded or applied")
		return errVanished
	}
	s.guarded = true
	return nil
}

// hasOwnTracker reports whether a tracker the pass loaded carries the
// Application's UID.
func (s *scope) hasOwnTracker() bool {
	uid := string(s.app.UID)
	for _, rt := range []*v1beta1.ResourceTracker{s.current, s.root, s.comprev} {
		if rt != nil && rt.Labels[v1beta1.LabelAppUID] == uid {
			return true
		}
	}
	for i := range s.older {
		if s.older[i].Labels[v1beta1.LabelAppUID] == uid {
			return true
		}
	}
	return false
}

// liveApp reads app from the API server; nil when it is not found.
func (r *ApplicationReconciler) liveApp(ctx context.Context, app *v1beta1.Application) (*v1beta1.Application, error) {
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
func (r *ApplicationReconciler) cleanUpVanished(ctx context.Context, s *scope) {
	log := ctrl.LoggerFrom(ctx)
	deadline := time.Now().Add(vanishedCleanupTimeout)
	for first := true; ; first = false {
		live, err := r.liveApp(ctx, s.app)
		if live != nil || err != nil {
			if err != nil {
				log.Error(err, "Could not tell whether the Application was deleted as its finalizer was added")
			}
			return
		}
		if first {
			log.V(decisionLevel).Info("The Application was deleted as its finalizer was added: deleting what it recorded")
		}
		ds := newScope(s.app)
		if r.bindIdentity(ds); ds.identityErr != nil {
			log.Error(ds.identityErr, "Left the objects of an Application deleted as its finalizer was added: its identity cannot be used")
			return
		}
		res, done, err := r.deleteRecorded(ctx, ds, true)
		r.emitDeletionEvents(ds)
		if done && err == nil {
			r.warned.forget(s.app.Namespace + "/" + s.app.Name)
			r.Metrics.DeleteApp(s.app.Namespace, s.app.Name)
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log.Error(err, "Left objects of an Application deleted as its finalizer was added: they stay recorded in its resource trackers", "failures", describeFailures(ds.gc.failures, 10))
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
