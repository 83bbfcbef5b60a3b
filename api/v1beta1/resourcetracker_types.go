package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ResourceTrackerType says what lifetime the resources of a tracker have.
// +kubebuilder:validation:Enum=root;versioned;component-revision
type ResourceTrackerType string

// Resource tracker types.
const (
	// ResourceTrackerTypeRoot records resources that live as long as the
	// Application.
	ResourceTrackerTypeRoot ResourceTrackerType = "root"
	// ResourceTrackerTypeVersioned records the resources of one version
	// (generation or publishVersion) of the Application.
	ResourceTrackerTypeVersioned ResourceTrackerType = "versioned"
	// ResourceTrackerTypeComponentRevision records component revisions.
	ResourceTrackerTypeComponentRevision ResourceTrackerType = "component-revision"
)

// CompressionType is how managed resources are stored.
// +kubebuilder:validation:Enum="";gzip;zstd
type CompressionType string

// Compression types.
const (
	CompressionNone CompressionType = ""
	CompressionGzip CompressionType = "gzip"
	CompressionZstd CompressionType = "zstd"
)

// ResourceTrackerCompression holds managedResources compressed.
type ResourceTrackerCompression struct {
	// Type of compression; empty means managedResources is stored as is.
	// +optional
	Type CompressionType `json:"type,omitempty"`
	// Data is the base64 of the compressed JSON of managedResources.
	// +optional
	Data string `json:"data,omitempty"`
}

// OAMObjectReference names the component and trait an object comes from.
type OAMObjectReference struct {
	// +optional
	Component string `json:"component,omitempty"`
	// +optional
	Trait string `json:"trait,omitempty"`
	// +optional
	Env string `json:"env,omitempty"`
}

// ManagedResource is one object recorded by a tracker.
type ManagedResource struct {
	ClusterObjectReference `json:",inline"`
	OAMObjectReference     `json:",inline"`
	// Data is the full rendered manifest; empty for metadata-only entries.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Data *runtime.RawExtension `json:"raw,omitempty"`
	// Deleted marks an entry whose object is being deleted; the entry is
	// dropped only once the deletion is confirmed.
	// +optional
	Deleted bool `json:"deleted,omitempty"`
	// SkipGC keeps the object when the entry is garbage-collected.
	// +optional
	SkipGC bool `json:"skipGC,omitempty"`
	// Step names the workflow step that delivers the object, in a
	// workflow with suspend steps: the object is applied once the
	// workflow reaches that step.
	// +optional
	Step string `json:"step,omitempty"`
}

// ResourceTrackerSpec is the record of the objects an Application owns.
type ResourceTrackerSpec struct {
	// Type is the lifetime of the recorded resources.
	Type ResourceTrackerType `json:"type,omitempty"`
	// ApplicationGeneration is the Application generation last recorded.
	// +optional
	ApplicationGeneration int64 `json:"applicationGeneration"`
	// ManagedResources are the recorded objects.
	// +optional
	ManagedResources []ManagedResource `json:"managedResources,omitempty"`
	// Compression holds managedResources compressed when set.
	// +optional
	Compression ResourceTrackerCompression `json:"compression,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rt,categories=oam
// +kubebuilder:printcolumn:name="APP",type=string,JSONPath=`.metadata.labels.app\.oam\.dev/name`
// +kubebuilder:printcolumn:name="APP-NS",type=string,JSONPath=`.metadata.labels.app\.oam\.dev/namespace`
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="GENERATION",type=integer,JSONPath=`.spec.applicationGeneration`
// +kubebuilder:printcolumn:name="COMPRESSION",type=string,JSONPath=`.spec.compression.type`,priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ResourceTracker records every object an Application rendered, in every
// cluster, before it is applied. It is cluster-scoped so that it can record
// objects in any namespace and any cluster.
type ResourceTracker struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ResourceTrackerSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceTrackerList is a list of ResourceTrackers.
type ResourceTrackerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceTracker `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceTracker{}, &ResourceTrackerList{})
}
