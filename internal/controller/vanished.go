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
// the pass that added the finalizer reads the Application from the API
// server before it records anything, and when that pass finds the
// Application gone at its end, it deletes what it recorded itself.

// errVanished ends a pass whose Application is gone from the API server.
var errVanished = errors.New("the application was deleted as its finalizer was added")

// vanishedCleanupTimeout bounds how long a pass waits for the objects of a
// vanished Application to go: nothing would look at them again.
const vanishedCleanupTimeout = 30 * time.Second

// confirmPresent returns errVanished when the pass added the finalizer and
// the Application is no longer on the API server.
func (r *ApplicationReconciler) confirmPresent(ctx context.Context, s *scope) error {
	if !s.finalizerAdded {
		return nil
	}
	gone, err := r.vanished(ctx, s.app)
	if err != nil {
		return err
	}
	if gone {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Skipped the pass: the Application was deleted as its finalizer was added; nothing is recorded or applied")
		return errVanished
	}
	return nil
}

// vanished reports whether app is gone from the API server: not found,
// or replaced by a new Application of the same name.
func (r *ApplicationReconciler) vanished(ctx context.Context, app *v1beta1.Application) (bool, error) {
	reader := r.Trackers.Reader
	if reader == nil {
		reader = r.Client
	}
	live := &v1beta1.Application{}
	err := reader.Get(ctx, client.ObjectKeyFromObject(app), live)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return live.UID != app.UID, nil
}

// cleanUpVanished deletes what the pass of s recorded and applied when its
// Application turned out to be gone at the end of the pass, as finalize
// would have: it follows the Application's policies as the pass read them.
// Only a pass that added the finalizer can see this, so it never runs for
// an Application whose deletion Steward was told of.
func (r *ApplicationReconciler) cleanUpVanished(ctx context.Context, s *scope) {
	log := ctrl.LoggerFrom(ctx)
	if gone, err := r.vanished(ctx, s.app); !gone {
		if err != nil {
			log.Error(err, "Could not tell whether the Application was deleted as its finalizer was added")
		}
		return
	}
	log.V(decisionLevel).Info("The Application was deleted as its finalizer was added: deleting what this pass recorded")
	deadline := time.Now().Add(vanishedCleanupTimeout)
	for {
		ds := newScope(s.app)
		r.bindIdentity(ds)
		res, done, err := r.deleteRecorded(ctx, ds)
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
