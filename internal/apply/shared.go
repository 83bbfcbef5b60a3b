package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

func (o Owner) key() string { return o.Namespace + "/" + o.Name }

func sharedBy(obj *unstructured.Unstructured) []string {
	v := obj.GetAnnotations()[v1beta1.AnnotationSharedBy]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func setSharedBy(obj *unstructured.Unstructured, sharers ...string) {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[v1beta1.AnnotationSharedBy] = strings.Join(sharers, ",")
	obj.SetAnnotations(ann)
}

func addSharer(list []string, key string) []string {
	if slices.Contains(list, key) {
		return list
	}
	return append(list, key)
}

// joinShared adds this Application to the shared-by list of an object
// another Application owns and writes; the content is left to the owner.
func (a Applier) joinShared(ctx context.Context, c client.Client, live *unstructured.Unstructured) (Result, error) {
	list := sharedBy(live)
	owner := live.GetLabels()[v1beta1.LabelAppNamespace] + "/" + live.GetLabels()[v1beta1.LabelAppName]
	if len(list) == 0 {
		list = []string{owner}
	}
	if slices.Contains(list, a.Owner.key()) {
		return Result{Action: Unchanged, Live: live}, nil
	}
	list = append(list, a.Owner.key())
	if err := patchMeta(ctx, c, live, map[string]any{"annotations": map[string]any{v1beta1.AnnotationSharedBy: strings.Join(list, ",")}}); err != nil {
		return Result{}, fmt.Errorf("joining the sharers of %s: %w", describe(live), err)
	}
	return Result{Action: Configured, Live: live}, nil
}

// leaveShared removes this Application from the sharers of live and, when
// it owned the object, hands ownership to the next sharer. It reports
// false when no other Application shares the object, so the caller deletes
// it.
func (a Applier) leaveShared(ctx context.Context, c client.Client, live *unstructured.Unstructured) (bool, error) {
	all := sharedBy(live)
	list := slices.DeleteFunc(slices.Clone(all), func(k string) bool { return k == a.Owner.key() || k == "" })
	if len(list) == 0 {
		return false, nil
	}
	if !slices.Contains(all, a.Owner.key()) && !a.Owns(live) {
		return true, nil
	}
	metadata := map[string]any{"annotations": map[string]any{v1beta1.AnnotationSharedBy: strings.Join(list, ",")}}
	if a.Owns(live) {
		ns, name, _ := strings.Cut(list[0], "/")
		// The next owner's shard writes its own shard label on its
		// next pass.
		metadata["labels"] = map[string]any{v1beta1.LabelAppName: name, v1beta1.LabelAppNamespace: ns, v1beta1.LabelScheduledShardID: nil}
	}
	if err := patchMeta(ctx, c, live, metadata); err != nil {
		return true, fmt.Errorf("leaving the sharers of %s: %w", describe(live), err)
	}
	return true, nil
}

// Release strips this Application's ownership labels and last-applied
// configuration from the object so that it is left in place, owned by
// nobody (orphaned on purpose).
func (a Applier) Release(ctx context.Context, c client.Client, ref *unstructured.Unstructured) (Result, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(ref.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(ref), live); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return Result{Action: Gone}, nil
		}
		return Result{}, fmt.Errorf("reading %s: %w", describe(ref), err)
	}
	if !a.Owns(live) {
		return Result{Action: Skipped, Live: live}, nil
	}
	labels := map[string]any{v1beta1.LabelAppName: nil, v1beta1.LabelAppNamespace: nil, v1beta1.LabelAppComponent: nil,
		v1beta1.LabelScheduledShardID: nil}
	// The last-applied configuration goes too: it would make the object
	// look like one whose labels were removed by hand (see lastApplied),
	// and an Application re-created under the same name would take back
	// what this one let go.
	annotations := map[string]any{v1beta1.AnnotationLastApplied: nil}
	metadata := map[string]any{"labels": labels, "annotations": annotations}
	// So do Steward's field manager's entries: they would make the object
	// look like one Steward applied server-side (see appliedServerSide).
	if kept, changed := withoutFieldManager(live.GetManagedFields()); changed {
		metadata["managedFields"] = kept
	}
	if err := patchMeta(ctx, c, live, metadata); err != nil {
		return Result{}, fmt.Errorf("releasing %s: %w", describe(ref), err)
	}
	return Result{Action: Skipped, Live: live}, nil
}

// withoutFieldManager returns the managed fields entries of other
// managers, and whether Steward's field manager had any. An empty list
// is written as one empty entry, which is how the API server is told to
// clear them (an empty list keeps them).
func withoutFieldManager(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool) {
	kept := slices.DeleteFunc(slices.Clone(entries), func(e metav1.ManagedFieldsEntry) bool { return e.Manager == FieldManager })
	if len(kept) == len(entries) {
		return nil, false
	}
	if len(kept) == 0 {
		kept = []metav1.ManagedFieldsEntry{{}}
	}
	return kept, true
}

// patchMeta merge-patches metadata of live, guarded by its resourceVersion.
func patchMeta(ctx context.Context, c client.Client, live *unstructured.Unstructured, metadata map[string]any) error {
	metadata["resourceVersion"] = live.GetResourceVersion()
	patch, err := jsonMarshal(map[string]any{"metadata": metadata})
	if err != nil {
		return err
	}
	return c.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldManager))
}
