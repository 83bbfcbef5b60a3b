package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefinitionType is the kind of definition a DefinitionRevision holds.
// +kubebuilder:validation:Enum=Component;Trait;Policy;WorkflowStep
type DefinitionType string

// The kinds of definition a DefinitionRevision holds (KubeVela's values).
const (
	DefinitionTypeComponent    DefinitionType = "Component"
	DefinitionTypeTrait        DefinitionType = "Trait"
	DefinitionTypePolicy       DefinitionType = "Policy"
	DefinitionTypeWorkflowStep DefinitionType = "WorkflowStep"
)

// Labels naming a DefinitionRevision's definition, KubeVela's keys, one
// per kind.
const (
	LabelComponentDefinitionName    = "componentdefinition.oam.dev/name"
	LabelTraitDefinitionName        = "trait.oam.dev/name"
	LabelPolicyDefinitionName       = "policydefinition.oam.dev/name"
	LabelWorkflowStepDefinitionName = "workflowstepdefinition.oam.dev/name"
)

// AnnotationDefinitionRevisionName on a definition names the revision its
// current spec is recorded as (<definition>-v<name>, pinned with
// type: <definition>@v<name>) instead of the next number.
const AnnotationDefinitionRevisionName = "definitionrevision.oam.dev/name"

// AnnotationAutoUpdate "true" on an Application renders it again when a
// definition it uses (and does not pin) changes.
const AnnotationAutoUpdate = "app.oam.dev/autoUpdate"

// DefinitionRevisionSpec is an immutable snapshot of one definition's
// spec, in KubeVela's shape: exactly one of the definition fields is set,
// the one DefinitionType names. The schema of each definition's metadata
// is KubeVela's (name, namespace, labels, annotations, finalizers: what
// vela def and VelaUX read from a revision; controller-gen's
// generateEmbeddedObjectMeta), so the API server keeps them.
type DefinitionRevisionSpec struct {
	// Revision is the revision's number, counted per definition from 1.
	Revision int64 `json:"revision"`
	// RevisionHash is the hash of the definition's spec.
	RevisionHash string `json:"revisionHash"`
	// DefinitionType is the kind of the definition.
	DefinitionType DefinitionType `json:"definitionType"`
	// ComponentDefinition is the snapshot of a ComponentDefinition.
	// +optional
	ComponentDefinition *ComponentDefinition `json:"componentDefinition,omitempty"`
	// TraitDefinition is the snapshot of a TraitDefinition.
	// +optional
	TraitDefinition *TraitDefinition `json:"traitDefinition,omitempty"`
	// PolicyDefinition is the snapshot of a PolicyDefinition.
	// +optional
	PolicyDefinition *PolicyDefinition `json:"policyDefinition,omitempty"`
	// WorkflowStepDefinition is the snapshot of a WorkflowStepDefinition.
	// +optional
	WorkflowStepDefinition *WorkflowStepDefinition `json:"workflowStepDefinition,omitempty"`
}

// DefinitionRevision records one version of a definition, so that an
// Application can pin it (type: webservice@v2) while the definition moves
// on. Steward writes one per change of a definition's spec and never
// changes it afterwards.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories={oam},shortName=defrev
// +kubebuilder:printcolumn:name="REVISION",type=integer,JSONPath=".spec.revision"
// +kubebuilder:printcolumn:name="HASH",type=string,JSONPath=".spec.revisionHash"
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=".spec.definitionType"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type DefinitionRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec DefinitionRevisionSpec `json:"spec,omitempty"`
}

// DefinitionRevisionList is a list of DefinitionRevisions.
// +kubebuilder:object:root=true
type DefinitionRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DefinitionRevision `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DefinitionRevision{}, &DefinitionRevisionList{})
}
