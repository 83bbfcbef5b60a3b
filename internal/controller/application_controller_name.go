package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/steward-oam/steward/api/v1beta1"
)

// nameError says why an Application's name cannot be used: every object
// Steward creates for it, trackers included, carries the name as the value
// of the app.oam.dev/name label, and label values are limited to 63
// characters while object names may have 253. Refusing the Application
// (KubeVela fails on the first write, with an API error) is what a user
// can act on; hashing the value would break every tool that selects an
// Application's objects by that label.
func nameError(app *v1beta1.Application) error {
	if errs := validation.IsValidLabelValue(app.Name); len(errs) > 0 {
		return fmt.Errorf("the name is %d characters long, but it is written as the label %s on every object the Application creates, and label values may have at most %d characters: recreate the Application with a shorter name",
			len(app.Name), v1beta1.LabelAppName, validation.LabelValueMaxLength)
	}
	return nil
}

// releaseUnnamed lets an Application whose name nameError refuses go: no
// tracker or object can carry its name, so nothing was created and there
// is nothing to finalize. Only a finalizer added before the name was
// checked (an earlier Steward version) is removed.
func (r *ApplicationReconciler) releaseUnnamed(ctx context.Context, app *v1beta1.Application) error {
	if !controllerutil.ContainsFinalizer(app, v1beta1.FinalizerResourceTracker) {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Removed finalizer of an Application whose name no object can carry", "reason", v1beta1.ReasonInvalidName)
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(app, v1beta1.FinalizerResourceTracker)
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing finalizer of %s/%s: %w", app.Namespace, app.Name, err))
	}
	return nil
}
