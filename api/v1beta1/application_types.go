package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ApplicationSpec is the desired state of an Application: the components to
// deliver, the policies that shape delivery and an optional workflow.
type ApplicationSpec struct {
	// Components are the parts of the application, each rendered from a
	// ComponentDefinition and decorated by traits.
	Components []ApplicationComponent `json:"components"`

	// Policies shape how components are delivered and kept (garbage-collect,
	// apply-once, topology, ...).
	// +optional
	Policies []AppPolicy `json:"policies,omitempty"`

	// Workflow orders delivery in KubeVela's schema: the steps Steward
	// runs are listed in docs/workflow.md; a workflow with another step
	// type is refused whole.
	// +optional
	Workflow *Workflow `json:"workflow,omitempty"`
}

// ApplicationComponent is one component of an Application.
type ApplicationComponent struct {
	// Name of the component, unique in the Application.
	Name string `json:"name"`
	// Type names the ComponentDefinition that renders this component.
	Type string `json:"type"`
	// ExternalRevision names the component revision explicitly.
	// +optional
	ExternalRevision string `json:"externalRevision,omitempty"`
	// Properties are the definition's parameters.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Properties *runtime.RawExtension `json:"properties,omitempty"`
	// DependsOn names components that are dispatched before this one.
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
	// Inputs take values from other components' outputs (KubeVela's
	// workflow data passing); Steward refuses them.
	// +optional
	Inputs []InputItem `json:"inputs,omitempty"`
	// Outputs export values to other components; Steward refuses them.
	// +optional
	Outputs []OutputItem `json:"outputs,omitempty"`
	// Traits decorate the component's workload.
	// +optional
	Traits []ApplicationTrait `json:"traits,omitempty"`
	// Scopes are accepted for compatibility; Steward ignores them.
	// +optional
	Scopes map[string]string `json:"scopes,omitempty"`
	// ReplicaKey is accepted for compatibility with KubeVela replication.
	// +optional
	ReplicaKey string `json:"replicaKey,omitempty"`
}

// ApplicationTrait attaches a TraitDefinition to a component.
type ApplicationTrait struct {
	// Type names the TraitDefinition.
	Type string `json:"type"`
	// Properties are the trait definition's parameters.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Properties *runtime.RawExtension `json:"properties,omitempty"`
}

// AppPolicy is one policy of an Application.
type AppPolicy struct {
	// Name of the policy, unique in the Application.
	Name string `json:"name"`
	// Type names the PolicyDefinition or built-in policy type.
	Type string `json:"type"`
	// Properties are the policy's parameters.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Properties *runtime.RawExtension `json:"properties,omitempty"`
}

// InputItem maps a workflow value into a parameter (KubeVela compatibility).
type InputItem struct {
	ParameterKey string `json:"parameterKey,omitempty"`
	From         string `json:"from"`
}

// OutputItem exports a value to the workflow (KubeVela compatibility).
type OutputItem struct {
	ValueFrom string `json:"valueFrom"`
	Name      string `json:"name"`
}

// Workflow is an Application's workflow in KubeVela's schema; see
// docs/workflow.md for the steps and fields Steward runs.
type Workflow struct {
	// Ref names a WorkflowTemplate.
	// +optional
	Ref string `json:"ref,omitempty"`
	// Steps of the workflow.
	// +optional
	Steps []WorkflowStep `json:"steps,omitempty"`
	// Mode of the workflow: steps and subSteps, StepByStep or DAG.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Mode *runtime.RawExtension `json:"mode,omitempty"`
}

// WorkflowStep is one step of a Workflow. Fields Steward does not interpret
// are preserved as written.
type WorkflowStep struct {
	WorkflowStepBase `json:",inline"`
	// SubSteps of a step group.
	// +optional
	SubSteps []WorkflowStepBase `json:"subSteps,omitempty"`
}

