package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// applyClientSide is Apply by the ClientSide method: create when missing,
// otherwise a three-way patch against the last-applied annotation,
// skipped when empty, as `kubectl apply` and KubeVela do.
func (a Applier) applyClientSide(ctx context.Context, c client.Client, desired *unstructured.Unstructured, opts Options) (Result, error) {
	modified, err := withLastApplied(desired)
	if err != nil {
		return Result{}, err
	}
	if opts.ExpectMissing && !opts.ReportOnly && !opts.Shared {
		created := modified.DeepCopy()
		err := c.Create(ctx, created)
		if err == nil {
			return Result{Action: Created, Live: created}, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return Result{}, fmt.Errorf("creating %s: %w", describe(desired), err)
		}
	}
	live, err := readLive(ctx, c, desired)
	if err != nil {
		return Result{}, err
	}
	if live == nil && opts.ReportOnly {
		return Result{Action: Missing}, nil
	}
	if live == nil {
		if opts.Shared {
			shared := desired.DeepCopy()
			setSharedBy(shared, a.Owner.key())
			if modified, err = withLastApplied(shared); err != nil {
				return Result{}, err
			}
		}
		if err := c.Create(ctx, modified); err != nil {
			return Result{}, fmt.Errorf("creating %s: %w", describe(desired), err)
		}
		return Result{Action: Created, Live: modified}, nil
	}
	want, done, err := a.forExisting(ctx, c, live, desired, opts)
	if done != nil {
		return *done, err
	}
	if modified, err = withLastApplied(want); err != nil {
		return Result{}, err
	}
	return patchTo(ctx, c, live, modified, opts.ReportOnly)
}

// patchTo patches live to modified (a three-way patch against live's
// last-applied configuration), skipping an empty patch; reportOnly
// computes it without sending it.
func patchTo(ctx context.Context, c client.Client, live, modified *unstructured.Unstructured, reportOnly bool) (Result, error) {
	pt, patch, err := threeWayPatch(modified.GroupVersionKind(), live, modified)
	if err != nil {
		return Result{Live: live}, fmt.Errorf("computing patch for %s: %w", describe(modified), err)
	}
	if string(patch) == "{}" {
		return Result{Action: Unchanged, Live: live}, nil
	}
	if reportOnly {
		return Result{Action: Drifted, Live: live, Patch: patch, Fields: PatchedFields(patch)}, nil
	}
	if err := c.Patch(ctx, live, client.RawPatch(pt, patch)); err != nil {
		return Result{}, fmt.Errorf("patching %s: %w", describe(modified), err)
	}
	return Result{Action: Configured, Live: live, Patch: patch, Fields: PatchedFields(patch)}, nil
}

// withLastApplied returns a copy of desired annotated with its own
// configuration, the "original" of the next three-way patch.
func withLastApplied(desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := desired.DeepCopy()
	ann := out.GetAnnotations()
	delete(ann, v1beta1.AnnotationLastApplied)
	if len(ann) == 0 {
		ann = nil
	}
	out.SetAnnotations(ann)
	raw, err := json.Marshal(out.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", describe(desired), err)
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[v1beta1.AnnotationLastApplied] = string(raw)
	out.SetAnnotations(ann)
	return out, nil
}

// threeWayPatch computes the patch from live to modified, deleting what the
// last applied configuration had and modified no longer has. Fields only
// the live object has (set by other controllers or defaults) are kept.
func threeWayPatch(gvk schema.GroupVersionKind, live, modified *unstructured.Unstructured) (types.PatchType, []byte, error) {
	original := []byte(live.GetAnnotations()[v1beta1.AnnotationLastApplied])
	if len(original) == 0 {
		original = []byte("{}")
	}
	modJSON, err := json.Marshal(modified.Object)
	if err != nil {
		return "", nil, err
	}
	curJSON, err := json.Marshal(live.Object)
	if err != nil {
		return "", nil, err
	}
	if typed, err := clientgoscheme.Scheme.New(gvk); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return "", nil, err
		}
		patch, err := strategicpatch.CreateThreeWayMergePatch(original, modJSON, curJSON, meta, true)
		return types.StrategicMergePatchType, patch, err
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modJSON, curJSON)
	return types.MergePatchType, patch, err
}
