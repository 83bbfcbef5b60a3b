package definition

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Pin splits a type that pins a definition revision, KubeVela's
// <definition>@v<revision> (webservice@v2, worker@v1.3.1), into the
// definition's name and the DefinitionRevision's name
// (<definition>-v<revision>). ok is false for a type that pins nothing.
func Pin(typ string) (name, revision string, ok bool) {
	name, rev, ok := strings.Cut(typ, "@v")
	if !ok || name == "" || rev == "" {
		return typ, "", false
	}
	return name, name + "-v" + rev, true
}

// CheckPin returns why a pinned type can never name a DefinitionRevision
// (its revision name is no valid object name), or nil.
func CheckPin(typ string) error {
	_, rev, ok := Pin(typ)
	if !ok {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(rev); len(errs) > 0 {
		return fmt.Errorf("type %q pins revision %q, which is no valid name: %s", typ, rev, strings.Join(errs, "; "))
	}
	return nil
}

// NewestInRange returns the revision a pinned type resolves to for an
// Application annotated app.oam.dev/autoUpdate: "true", as KubeVela
// resolves it ("use latest version in specified range"): among the
// revisions of kind t of definition name, the one named revName
// (<definition>-v<revision>) when there is one, else the newest, by
// semantic version, of those named revName.<more>: webservice@v1.2 takes
// webservice-v1.2.5 over webservice-v1.2.0 and never webservice-v1.3.0,
// webservice@v1 the newest 1.x. nil when none is in range. A revision
// whose name is no semantic version is out of every range.
func NewestInRange(revs []v1beta1.DefinitionRevision, t v1beta1.DefinitionType, name, revName string) *v1beta1.DefinitionRevision {
	var best *v1beta1.DefinitionRevision
	var bestV *semver.Version
	for i := range revs {
		rev := &revs[i]
		if rev.Spec.DefinitionType != t {
			continue
		}
		if rev.Name == revName {
			return rev
		}
		if !strings.HasPrefix(rev.Name, revName+".") {
			continue
		}
		v, err := semver.NewVersion(strings.TrimPrefix(rev.Name, name+"-"))
		if err != nil {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = rev, v
		}
	}
	return best
}

// TypeOf returns the DefinitionType of a definition object.
func TypeOf(def client.Object) v1beta1.DefinitionType {
	switch def.(type) {
	case *v1beta1.ComponentDefinition:
		return v1beta1.DefinitionTypeComponent
	case *v1beta1.TraitDefinition:
		return v1beta1.DefinitionTypeTrait
	case *v1beta1.PolicyDefinition:
		return v1beta1.DefinitionTypePolicy
	case *v1beta1.WorkflowStepDefinition:
		return v1beta1.DefinitionTypeWorkflowStep
	}
	return ""
}

// NameLabel is the label naming a revision's definition, per kind
// (KubeVela's keys).
func NameLabel(t v1beta1.DefinitionType) string {
	switch t {
	case v1beta1.DefinitionTypeComponent:
		return v1beta1.LabelComponentDefinitionName
	case v1beta1.DefinitionTypeTrait:
		return v1beta1.LabelTraitDefinitionName
	case v1beta1.DefinitionTypePolicy:
		return v1beta1.LabelPolicyDefinitionName
	case v1beta1.DefinitionTypeWorkflowStep:
		return v1beta1.LabelWorkflowStepDefinitionName
	}
	return ""
}

// SpecHash is the hash of a definition's spec that tells whether a
// revision holds it.
func SpecHash(def client.Object) string {
	var spec any
	switch d := def.(type) {
	case *v1beta1.ComponentDefinition:
		spec = d.Spec
	case *v1beta1.TraitDefinition:
		spec = d.Spec
	case *v1beta1.PolicyDefinition:
		spec = d.Spec
	case *v1beta1.WorkflowStepDefinition:
		spec = d.Spec
	}
	b, _ := json.Marshal(spec)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// NamedRevision returns the revision name a definition asks for: its
// spec.version (a semantic version, as KubeVela reads it) or its
// definitionrevision.oam.dev/name annotation; "" when it names none, and
// its revisions are numbered.
func NamedRevision(def client.Object) (string, error) {
	version := ""
	switch d := def.(type) {
	case *v1beta1.ComponentDefinition:
		version = d.Spec.Version
	case *v1beta1.TraitDefinition:
		version = d.Spec.Version
	case *v1beta1.PolicyDefinition:
		version = d.Spec.Version
	case *v1beta1.WorkflowStepDefinition:
		version = d.Spec.Version
	}
	if version != "" {
		v, err := semver.NewVersion(version)
		if err != nil {
			return "", fmt.Errorf("spec.version %q is no semantic version: %w", version, err)
		}
		return def.GetName() + "-v" + v.String(), nil
	}
	if n := def.GetAnnotations()[v1beta1.AnnotationDefinitionRevisionName]; n != "" {
		return def.GetName() + "-v" + n, nil
	}
	return "", nil
}

// Snapshot is the DefinitionRevision recording def's current spec as
// revision number num, named name.
func Snapshot(def client.Object, name string, num int64) *v1beta1.DefinitionRevision {
	t := TypeOf(def)
	rev := &v1beta1.DefinitionRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: def.GetNamespace(),
			Labels: map[string]string{NameLabel(t): def.GetName()}},
		Spec: v1beta1.DefinitionRevisionSpec{Revision: num, RevisionHash: SpecHash(def), DefinitionType: t},
	}
	meta := metav1.ObjectMeta{Name: def.GetName(), Namespace: def.GetNamespace(), Labels: def.GetLabels(), Annotations: withoutLastApplied(def.GetAnnotations())}
	switch d := def.(type) {
	case *v1beta1.ComponentDefinition:
		rev.Spec.ComponentDefinition = &v1beta1.ComponentDefinition{TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ComponentDefinition"}, ObjectMeta: meta, Spec: *d.Spec.DeepCopy()}
	case *v1beta1.TraitDefinition:
		rev.Spec.TraitDefinition = &v1beta1.TraitDefinition{TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "TraitDefinition"}, ObjectMeta: meta, Spec: *d.Spec.DeepCopy()}
	case *v1beta1.PolicyDefinition:
		rev.Spec.PolicyDefinition = &v1beta1.PolicyDefinition{TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "PolicyDefinition"}, ObjectMeta: meta, Spec: *d.Spec.DeepCopy()}
	case *v1beta1.WorkflowStepDefinition:
		rev.Spec.WorkflowStepDefinition = &v1beta1.WorkflowStepDefinition{TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "WorkflowStepDefinition"}, ObjectMeta: meta, Spec: *d.Spec.DeepCopy()}
	}
	return rev
}