// WorkflowStepBase holds the fields of a step and a sub-step.
type WorkflowStepBase struct {
	// Name of the step.
	// +optional
	Name string `json:"name,omitempty"`
	// Type of the step, for example deploy.
	Type string `json:"type"`
	// +optional
	If string `json:"if,omitempty"`
	// +optional
	Timeout string `json:"timeout,omitempty"`
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Meta *runtime.RawExtension `json:"meta,omitempty"`
	// +optional
	Inputs []InputItem `json:"inputs,omitempty"`
	// +optional
	Outputs []OutputItem `json:"outputs,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Properties *runtime.RawExtension `json:"properties,omitempty"`
}

// ApplicationPhase is the coarse state shown in status.status.
type ApplicationPhase string

// Application phases, as KubeVela names them.
const (
	ApplicationStarting  ApplicationPhase = "starting"
	ApplicationRendering ApplicationPhase = "rendering"
	ApplicationRunning   ApplicationPhase = "running"
	ApplicationUnhealthy ApplicationPhase = "unhealthy"
	ApplicationDeleting  ApplicationPhase = "deleting"
	// ApplicationRunningWorkflow is reported while resources are dispatched.
	ApplicationRunningWorkflow ApplicationPhase = "runningWorkflow"
	// ApplicationWorkflowFailed is reported when dispatch failed.
	ApplicationWorkflowFailed ApplicationPhase = "workflowFailed"
	// ApplicationWorkflowSuspending is reported while the workflow waits
	// to be resumed.
	ApplicationWorkflowSuspending ApplicationPhase = "workflowSuspending"
	// ApplicationWorkflowTerminated is reported once the workflow was
	// terminated.
	ApplicationWorkflowTerminated ApplicationPhase = "workflowTerminated"
)

// ApplicationStatus is the observed state of an Application.
type ApplicationStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready plus Rendered, Dispatched, StateKept, Healthy and
	// GarbageCollected.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
	// Phase is the coarse state of the Application.
	// +optional
	Phase ApplicationPhase `json:"status,omitempty"`
	// Services reports each component.
	// +optional
	Services []ApplicationComponentStatus `json:"services,omitempty"`
	// AppliedResources lists the objects Steward manages for this app.
	// +optional
	AppliedResources []ClusterObjectReference `json:"appliedResources,omitempty"`
	// LatestRevision is the revision currently delivered.
	// +optional
	LatestRevision *Revision `json:"latestRevision,omitempty"`
	// Workflow is the state of the workflow of the current revision, in
	// KubeVela's shape; only Applications whose workflow Steward runs
	// step by step (a gate, a step group, a condition, a mode) have one. Resuming writes suspend: false here (what `vela
	// workflow resume` and `steward workflow resume` do).
	// +optional
	Workflow *WorkflowStatus `json:"workflow,omitempty"`
}

// WorkflowStatus is the state of one run of an Application's workflow
// (KubeVela's status.workflow).
type WorkflowStatus struct {
	// AppRevision is the revision the run delivers; another revision
	// starts a new run.
	// +optional
	AppRevision string `json:"appRevision,omitempty"`
	// Mode is how steps and sub-steps run, "StepByStep-DAG" style.
	Mode string `json:"mode"`
	// Phase is the run's phase: executing, suspending, succeeded,
	// failed, terminated.
	// +optional
	Phase string `json:"status,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// Suspend is true while the run waits to be resumed.
	Suspend bool `json:"suspend"`
	// +optional
	SuspendState string `json:"suspendState,omitempty"`
	// Terminated is true once the run was terminated: no further step
	// runs until the workflow is restarted.
	Terminated bool `json:"terminated"`
	// Finished is true once every step has run.
	Finished bool `json:"finished"`
	// +optional
	Steps []WorkflowStepStatus `json:"steps,omitempty"`
	// +optional
	StartTime metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime metav1.Time `json:"endTime,omitempty"`
}

// WorkflowStepStatus is the state of one step, and of its sub-steps.
type WorkflowStepStatus struct {
	StepStatus `json:",inline"`
	// +optional
	SubStepsStatus []StepStatus `json:"subSteps,omitempty"`
}

// StepStatus is the state of one step or sub-step.
type StepStatus struct {
	// ID identifies the step in the run.
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
	// Phase is pending, running, suspending, succeeded, failed or
	// skipped.
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	FirstExecuteTime metav1.Time `json:"firstExecuteTime,omitempty"`
	// +optional
	LastExecuteTime metav1.Time `json:"lastExecuteTime,omitempty"`
}

// ApplicationComponentStatus is the status of one component.
type ApplicationComponentStatus struct {
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Cluster string `json:"cluster,omitempty"`
	// +optional
	Env string `json:"env,omitempty"`
	// WorkloadDefinition is the kind of the component's workload.
	// +optional
	WorkloadDefinition *GroupVersionKindRef `json:"workloadDefinition,omitempty"`
	Healthy            bool                 `json:"healthy"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Details map[string]string `json:"details,omitempty"`
	// +optional
	Traits []ApplicationTraitStatus `json:"traits,omitempty"`
}

// GroupVersionKindRef names a kind.
type GroupVersionKindRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// ApplicationTraitStatus is the status of one trait.
type ApplicationTraitStatus struct {
	Type    string `json:"type"`
	Healthy bool   `json:"healthy"`
	// Pending is true for a PostDispatch trait not rendered yet: it is
	// rendered once its component's workload is healthy.
	// +optional
	Pending bool `json:"pending,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	Details map[string]string `json:"details,omitempty"`
}

// ClusterObjectReference names one object in one cluster.
type ClusterObjectReference struct {
	// Cluster is the target cluster; empty means the local (hub) cluster.
	// +optional
	Cluster string `json:"cluster,omitempty"`
	// +optional
	Creator    string `json:"creator,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// +optional
	UID string `json:"uid,omitempty"`
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Revision identifies a delivered revision of an Application.
type Revision struct {
	Name     string `json:"name"`
	Revision int64  `json:"revision"`
	// +optional
	RevisionHash string `json:"revisionHash,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=app,categories=oam
// +kubebuilder:printcolumn:name="COMPONENT",type=string,JSONPath=`.spec.components[*].name`
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=`.spec.components[*].type`
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// Application is the OAM description of an application: components,
// traits and policies, delivered by Steward with resource trackers.
type Application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApplicationSpec   `json:"spec,omitempty"`
	Status ApplicationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ApplicationList is a list of Applications.
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Application `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Application{}, &ApplicationList{})
}
