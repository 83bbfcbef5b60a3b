package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// AppendKey appends an encoding of o to b, for a digest of what an apply
// would do: two Options encode alike exactly when they are equal (nil and
// empty KeepLiveFields alike). It is what StateKeep digests on every entry
// of every pass, so it costs no formatting.
func (o Options) AppendKey(b []byte) []byte {
	for _, f := range [...]bool{o.TakeOver, o.Shared, o.ReportOnly, o.ExpectMissing} {
		if f {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	}
	for _, p := range o.KeepLiveFields {
		b = strconv.AppendInt(append(b, ' '), int64(len(p)), 10)
		b = append(append(b, ':'), p...)
	}
	return b
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
	// Method is how objects are written: ServerSide (the default) or
	// ClientSide.
	Method Method
}

// Method is how the Applier writes objects.
type Method string

const (
	// ServerSide applies with server-side apply as FieldManager: the API
	// server merges the manifest into the object, removes what Steward
	// applied before and the manifest dropped, and records which fields
	// Steward manages.
	ServerSide Method = "server-side"
	// ClientSide is KubeVela's method: a three-way patch computed against
	// the last configuration applied, kept in an annotation.
	ClientSide Method = "client-side"
)

// FieldManager is Steward's field manager in server-side apply, and of
// the metadata patches (shared-by lists, ownership hand-overs) it sends.
const FieldManager = "steward"

// ParseMethod checks a method named by a flag.
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case ServerSide, ClientSide:
		return m, nil
	case "":
		return ServerSide, nil
	default:
		return "", fmt.Errorf("unknown apply method %q: use %s or %s", s, ServerSide, ClientSide)
	}
}

// Apply makes the live object match desired in the cluster behind c:
// create it when missing, otherwise write what differs, nothing when
// nothing does. desired must carry the ownership labels. An object owned
// by another Application, or by none without TakeOver, is not touched and
// an *OwnershipError is returned.
func (a Applier) Apply(ctx context.Context, c client.Client, desired *unstructured.Unstructured, opts Options) (Result, error) {
	desired = a.prepare(desired)
	if a.Method == ClientSide {
		return a.applyClientSide(ctx, c, desired, opts)
	}
	return a.applyServerSide(ctx, c, desired, opts)
}

// prepare returns a copy of desired as it is written: normalized, with
// the shard label.
func (a Applier) prepare(desired *unstructured.Unstructured) *unstructured.Unstructured {
	out := normalize(desired)
	if a.Shard != "" {
		labels := out.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1beta1.LabelScheduledShardID] = a.Shard
		out.SetLabels(labels)
	}
	return out
}

// forExisting returns what to write to the existing object live, and
// whether anything should be: an object another Application writes is
// joined (shared) and an object not ours refused; the apply-once fields
// take their live values.
func (a Applier) forExisting(ctx context.Context, c client.Client, live, desired *unstructured.Unstructured, opts Options) (*unstructured.Unstructured, *Result, error) {
	if opts.Shared && !a.Owns(live) && live.GetLabels()[v1beta1.LabelAppName] != "" {
		res, err := a.joinShared(ctx, c, live)
		return nil, &res, err
	}
	if err := a.checkOwner(live, opts); err != nil {
		return nil, &Result{Live: live}, err
	}
	if slices.Contains(opts.KeepLiveFields, "*") {
		return nil, &Result{Action: Unchanged, Live: live}, nil
	}
	if len(opts.KeepLiveFields) > 0 || opts.Shared {
		desired = desired.DeepCopy()
		a.keepLive(desired, live, opts.KeepLiveFields)
		if opts.Shared {
			setSharedBy(desired, addSharer(sharedBy(live), a.Owner.key())...)
		}
	}
	return desired, nil, nil
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
	if name == "" && (opts.TakeOver || a.lastApplied(live) || a.appliedServerSide(live)) {
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

// appliedServerSide reports whether live, which has no ownership labels,
// is one Steward applied server-side and never let go: Steward's field
// manager still holds applied fields (Release drops them with the labels)
// and a component label left on it names the same component. Server-side
// apply keeps no copy of the manifest on the object, so which Application
// applied it is not recorded beyond the labels: the Application whose
// trackers record the object takes its labels back. With the ClientSide
// method only the last-applied annotation counts.
func (a Applier) appliedServerSide(live *unstructured.Unstructured) bool {
	if a.Method == ClientSide {
		return false
	}
	for _, e := range live.GetManagedFields() {
		if e.Manager == FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return true
		}
	}
	return false
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
