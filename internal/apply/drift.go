package apply

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/steward-oam/steward/api/v1beta1"
)

// toTyped converts obj with its kind's schema when it is a kind client-go
// knows (associative lists keyed as the API server keys them, see
// schemas.go), else deduced (maps granular, lists atomic), as the API
// server treats a custom resource whose schema says nothing more.
func toTyped(obj *unstructured.Unstructured) (*typed.TypedValue, error) {
	if t := builtinTypes.typeOf(obj.GroupVersionKind()); t != nil {
		tv, err := t.FromUnstructured(obj.Object, typed.AllowDuplicates)
		if err == nil {
			return tv, nil
		}
	}
	return typed.DeducedParseableType.FromUnstructured(obj.Object)
}

// serverOwned are the paths the API server never records as any manager's
// fields; a manifest carrying them is not judged by them.
var serverOwned = []string{"creationTimestamp", "uid", "resourceVersion", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// comparable returns desired without the fields the comparison ignores:
// the server-owned metadata and the status, which an apply of the object
// does not write.
func comparable(desired *unstructured.Unstructured) *unstructured.Unstructured {
	out := desired.DeepCopy()
	for _, f := range serverOwned {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	delete(out.Object, "status")
	return out
}

// withoutBookkeeping returns a shallow copy of live without its managed
// fields and status, which the comparison does not look at: converting
// them is most of the cost of a large object's comparison.
func withoutBookkeeping(live *unstructured.Unstructured) *unstructured.Unstructured {
	obj := maps.Clone(live.Object)
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "managedFields")
		obj["metadata"] = md
	}
	return &unstructured.Unstructured{Object: obj}
}

// pruneEmpty removes, recursively, the empty maps and lists and the null
// values of m, and reports whether it removed any.
func pruneEmpty(m map[string]any) bool {
	pruned := false
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
			pruned = true
		case map[string]any:
			if pruneEmpty(x) {
				pruned = true
			}
			if len(x) == 0 {
				delete(m, k)
				pruned = true
			}
		case []any:
			for _, item := range x {
				if im, ok := item.(map[string]any); ok && pruneEmpty(im) {
					pruned = true
				}
			}
			if len(x) == 0 {
				delete(m, k)
				pruned = true
			}
		}
	}
	return pruned
}

// identity paths are in every manifest and never in a manager's fields.
var identity = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
)

// serverSideDrift judges, without a request, whether applying desired
// server-side would change live, and names what would change:
//   - a field of the manifest missing from live or with another value;
//   - a field Steward applied before that the manifest no longer has (the
//     apply removes it);
//   - the client-side last-applied annotation (the object is upgraded).
//
// Fields only other managers set (an HPA's replicas, an injected sidecar,
// defaults) are not drift. Lists of custom resources compare whole (as
// their schema most often says), and a field Steward applied is dropped
// only when no parent of it is in the manifest. An object that cannot be compared is reported
// as drifted, so it is applied: the apply itself is then the judge.
func serverSideDrift(desired, live *unstructured.Unstructured) []string {
	var out []string
	if live.GetAnnotations()[v1beta1.AnnotationLastApplied] != "" {
		out = append(out, "metadata.annotations."+v1beta1.AnnotationLastApplied)
	}
	base := comparable(desired)
	d, err := toTyped(base)
	if err != nil {
		return append(out, fmt.Sprintf("(the manifest cannot be compared: %v)", err))
	}
	// Values: empty maps and lists, which the API server does not keep
	// for built-in kinds, are compared as absent.
	dv := d
	if values := base.DeepCopy(); pruneEmpty(values.Object) {
		if dv, err = toTyped(values); err != nil {
			return append(out, fmt.Sprintf("(the manifest cannot be compared: %v)", err))
		}
	}
	l, err := toTyped(withoutBookkeeping(live))
	if err != nil {
		return append(out, fmt.Sprintf("(the live object cannot be compared: %v)", err))
	}
	cmp, err := dv.Compare(l)
	if err != nil {
		return append(out, fmt.Sprintf("(cannot compare: %v)", err))
	}
	changed := cmp.Removed.Union(cmp.Modified)
	want, err := d.ToFieldSet()
	if err != nil {
		return append(out, fmt.Sprintf("(cannot list the manifest's fields: %v)", err))
	}
	want = want.Difference(identity)
	// Fields Steward applied that the manifest dropped. (A field another
	// manager took with the same value is not drift: they want it too.)
	applied, _ := ownedFields(live.GetManagedFields())
	applied.Leaves().Difference(want).Iterate(func(p fieldpath.Path) {
		if !coveredBy(want, p) {
			changed.Insert(p)
		}
	})
	changed.Leaves().Iterate(func(p fieldpath.Path) {
		out = append(out, pathString(p))
	})
	sort.Strings(out)
	return out
}

// ownedFields returns the fields Steward's field manager applied
// (operation Apply) and all it manages (Apply, and Update for the metadata
// it patches: shared-by lists, ownership hand-overs).
func ownedFields(entries []metav1.ManagedFieldsEntry) (applied, owned *fieldpath.Set) {
	applied, owned = &fieldpath.Set{}, &fieldpath.Set{}
	for _, e := range entries {
		if e.Manager != FieldManager || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(strings.NewReader(string(e.FieldsV1.Raw))); err != nil {
			continue
		}
		if e.Operation == metav1.ManagedFieldsOperationApply {
			applied = applied.Union(s)
		}
		owned = owned.Union(s)
	}
	return applied, owned
}

// coveredBy reports whether set holds p or a parent of p.
func coveredBy(set *fieldpath.Set, p fieldpath.Path) bool {
	for i := len(p); i > 0; i-- {
		if set.Has(p[:i]) {
			return true
		}
	}
	return false
}

// pathString writes a field path as drift reports name fields:
// "spec.replicas", `spec.template.spec.containers[name="web"].image`.
func pathString(p fieldpath.Path) string {
	return strings.TrimPrefix(p.String(), ".")
}

// keepLive makes the apply-once paths of desired leave the live object's
// values alone. By the ClientSide method they take the live values. By
// the ServerSide method a field Steward manages takes its live value (so
// the apply neither changes nor removes it), and any other is left out of
// the apply, to whichever manager set it.
func (a Applier) keepLive(desired, live *unstructured.Unstructured, paths []string) {
	keepLiveFields(desired, live, paths)
	if a.Method == ClientSide || len(paths) == 0 {
		return
	}
	_, owned := ownedFields(live.GetManagedFields())
	all, err := fieldsOf(desired)
	if err != nil {
		return
	}
	for _, p := range paths {
		steps := parsePath(p)
		if len(steps) == 0 {
			continue
		}
		without := desired.DeepCopy()
		remove(without.Object, steps)
		rest, err := fieldsOf(without)
		if err != nil {
			continue
		}
		if all.Difference(rest).Intersection(owned).Empty() {
			remove(desired.Object, steps)
			all = rest
		}
	}
}

// fieldsOf lists the fields of obj as the API server would.
func fieldsOf(obj *unstructured.Unstructured) (*fieldpath.Set, error) {
	tv, err := toTyped(comparable(obj))
	if err != nil {
		return nil, err
	}
	return tv.ToFieldSet()
}
