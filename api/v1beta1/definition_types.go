package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Schematic holds the template a definition renders with.
type Schematic struct {
	// CUE is the CUE template of the definition.
	// +optional
	CUE *CUE `json:"cue,omitempty"`
}

// CUE is a CUE template.
type CUE struct {
	// Template is CUE source with parameter, output, outputs, patch and
	// status fields, as KubeVela defines them.
	Template string `json:"template"`
}

// Status describes how health and a status message are computed from the
// live objects.
type Status struct {
	// CustomStatus is CUE producing message.
	// +optional
	CustomStatus string `json:"customStatus,omitempty"`
	// HealthPolicy is CUE producing isHealth.
	// +optional
	HealthPolicy string `json:"healthPolicy,omitempty"`
	// Details is CUE producing a map of details.
	// +optional
	Details string `json:"details,omitempty"`
}

// WorkloadTypeDescriptor names the workload a ComponentDefinition renders.
type WorkloadTypeDescriptor struct {
	// Type is the workload type, for example deployments.apps or autodetects.core.oam.dev.
	// +optional
	Type string `json:"type,omitempty"`
	// Definition is the workload's apiVersion and kind.
	// +optional
	Definition WorkloadGVK `json:"definition,omitempty"`
}

// WorkloadGVK is an apiVersion and kind.
type WorkloadGVK struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// ChildResourceKind names a kind a workload creates (KubeVela compatibility).
type ChildResourceKind struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// +optional
	Selector map[string]string `json:"selector,omitempty"`
}

// DefinitionReference names a CRD a definition stands for.
type DefinitionReference struct {
	Name string `json:"name"`
	// +optional
	Version string `json:"version,omitempty"`
}

// DefinitionStatus reports whether a definition's template compiles.
type DefinitionStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (the template compiles).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LatestRevision is the DefinitionRevision holding the definition's
	// current spec (absent while definition revisions are turned off).
	// +optional
	LatestRevision *Revision `json:"latestRevision,omitempty"`
}

