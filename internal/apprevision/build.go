package apprevision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Definitions are the definitions an Application's version used, each
// keyed by its name (the type the Application names, without @version).
type Definitions struct {
	Components map[string]*v1beta1.ComponentDefinition
	Traits     map[string]*v1beta1.TraitDefinition
	Policies   map[string]*v1beta1.PolicyDefinition
	Steps      map[string]*v1beta1.WorkflowStepDefinition
	// ReferredObjects are the objects ref-objects components read.
	ReferredObjects []runtime.RawExtension
}

// kubectlLastApplied is kubectl's copy of what it applied; a revision
// needs it no more than a tracker does, and it is as big as the spec.
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// NameOf is the name of an Application's n-th revision, <app>-v<n>, as
// KubeVela names it (its CLI reads the number back from the name).
func NameOf(app string, n int64) string { return app + "-v" + strconv.FormatInt(n, 10) }

// NumberOf reads the revision number back from a revision's name, false
// when the name does not end in -v<n>.
func NumberOf(name string) (int64, bool) { return tracker.RevisionNumber(name) }

// Build returns revision n of app: the Application as it is (without its
// status, managed fields and last-applied copies) and the definitions it
// used, with KubeVela's labels (app.oam.dev/name, the revision hash),
// the Application's labels and annotations, and the Application as its
// controlling owner. The result is uncompressed; Encode packs it.
func Build(app *v1beta1.Application, defs Definitions, n int64) (*v1beta1.ApplicationRevision, error) {
	if app == nil {
		return nil, fmt.Errorf("no Application")
	}
	if n < 1 {
		return nil, fmt.Errorf("revision number %d: want 1 or more", n)
	}
	snap := app.DeepCopy()
	snap.Status = v1beta1.ApplicationStatus{}
	snap.ManagedFields = nil
	snap.APIVersion, snap.Kind = v1beta1.GroupVersion.String(), "Application"
	snap.Annotations = withoutLastApplied(snap.Annotations)
	if snap.Spec.Components == nil {
		snap.Spec.Components = []v1beta1.ApplicationComponent{}
	}
	fields := v1beta1.ApplicationRevisionFields{
		Application:     *snap,
		ReferredObjects: defs.ReferredObjects,
	}
	putDefinitions(&fields, defs)
	hash, err := Hash(&fields)
	if err != nil {
		return nil, err
	}
	rev := &v1beta1.ApplicationRevision{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ApplicationRevision"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        NameOf(app.Name, n),
			Namespace:   app.Namespace,
			Labels:      map[string]string{},
			Annotations: withoutLastApplied(app.Annotations),
		},
		Spec: v1beta1.ApplicationRevisionSpec{ApplicationRevisionFields: fields},
	}
	for k, v := range app.Labels {
		rev.Labels[k] = v
	}
	rev.Labels[v1beta1.LabelAppName] = app.Name
	rev.Labels[v1beta1.LabelAppRevisionHash] = hash
	if app.UID != "" {
		rev.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: v1beta1.GroupVersion.String(), Kind: "Application",
			Name: app.Name, UID: app.UID, Controller: ptr.To(true),
		}}
	}
	return rev, nil
}

