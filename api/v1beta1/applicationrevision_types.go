package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// LabelAppRevisionHash is the hash of what an ApplicationRevision
// records (the Application's spec and the definitions it used), on the
// revision; KubeVela's name.
const LabelAppRevisionHash = "app.oam.dev/app-revision-hash"

// ApplicationRevisionFields are the fields of a revision that compression
// packs into spec.compression.data (KubeVela's
// ApplicationRevisionCompressibleFields, field for field).
//
// The snapshots are free-form in the schema: a recorded definition keeps
// its metadata (name, annotations: what `vela revision get -d` prints),
// and a compressed revision's stub Application needs no apiVersion.
type ApplicationRevisionFields struct {
	// Application is the Application as it was when the revision was
	// made, without its status.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Application Application `json:"application"`

	// ComponentDefinitions are the component definitions the
	// Application used, by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	ComponentDefinitions map[string]*ComponentDefinition `json:"componentDefinitions,omitempty"`

	// WorkloadDefinitions are KubeVela's workload definitions; Steward
	// has none and leaves it empty.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	WorkloadDefinitions map[string]runtime.RawExtension `json:"workloadDefinitions,omitempty"`

	// TraitDefinitions are the trait definitions the Application used.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	TraitDefinitions map[string]*TraitDefinition `json:"traitDefinitions,omitempty"`

	// PolicyDefinitions are the policy definitions the Application used.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	PolicyDefinitions map[string]PolicyDefinition `json:"policyDefinitions,omitempty"`

	// WorkflowStepDefinitions are the workflow step definitions the
	// Application's workflow used.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	WorkflowStepDefinitions map[string]*WorkflowStepDefinition `json:"workflowStepDefinitions,omitempty"`

	// Policies are external Policy objects the Application referred to
	// (KubeVela's core.oam.dev/v1alpha1 Policy), by name.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Policies map[string]runtime.RawExtension `json:"policies,omitempty"`

	// Workflow is an external Workflow object the Application referred
	// to (KubeVela's core.oam.dev/v1alpha1 Workflow).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Workflow *runtime.RawExtension `json:"workflow,omitempty"`

	// ReferredObjects are the objects ref-objects components referred to.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	ReferredObjects []runtime.RawExtension `json:"referredObjects,omitempty"`
}

// ApplicationRevisionCompression holds the compressible fields packed:
// Data is the base64 of the gzip or zstd of their JSON, the encoding of
// KubeVela's CompressedText, so KubeVela's clients decode it.
type ApplicationRevisionCompression struct {
	// Type of compression; empty means the fields are stored as they are.
	// +optional
	Type CompressionType `json:"type,omitempty"`
	// Data is the base64 of the compressed JSON of the fields.
	// +optional
	Data string `json:"data,omitempty"`
}

// ApplicationRevisionSpec is what one revision of an Application records.
// When Compression.Type is set, the fields are in Compression.Data and
// Application is a stub (an empty component list), as KubeVela writes it.
type ApplicationRevisionSpec struct {
	ApplicationRevisionFields `json:",inline"`

	// Compression holds the fields compressed when set.
	// +optional
	Compression ApplicationRevisionCompression `json:"compression,omitempty"`
}

// ApplicationRevisionStatus is how the revision's workflow ended.
type ApplicationRevisionStatus struct {
	// Succeeded is true once the revision's workflow succeeded.
	Succeeded bool `json:"succeeded"`
	// Workflow is the revision's workflow as it ended (or as it is while
	// it runs), in KubeVela's shape.
	// +optional
	Workflow *WorkflowStatus `json:"workflow,omitempty"`
	// WorkflowContext is KubeVela's record of the workflow's context
	// values; Steward leaves it empty.
	// +optional
	WorkflowContext map[string]string `json:"workflowContext,omitempty"`
}

// ApplicationRevision records one version of an Application: its spec and
// the definitions it used, and whether its workflow succeeded (what `vela
// revision list`, `vela live-diff` and `vela workflow rollback` read).
// Steward writes one per version it records, named <app>-v<N>.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories={oam},shortName=apprev
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="PUBLISH_VERSION",type=string,JSONPath=`.metadata.annotations['app\.oam\.dev\/publishVersion']`
// +kubebuilder:printcolumn:name="SUCCEEDED",type=string,JSONPath=`.status.succeeded`
type ApplicationRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApplicationRevisionSpec   `json:"spec,omitempty"`
	Status ApplicationRevisionStatus `json:"status,omitempty"`
}

// ApplicationRevisionList is a list of ApplicationRevisions.
// +kubebuilder:object:root=true
type ApplicationRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationRevision `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ApplicationRevision{}, &ApplicationRevisionList{})
}
