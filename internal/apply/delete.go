package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Delete deletes the object named by ref (kind, namespace, name) in the
// cluster behind c, but only when the live object still carries this
// Application's ownership labels: an object someone else owns, or one that
// was never ours, is Skipped. The delete carries the UID and
// resourceVersion read, so an object replaced in between is never deleted.
// Gone means the object no longer exists; Deleted means deletion was
// accepted and may still be in progress (finalizers).
func (a Applier) Delete(ctx context.Context, c client.Client, ref *unstructured.Unstructured) (Result, error) {
	live, err := readLive(ctx, c, ref)
	if err != nil {
		return Result{}, err
	}
	if live == nil {
		return Result{Action: Gone}, nil
	}
	if !a.Owns(live) {
		// Not ours to delete; if we were one of its sharers, leave.
		if _, err := a.leaveShared(ctx, c, live); err != nil {
			return Result{}, err
		}
		return Result{Action: Skipped, Live: live}, nil
	}
	if others, err := a.leaveShared(ctx, c, live); err != nil || others {
		// Another Application shares it: ownership moved on, nothing to delete.
		return Result{Action: Skipped, Live: live}, err
	}
	if live.GetDeletionTimestamp() != nil {
		return Result{Action: Terminating, Live: live}, nil
	}
	uid, rv := live.GetUID(), live.GetResourceVersion()
	err = c.Delete(ctx, live, client.Preconditions{UID: &uid, ResourceVersion: &rv}, client.PropagationPolicy("Background"))
	if apierrors.IsNotFound(err) {
		return Result{Action: Gone}, nil
	}
	if err != nil {
		return Result{Live: live}, fmt.Errorf("deleting %s: %w", describe(ref), err)
	}
	return Result{Action: Deleted, Live: live}, nil
}
