package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

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

// Owner is the Application objects are applied for.
type Owner struct {
	Name      string
	Namespace string
}

// Options change how one object is applied.
type Options struct {
	// TakeOver adopts an existing object no Application owns.
	TakeOver bool
	// KeepLiveFields are field paths ("spec.replicas",
	// "spec.template.spec.containers[0].image") whose live values win over
	// the manifest (apply-once). "*" leaves an existing object alone.
	KeepLiveFields []string
	// Shared lets several Applications share the object: the first one
	// writes it, the others only join its shared-by list.
	Shared bool
	// ReportOnly computes what would change without writing: a missing
	// object is Missing, a patch to send is Drifted.
	ReportOnly bool
	// ExpectMissing tries to create the object before reading it: one
	// request instead of two for an object no version had before. An
	// object that exists after all is handled as usual.
	ExpectMissing bool
}

// Applier applies objects for one Application.
type Applier struct {
	Owner Owner
	// Shard, when set, is written as the shard label
	// (v1beta1.LabelScheduledShardID) on every object Apply creates or
	// patches: with sharding, each replica's watch-mode informers select
	// its own shard's objects, and a moved Application's objects follow it
	// on its new shard's first pass.
	Shard string
}

// Apply makes the live object match desired in the cluster behind c: create
// when missing, otherwise a three-way patch that is skipped when empty.
// desired must carry the ownership labels. An object owned by another
// Application, or by none without TakeOver, is not touched and an
// *OwnershipError is returned.
func (a Applier) Apply(ctx context.Context, c client.Client, desired *unstructured.Unstructured, opts Options) (Result, error) {
	desired = normalize(desired)
	if a.Shard != "" {
		labels := desired.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1beta1.LabelScheduledShardID] = a.Shard
		desired.SetLabels(labels)
	}
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
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(desired.GroupVersionKind())
	err = c.Get(ctx, client.ObjectKeyFromObject(desired), live)
	if apierrors.IsNotFound(err) && opts.ReportOnly {
		return Result{Action: Missing}, nil
	}
	if apierrors.IsNotFound(err) {
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
	if err != nil {
		return Result{}, fmt.Errorf("reading %s: %w", describe(desired), err)
	}
	if opts.Shared && !a.Owns(live) && live.GetLabels()[v1beta1.LabelAppName] != "" {
		return a.joinShared(ctx, c, live)
	}
	if err := a.checkOwner(live, opts); err != nil {
		return Result{Live: live}, err
	}
	if slices.Contains(opts.KeepLiveFields, "*") {
		return Result{Action: Unchanged, Live: live}, nil
	}
	if len(opts.KeepLiveFields) > 0 || opts.Shared {
		desired = desired.DeepCopy()
		keepLiveFields(desired, live, opts.KeepLiveFields)
		if opts.Shared {
			setSharedBy(desired, addSharer(sharedBy(live), a.Owner.key())...)
		}
		if modified, err = withLastApplied(desired); err != nil {
			return Result{}, err
		}
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
		return Result{Action: Drifted, Live: live, Patch: patch}, nil
	}
	if err := c.Patch(ctx, live, client.RawPatch(pt, patch)); err != nil {
		return Result{}, fmt.Errorf("patching %s: %w", describe(modified), err)
	}
	return Result{Action: Configured, Live: live, Patch: patch}, nil
}

// Owns reports whether the live object carries this Application's
// ownership labels.
func (a Applier) Owns(live *unstructured.Unstructured) bool {
	l := live.GetLabels()
	return l[v1beta1.LabelAppName] == a.Owner.Name && l[v1beta1.LabelAppNamespace] == a.Owner.Namespace
}

func (a Applier) checkOwner(live *unstructured.Unstructured, opts Options) error {
	if a.Owns(live) {
		return nil
	}
	l := live.GetLabels()
	name, ns := l[v1beta1.LabelAppName], l[v1beta1.LabelAppNamespace]
	if name == "" && (opts.TakeOver || a.lastApplied(live)) {
		return nil
	}
	return &OwnershipError{Object: describe(live), OwnerName: name, OwnerNamespace: ns}
}

// lastApplied reports whether live, which has no ownership labels, was
// last applied by this Application: its last-applied configuration, which
// Steward writes with every create and patch, names it in the ownership
// labels. Someone removed the labels by hand, which is drift to repair
// like any other, in this process or after a restart. Release strips the
// annotation with the labels, so an object let go on purpose stays
// unowned; an object another Application owns has labels and is never
// taken.
func (a Applier) lastApplied(live *unstructured.Unstructured) bool {
	raw := live.GetAnnotations()[v1beta1.AnnotationLastApplied]
	if raw == "" {
		return false
	}
	var last struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(raw), &last); err != nil {
		return false
	}
	l := last.Metadata.Labels
	return l[v1beta1.LabelAppName] == a.Owner.Name && l[v1beta1.LabelAppNamespace] == a.Owner.Namespace
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

// describe names an object for messages: "Deployment default/web".
func describe(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if obj.GetNamespace() == "" {
		return kind + " " + obj.GetName()
	}
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// readLive reads the live object ref names (kind, namespace, name); nil
// when it does not exist.
func readLive(ctx context.Context, c client.Client, ref *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(ref.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(ref), live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", describe(ref), err)
	}
	return live, nil
}

// Restore repairs drift of an object Steward applied before, without
// applying anything new: the live object is patched back to its own
// last-applied configuration (what Steward last wrote to it, whichever
// version that was), keeping the KeepLiveFields. A missing object is
// Missing and is not created; an object with no last-applied
// configuration, or a shared one, is left Unchanged; one owned by another
// Application is an *OwnershipError. ref names the object (kind,
// namespace, name).
func (a Applier) Restore(ctx context.Context, c client.Client, ref *unstructured.Unstructured, opts Options) (Result, error) {
	live, err := readLive(ctx, c, ref)
	if err != nil {
		return Result{}, err
	}
	if live == nil {
		return Result{Action: Missing}, nil
	}
	raw := live.GetAnnotations()[v1beta1.AnnotationLastApplied]
	if raw == "" || live.GetAnnotations()[v1beta1.AnnotationSharedBy] != "" || slices.Contains(opts.KeepLiveFields, "*") {
		return Result{Action: Unchanged, Live: live}, nil
	}
	if err := a.checkOwner(live, Options{}); err != nil {
		return Result{Live: live}, err
	}
	desired := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(raw), &desired.Object); err != nil {
		return Result{Live: live}, fmt.Errorf("reading the last-applied configuration of %s: %w", describe(live), err)
	}
	keepLiveFields(desired, live, opts.KeepLiveFields)
	modified, err := withLastApplied(desired)
	if err != nil {
		return Result{}, err
	}
	return patchTo(ctx, c, live, modified, opts.ReportOnly)
}
