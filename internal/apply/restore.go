package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Restore repairs drift of an object Steward applied before, without
// applying anything new: the live object is brought back to what Steward
// last applied to it, whichever version that was, keeping the
// KeepLiveFields. What was last applied is the object's last-applied
// annotation when it has one (an object last applied client-side);
// otherwise, by the ServerSide method, last (the manifest of the version
// that applied it; nil when unknown). A missing object is Missing and is
// not created; an object with nothing to restore to, or a shared one, is
// left Unchanged; one owned by another Application is an
// *OwnershipError. ref names the object (kind, namespace, name).
func (a Applier) Restore(ctx context.Context, c client.Client, ref, last *unstructured.Unstructured, opts Options) (Result, error) {
	live, err := readLive(ctx, c, ref)
	if err != nil {
		return Result{}, err
	}
	if live == nil {
		return Result{Action: Missing}, nil
	}
	if live.GetAnnotations()[v1beta1.AnnotationSharedBy] != "" || slices.Contains(opts.KeepLiveFields, "*") {
		return Result{Action: Unchanged, Live: live}, nil
	}
	var desired *unstructured.Unstructured
	if raw := live.GetAnnotations()[v1beta1.AnnotationLastApplied]; raw != "" {
		desired = &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(raw), &desired.Object); err != nil {
			return Result{Live: live}, fmt.Errorf("reading the last-applied configuration of %s: %w", describe(live), err)
		}
	} else if a.Method != ClientSide && last != nil {
		desired = a.prepare(last)
	}
	if desired == nil {
		return Result{Action: Unchanged, Live: live}, nil
	}
	if err := a.checkOwner(live, Options{}); err != nil {
		return Result{Live: live}, err
	}
	a.keepLive(desired, live, opts.KeepLiveFields)
	if a.Method == ClientSide {
		modified, err := withLastApplied(desired)
		if err != nil {
			return Result{}, err
		}
		return patchTo(ctx, c, live, modified, opts.ReportOnly)
	}
	return a.applyTo(ctx, c, live, desired, opts.ReportOnly)
}