func withoutLastApplied(in map[string]string) map[string]string {
	if _, ok := in["kubectl.kubernetes.io/last-applied-configuration"]; !ok {
		return in
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		if k != "kubectl.kubernetes.io/last-applied-configuration" {
			out[k] = v
		}
	}
	return out
}

// pinnedMeta is the metadata a definition read from a revision renders
// with: named after the pinned type (webservice@v2), so that its compiled
// templates are cached apart from the current definition's, and
// versioned by the revision, which never changes.
func pinnedMeta(rev *v1beta1.DefinitionRevision, typ string, in metav1.ObjectMeta) metav1.ObjectMeta {
	out := *in.DeepCopy()
	out.Name, out.Namespace = typ, rev.Namespace
	out.UID, out.ResourceVersion, out.Generation = rev.UID, rev.ResourceVersion, rev.Spec.Revision
	return out
}

// FromRevision returns the definition a revision holds, as the pinned
// type typ renders it, or nil when the revision holds no definition of
// the kind T.
func FromRevision[T any, PT interface {
	*T
	client.Object
}](rev *v1beta1.DefinitionRevision, typ string) PT {
	var out client.Object
	switch any(PT(new(T))).(type) {
	case *v1beta1.ComponentDefinition:
		if d := rev.Spec.ComponentDefinition; d != nil && rev.Spec.DefinitionType == v1beta1.DefinitionTypeComponent {
			c := &v1beta1.ComponentDefinition{TypeMeta: d.TypeMeta, ObjectMeta: pinnedMeta(rev, typ, d.ObjectMeta), Spec: *d.Spec.DeepCopy()}
			out = c
		}
	case *v1beta1.TraitDefinition:
		if d := rev.Spec.TraitDefinition; d != nil && rev.Spec.DefinitionType == v1beta1.DefinitionTypeTrait {
			out = &v1beta1.TraitDefinition{TypeMeta: d.TypeMeta, ObjectMeta: pinnedMeta(rev, typ, d.ObjectMeta), Spec: *d.Spec.DeepCopy()}
		}
	case *v1beta1.PolicyDefinition:
		if d := rev.Spec.PolicyDefinition; d != nil && rev.Spec.DefinitionType == v1beta1.DefinitionTypePolicy {
			out = &v1beta1.PolicyDefinition{TypeMeta: d.TypeMeta, ObjectMeta: pinnedMeta(rev, typ, d.ObjectMeta), Spec: *d.Spec.DeepCopy()}
		}
	case *v1beta1.WorkflowStepDefinition:
		if d := rev.Spec.WorkflowStepDefinition; d != nil && rev.Spec.DefinitionType == v1beta1.DefinitionTypeWorkflowStep {
			out = &v1beta1.WorkflowStepDefinition{TypeMeta: d.TypeMeta, ObjectMeta: pinnedMeta(rev, typ, d.ObjectMeta), Spec: *d.Spec.DeepCopy()}
		}
	}
	if out == nil {
		return nil
	}
	return out.(PT)
}