// ComponentDefinitionSpec defines how a component type renders.
type ComponentDefinitionSpec struct {
	// Version, a semantic version, names the DefinitionRevision of this
	// spec (<name>-v<version>, pinned with type: <name>@v<version>).
	// +optional
	Version string `json:"version,omitempty"`
	// Workload describes the workload's kind.
	Workload WorkloadTypeDescriptor `json:"workload"`
	// ChildResourceKinds is accepted for compatibility.
	// +optional
	ChildResourceKinds []ChildResourceKind `json:"childResourceKinds,omitempty"`
	// RevisionLabel is accepted for compatibility.
	// +optional
	RevisionLabel string `json:"revisionLabel,omitempty"`
	// PodSpecPath is accepted for compatibility.
	// +optional
	PodSpecPath string `json:"podSpecPath,omitempty"`
	// Status computes health and messages.
	// +optional
	Status *Status `json:"status,omitempty"`
	// Schematic is the template.
	// +optional
	Schematic *Schematic `json:"schematic,omitempty"`
	// Extension is accepted for compatibility.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Extension *runtime.RawExtension `json:"extension,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=comp,categories=oam
// +kubebuilder:printcolumn:name="WORKLOAD-KIND",type=string,JSONPath=`.spec.workload.definition.kind`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="DESCRIPTION",type=string,JSONPath=`.metadata.annotations.definition\.oam\.dev/description`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ComponentDefinition is a component type: a CUE template that renders a
// workload and auxiliary objects from properties.
type ComponentDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ComponentDefinitionSpec `json:"spec,omitempty"`
	Status DefinitionStatus        `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ComponentDefinitionList is a list of ComponentDefinitions.
type ComponentDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ComponentDefinition `json:"items"`
}

// TraitStage orders traits: PreDispatch, default, PostDispatch.
type TraitStage string

// Trait stages.
const (
	TraitStagePreDispatch  TraitStage = "PreDispatch"
	TraitStageDefault      TraitStage = "DefaultDispatch"
	TraitStagePostDispatch TraitStage = "PostDispatch"
)

// TraitDefinitionSpec defines how a trait patches a workload or adds objects.
type TraitDefinitionSpec struct {
	// Version, a semantic version, names the DefinitionRevision of this
	// spec (<name>-v<version>, pinned with type: <name>@v<version>).
	// +optional
	Version string `json:"version,omitempty"`
	// Reference is accepted for compatibility.
	// +optional
	Reference DefinitionReference `json:"definitionRef,omitempty"`
	// RevisionEnabled is accepted for compatibility.
	// +optional
	RevisionEnabled bool `json:"revisionEnabled,omitempty"`
	// WorkloadRefPath is accepted for compatibility.
	// +optional
	WorkloadRefPath string `json:"workloadRefPath,omitempty"`
	// PodDisruptive tells users the trait restarts pods.
	// +optional
	PodDisruptive bool `json:"podDisruptive,omitempty"`
	// AppliesToWorkloads lists workload types the trait applies to.
	// +optional
	AppliesToWorkloads []string `json:"appliesToWorkloads,omitempty"`
	// ConflictsWith lists traits that cannot be used together.
	// +optional
	ConflictsWith []string `json:"conflictsWith,omitempty"`
	// ManageWorkload is accepted for compatibility.
	// +optional
	ManageWorkload bool `json:"manageWorkload,omitempty"`
	// ControlPlaneOnly is accepted for compatibility.
	// +optional
	ControlPlaneOnly bool `json:"controlPlaneOnly,omitempty"`
	// Status computes health and messages.
	// +optional
	Status *Status `json:"status,omitempty"`
	// Schematic is the template.
	// +optional
	Schematic *Schematic `json:"schematic,omitempty"`
	// Stage orders the trait.
	// +optional
	Stage TraitStage `json:"stage,omitempty"`
	// Extension is accepted for compatibility.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Extension *runtime.RawExtension `json:"extension,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=trait,categories=oam
// +kubebuilder:printcolumn:name="APPLIES-TO",type=string,JSONPath=`.spec.appliesToWorkloads`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="DESCRIPTION",type=string,JSONPath=`.metadata.annotations.definition\.oam\.dev/description`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// TraitDefinition is a trait type: a CUE template that patches a workload or
// renders auxiliary objects.
type TraitDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TraitDefinitionSpec `json:"spec,omitempty"`
	Status DefinitionStatus    `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TraitDefinitionList is a list of TraitDefinitions.
type TraitDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TraitDefinition `json:"items"`
}

// PolicyDefinitionSpec defines a policy type.
type PolicyDefinitionSpec struct {
	// Version, a semantic version, names the DefinitionRevision of this
	// spec (<name>-v<version>, pinned with type: <name>@v<version>).
	// +optional
	Version string `json:"version,omitempty"`
	// Reference is accepted for compatibility.
	// +optional
	Reference DefinitionReference `json:"definitionRef,omitempty"`
	// Schematic is the template.
	// +optional
	Schematic *Schematic `json:"schematic,omitempty"`
	// ManageHealthCheck is accepted for compatibility.
	// +optional
	ManageHealthCheck bool `json:"manageHealthCheck,omitempty"`
	// Scope is KubeVela's policy scope: "" for policies that shape
	// delivery or render objects, "Application" for policies that
	// transform the Application before it is rendered. Steward does not
	// carry out Application-scoped policies: an Application using one is
	// refused (reason UnsupportedPolicy), and the definition reports it.
	// +optional
	Scope string `json:"scope,omitempty"`
	// Global is KubeVela's global policy: applied to every Application of
	// its namespace (of every namespace in the system namespace). Steward
	// does not apply global policies: the definition reports it
	// (Ready=False, reason UnsupportedPolicy, and a Warning event).
	// +optional
	Global bool `json:"global,omitempty"`
	// Priority orders global policies; accepted for compatibility.
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// PolicyScopeApplication is KubeVela's scope of a policy that transforms
// the Application before it is rendered.
const PolicyScopeApplication = "Application"

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=def-policy,categories=oam
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="DESCRIPTION",type=string,JSONPath=`.metadata.annotations.definition\.oam\.dev/description`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// PolicyDefinition is a policy type.
type PolicyDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PolicyDefinitionSpec `json:"spec,omitempty"`
	Status DefinitionStatus     `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PolicyDefinitionList is a list of PolicyDefinitions.
type PolicyDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PolicyDefinition `json:"items"`
}

// WorkflowStepDefinitionSpec defines a workflow step type.
type WorkflowStepDefinitionSpec struct {
	// Reference is accepted for compatibility.
	// +optional
	Reference DefinitionReference `json:"definitionRef,omitempty"`
	// Schematic is the template: CUE that reads parameter and context and
	// calls KubeVela's provider actions (import "vela/kube", "vela/http",
	// ...) when the step runs.
	// +optional
	Schematic *Schematic `json:"schematic,omitempty"`
	// Version, a semantic version, names the DefinitionRevision of this
	// spec (<name>-v<version>, pinned with type: <name>@v<version>).
	// +optional
	Version string `json:"version,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=workflowstep,categories=oam
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="DESCRIPTION",type=string,JSONPath=`.metadata.annotations.definition\.oam\.dev/description`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// WorkflowStepDefinition is a workflow step type: a CUE template run when
// an Application's workflow reaches a step (or sub-step) of its name. The
// step types Steward runs natively (deploy, suspend, apply-component,
// apply-object, step-group, depends-on-app, apply-application) keep their
// built-in behaviour even when a definition of that name is installed.
type WorkflowStepDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkflowStepDefinitionSpec `json:"spec,omitempty"`
	Status DefinitionStatus           `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkflowStepDefinitionList is a list of WorkflowStepDefinitions.
type WorkflowStepDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkflowStepDefinition `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ComponentDefinition{}, &ComponentDefinitionList{},
		&TraitDefinition{}, &TraitDefinitionList{},
		&PolicyDefinition{}, &PolicyDefinitionList{},
		&WorkflowStepDefinition{}, &WorkflowStepDefinitionList{})
}
