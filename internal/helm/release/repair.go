package release

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/steward-oam/steward/api/v1beta1"
)

// RecordState is what Check finds of the record of a release revision.
type RecordState int

const (
	// RecordIntact: the record is there as Steward wrote it.
	RecordIntact RecordState = iota
	// RecordMissing: the record was deleted (by hand, or by a namespace
	// deleted and made again). Record writes it again.
	RecordMissing
	// RecordBroken: the record is there but no longer reads as Steward
	// wrote it (its body does not decode, or its labels were edited).
	// Record writes it again in place.
	RecordBroken
	// RecordForeign: the name now holds a Secret another Application or
	// someone else wrote. Steward leaves it alone.
	RecordForeign
)

// NeedsRecord reports whether the record must be written again.
func (s RecordState) NeedsRecord() bool { return s == RecordMissing || s == RecordBroken }

func (s RecordState) String() string {
	switch s {
	case RecordIntact:
		return "intact"
	case RecordMissing:
		return "missing"
	case RecordBroken:
		return "broken"
	}
	return "foreign"
}

// Check reads the record of revision rev of a release, as owner's
// Application left it, and says whether it is still intact. One read: a
// pass that keeps a release calls it to learn whether `helm list` still
// shows what Steward delivered, and renders the release again (which
// writes the record again) when it is missing or broken, as KubeVela
// installs a release again whose record is gone or corrupted.
func Check(ctx context.Context, c client.Reader, name, namespace string, rev int, owner map[string]string) (RecordState, error) {
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName(name, rev)}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return RecordMissing, nil
		}
		return 0, err
	}
	switch {
	case string(s.Type) != releaseType:
		return RecordForeign, nil
	case owns(s, owner):
		if intact(s, name, rev) {
			return RecordIntact, nil
		}
		return RecordBroken, nil
	case unclaimed(s):
		// Its Application labels were taken off by hand: Record takes it
		// back.
		return RecordBroken, nil
	}
	return RecordForeign, nil
}

// intact reports whether s reads as the record of revision rev of
// release name: Helm's labels, and a body that decodes to it.
func intact(s corev1.Secret, name string, rev int) bool {
	if s.Labels["owner"] != "helm" || s.Labels["name"] != name || s.Labels["version"] != strconv.Itoa(rev) {
		return false
	}
	rel, err := decode(s)
	return err == nil && rel.Name == name && rel.Version == rev
}

// EnsureNamespace creates a release's namespace when it is missing, as
// Helm's --create-namespace does (labelled name=<namespace>, as Helm
// labels it); like Helm, Steward never deletes it. A namespace deleted
// by hand is created again on the next pass that keeps the release. One
// still being deleted cannot be made again until it is gone: that is an
// error the pass retries. c acts as the Application's identity.
func EnsureNamespace(ctx context.Context, c client.Client, name string) (created bool, err error) {
	var ns corev1.Namespace
	err = c.Get(ctx, client.ObjectKey{Name: name}, &ns)
	switch {
	case err == nil && ns.DeletionTimestamp != nil:
		return false, fmt.Errorf("the release's namespace %q is being deleted; it is created again once it is gone", name)
	case err == nil:
		return false, nil
	case !apierrors.IsNotFound(err):
		return false, err
	}
	ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}}}
	if err := c.Create(ctx, &ns); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating the release's namespace %q: %w", name, err)
	}
	return true, nil
}

// Kept is a release a version delivered, as a pass that keeps it finds
// it: Repair's input.
type Kept struct {
	Name, Namespace string
	// AppNamespace is the namespace the placement rendered into.
	AppNamespace string
	// Params are the release's #Render parameters (createNamespace).
	Params json.RawMessage
	// Revision is the revision the version delivered (0: none recorded).
	Revision int
}

// Repair mends what someone did by hand to a release a version
// delivered, as KubeVela does: a release namespace deleted (with
// createNamespace, when it is not the Application's) is created again,
// and the state of the delivered revision's record is returned (Check):
// RecordMissing or RecordBroken asks the caller to render the version
// again, which writes it again. c acts as the Application's identity.
func Repair(ctx context.Context, c client.Client, k Kept, owner map[string]string) (RecordState, error) {
	if p, err := ParseParams(k.Params); err == nil && p.CreateNamespace() && k.Namespace != k.AppNamespace {
		created, err := EnsureNamespace(ctx, c, k.Namespace)
		if err != nil {
			return 0, err
		}
		if created {
			log.FromContext(ctx).V(1).Info("Created the release's namespace again (createNamespace); it was deleted", "release", k.Name, "namespace", k.Namespace)
		}
	}
	if k.Revision == 0 {
		return RecordIntact, nil
	}
	return Check(ctx, c, k.Name, k.Namespace, k.Revision, owner)
}

// EnsureCRDs creates the CustomResourceDefinitions of a chart's crds/
// (chart names it, "name-version") that the cluster behind c lacks, and
// returns the names of those it created. As Helm does, they are never
// upgraded nor deleted: a CRD's deletion deletes every object of its
// kind in the cluster, whoever made them. A failure is an *Error whose
// Reason is RenderFailed (not an object), Forbidden or ApplyFailed.
func EnsureCRDs(ctx context.Context, c client.Client, chart string, crds []json.RawMessage) ([]string, error) {
	fail := func(reason string, err error) error { return &Error{Reason: reason, Source: chart, Err: err} }
	var created []string
	for _, raw := range crds {
		crd := &unstructured.Unstructured{}
		if err := crd.UnmarshalJSON(raw); err != nil {
			return created, fail(v1beta1.ReasonRenderFailed, err)
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(crd.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, live)
		if err == nil {
			continue
		}
		if apierrors.IsNotFound(err) {
			err = c.Create(ctx, crd)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			reason := v1beta1.ReasonApplyFailed
			if apierrors.IsForbidden(err) {
				reason = v1beta1.ReasonForbidden
			}
			return created, fail(reason, fmt.Errorf("creating CustomResourceDefinition %s: %w", crd.GetName(), err))
		}
		if err == nil {
			created = append(created, crd.GetName())
		}
	}
	return created, nil
}