// Hash is the revision hash of fields: 16 hex digits of the SHA-256 of
// the Application's spec and of each recorded definition's spec, by
// name. Metadata (labels, annotations, publishVersion) does not count,
// as in KubeVela: a new publishVersion of the same spec is told apart by
// its annotation, not its hash.
func Hash(fields *v1beta1.ApplicationRevisionFields) (string, error) {
	type specs struct {
		App        v1beta1.ApplicationSpec                       `json:"app"`
		Components map[string]v1beta1.ComponentDefinitionSpec    `json:"components,omitempty"`
		Traits     map[string]v1beta1.TraitDefinitionSpec        `json:"traits,omitempty"`
		Policies   map[string]v1beta1.PolicyDefinitionSpec       `json:"policies,omitempty"`
		Steps      map[string]v1beta1.WorkflowStepDefinitionSpec `json:"steps,omitempty"`
		External   map[string]runtime.RawExtension               `json:"external,omitempty"`
		Workflow   *runtime.RawExtension                         `json:"workflow,omitempty"`
		Referred   []runtime.RawExtension                        `json:"referred,omitempty"`
	}
	s := specs{App: fields.Application.Spec, External: fields.Policies, Workflow: fields.Workflow, Referred: fields.ReferredObjects}
	if len(fields.ComponentDefinitions) > 0 {
		s.Components = map[string]v1beta1.ComponentDefinitionSpec{}
		for k, d := range fields.ComponentDefinitions {
			s.Components[k] = d.Spec
		}
	}
	if len(fields.TraitDefinitions) > 0 {
		s.Traits = map[string]v1beta1.TraitDefinitionSpec{}
		for k, d := range fields.TraitDefinitions {
			s.Traits[k] = d.Spec
		}
	}
	if len(fields.PolicyDefinitions) > 0 {
		s.Policies = map[string]v1beta1.PolicyDefinitionSpec{}
		for k, d := range fields.PolicyDefinitions {
			s.Policies[k] = d.Spec
		}
	}
	if len(fields.WorkflowStepDefinitions) > 0 {
		s.Steps = map[string]v1beta1.WorkflowStepDefinitionSpec{}
		for k, d := range fields.WorkflowStepDefinitions {
			s.Steps[k] = d.Spec
		}
	}
	// encoding/json writes map keys sorted, so equal specs hash equal.
	raw, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("hashing the revision: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8]), nil
}

// PublishVersionOf is the publishVersion a revision (or an Application)
// was made with, empty when it had none.
func PublishVersionOf(o metav1.Object) string {
	return o.GetAnnotations()[v1beta1.AnnotationPublishVersion]
}

func withoutLastApplied(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		if k == kubectlLastApplied || k == v1beta1.AnnotationLastApplied {
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// putDefinitions records defs in fields: whole, with their metadata, but
// without status, managed fields and last-applied copies.
func putDefinitions(fields *v1beta1.ApplicationRevisionFields, defs Definitions) {
	for name, d := range defs.Components {
		if d == nil {
			continue
		}
		c := d.DeepCopy()
		c.Status, c.ManagedFields = v1beta1.DefinitionStatus{}, nil
		c.Annotations = withoutLastApplied(c.Annotations)
		c.APIVersion, c.Kind = v1beta1.GroupVersion.String(), "ComponentDefinition"
		if fields.ComponentDefinitions == nil {
			fields.ComponentDefinitions = map[string]*v1beta1.ComponentDefinition{}
		}
		fields.ComponentDefinitions[name] = c
	}
	for name, d := range defs.Traits {
		if d == nil {
			continue
		}
		c := d.DeepCopy()
		c.Status, c.ManagedFields = v1beta1.DefinitionStatus{}, nil
		c.Annotations = withoutLastApplied(c.Annotations)
		c.APIVersion, c.Kind = v1beta1.GroupVersion.String(), "TraitDefinition"
		if fields.TraitDefinitions == nil {
			fields.TraitDefinitions = map[string]*v1beta1.TraitDefinition{}
		}
		fields.TraitDefinitions[name] = c
	}
	for name, d := range defs.Policies {
		if d == nil {
			continue
		}
		c := d.DeepCopy()
		c.Status, c.ManagedFields = v1beta1.DefinitionStatus{}, nil
		c.Annotations = withoutLastApplied(c.Annotations)
		c.APIVersion, c.Kind = v1beta1.GroupVersion.String(), "PolicyDefinition"
		if fields.PolicyDefinitions == nil {
			fields.PolicyDefinitions = map[string]v1beta1.PolicyDefinition{}
		}
		fields.PolicyDefinitions[name] = *c
	}
	for name, d := range defs.Steps {
		if d == nil {
			continue
		}
		c := d.DeepCopy()
		c.Status, c.ManagedFields = v1beta1.DefinitionStatus{}, nil
		c.Annotations = withoutLastApplied(c.Annotations)
		c.APIVersion, c.Kind = v1beta1.GroupVersion.String(), "WorkflowStepDefinition"
		if fields.WorkflowStepDefinitions == nil {
			fields.WorkflowStepDefinitions = map[string]*v1beta1.WorkflowStepDefinition{}
		}
		fields.WorkflowStepDefinitions[name] = c
	}
}

// Refill records defs again in a revision Thin made superseded, when it
// is live again (a rollback to its publishVersion), and re-encodes it
// with compression. It says whether the revision changed.
func Refill(rev *v1beta1.ApplicationRevision, defs Definitions, compression v1beta1.CompressionType) (bool, error) {
	if _, thin := rev.Annotations[AnnotationDefinitionsDropped]; !thin {
		return false, nil
	}
	fields, err := Decode(rev)
	if err != nil {
		return false, err
	}
	putDefinitions(&fields, defs)
	rev.Spec = v1beta1.ApplicationRevisionSpec{ApplicationRevisionFields: fields}
	delete(rev.Annotations, AnnotationDefinitionsDropped)
	return true, Encode(rev, compression)
}
