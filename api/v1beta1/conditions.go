package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types on an Application. Ready summarises the others.
const (
	// ConditionReady is True when the current spec is rendered, dispatched,
	// kept and healthy.
	ConditionReady = "Ready"
	// ConditionRendered is True when every component and trait rendered.
	ConditionRendered = "Rendered"
	// ConditionDispatched is True when every rendered object was recorded
	// and applied.
	ConditionDispatched = "Dispatched"
	// ConditionStateKept is True when the last StateKeep pass re-applied
	// every recorded object.
	ConditionStateKept = "StateKept"
	// ConditionHealthy is True when every component's health policy says it
	// is healthy.
	ConditionHealthy = "Healthy"
	// ConditionGarbageCollected is True when nothing recorded by an older
	// version is left to delete.
	ConditionGarbageCollected = "GarbageCollected"
)

// Condition reasons. Each says what happened, so a user reading
// `kubectl describe app` knows what to fix.
const (
	// ReasonSucceeded: the step completed.
	ReasonSucceeded = "Succeeded"
	// ReasonProgressing: the step is in progress.
	ReasonProgressing = "Progressing"
	// ReasonDefinitionNotFound: a component or trait type has no definition
	// in the Application's namespace or the system namespace.
	ReasonDefinitionNotFound = "DefinitionNotFound"
	// ReasonRenderFailed: a CUE template failed to evaluate.
	ReasonRenderFailed = "RenderFailed"
	// ReasonInvalidProperties: properties do not fit the definition's parameter.
	ReasonInvalidProperties = "InvalidProperties"
	// ReasonRecordFailed: the resource tracker could not be written.
	ReasonRecordFailed = "RecordFailed"
	// ReasonApplyFailed: an object could not be created or patched.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonKindNotFound: a rendered object's kind is not served by the cluster
	// (missing CRD).
	ReasonKindNotFound = "KindNotFound"
	// ReasonOwnershipConflict: an object exists that another Application, or
	// no Application, owns.
	ReasonOwnershipConflict = "OwnershipConflict"
	// ReasonDeleteFailed: an object could not be deleted; it stays recorded
	// and the deletion is retried.
	ReasonDeleteFailed = "DeleteFailed"
	// ReasonDependencyNotReady: a component waits for a component it
	// depends on.
	ReasonDependencyNotReady = "DependencyNotReady"
	// ReasonInvalidPolicy: a policy's properties do not fit its type.
	ReasonInvalidPolicy = "InvalidPolicy"
	// ReasonUnsupportedPolicy: the Application uses a policy Steward does
	// not carry out (replication, an Application-scoped PolicyDefinition);
	// nothing of the version is applied, so that no policy is skipped. On
	// a PolicyDefinition: a global or Application-scoped policy Steward
	// does not apply.
	ReasonUnsupportedPolicy = "UnsupportedPolicy"
	// ReasonUnsupportedWorkflow: the workflow has a step type or field
	// Steward does not carry out; nothing of the version is applied, so
	// that no instruction (an approval gate, a condition) is skipped.
	ReasonUnsupportedWorkflow = "UnsupportedWorkflow"
	// ReasonWorkflowSuspended: the workflow waits at a suspend step (or
	// was suspended by hand) until it is resumed; the steps after it
	// apply nothing yet.
	ReasonWorkflowSuspended = "WorkflowSuspended"
	// ReasonWorkflowTerminated: the workflow was terminated; the steps it
	// had not reached apply nothing until it is restarted.
	ReasonWorkflowTerminated = "WorkflowTerminated"
	// ReasonWorkflowFailed: a step of the workflow failed (its timeout
	// passed); the steps after it without a condition were skipped.
	ReasonWorkflowFailed = "WorkflowFailed"
	// ReasonWorkflowRunning: the workflow runs its next deploy step.
	ReasonWorkflowRunning = "WorkflowRunning"
	// ReasonResourceMissing: a read-only resource does not exist.
	ReasonResourceMissing = "ResourceMissing"
	// ReasonClusterUnreachable: a target cluster could not be reached or is
	// no longer registered; the other clusters are dispatched as usual.
	ReasonClusterUnreachable = "ClusterUnreachable"
	// ReasonUnhealthy: a component's health policy says it is not healthy.
	ReasonUnhealthy = "Unhealthy"
	// ReasonDriftDetected: report-only StateKeep found objects that differ
	// from their manifests.
	ReasonDriftDetected = "DriftDetected"
	// ReasonStateKeepFailed: StateKeep could not re-apply a recorded object.
	ReasonStateKeepFailed = "StateKeepFailed"
	// ReasonDeleting: the Application is being deleted.
	ReasonDeleting = "Deleting"
	// ReasonTemplateCompileFailed: a definition's template does not compile.
	ReasonTemplateCompileFailed = "TemplateCompileFailed"
	// ReasonDefinitionRevisionFailed: a definition's spec cannot be
	// recorded in a DefinitionRevision (the revision it names exists
	// with another spec).
	ReasonDefinitionRevisionFailed = "DefinitionRevisionFailed"
	// ConditionRevisionRecorded on a definition: its current spec is held
	// by the DefinitionRevision status.latestRevision names.
	ConditionRevisionRecorded = "RevisionRecorded"
	// ReasonInvalidName: the Application's name cannot be a label value
	// (over 63 characters), so nothing it renders could carry its
	// ownership labels; nothing is created until it is renamed.
	ReasonInvalidName = "InvalidName"
	// ReasonForbidden: the API server refused a request made as the
	// Application's identity (its ServiceAccount, or Steward's own); the
	// message names the verb, the object and the user.
	ReasonForbidden = "Forbidden"
	// ReasonInvalidServiceAccount: app.oam.dev/service-account-name (or
	// --default-service-account) is not a ServiceAccount name; nothing is
	// applied or deleted until it is fixed.
	ReasonInvalidServiceAccount = "InvalidServiceAccount"
	// ReasonCrossNamespaceObject: with --no-cross-namespace-objects, a
	// component renders a namespaced object outside the Application's
	// namespace; nothing of the new version is recorded or applied.
	ReasonCrossNamespaceObject = "CrossNamespaceObject"
	// ReasonClusterScopedObject: with --no-cross-namespace-objects, a
	// component of an Application without a ServiceAccount renders a
	// cluster-scoped object; nothing of the new version is recorded or
	// applied.
	ReasonClusterScopedObject = "ClusterScopedObject"
	// ReasonEvaluationBudgetExceeded: evaluating a definition's CUE (its
	// template, health policy, custom status or details) or a workflow
	// expression took more time or memory than the controller allows, or
	// the render produced more or larger objects than it allows. The
	// message names the definition and the limit; nothing of the new
	// version is recorded or applied, the version before stays applied and
	// kept, and the Application is tried again with back-off. Simplify the
	// definition, or raise the limit (--cue-eval-timeout,
	// --cue-eval-memory-limit, --max-render-objects, ...) if it is trusted.
	ReasonEvaluationBudgetExceeded = "EvaluationBudgetExceeded"
)

// Labels and annotations Steward reads or writes. The names are KubeVela's so
// that tooling written for KubeVela keeps working.
const (
	// LabelAppName is the owning Application's name, on every applied object
	// and tracker.
	LabelAppName = "app.oam.dev/name"
	// LabelAppNamespace is the owning Application's namespace.
	LabelAppNamespace = "app.oam.dev/namespace"
	// LabelAppComponent is the component an object was rendered for.
	LabelAppComponent = "app.oam.dev/component"
	// LabelAppRevision is the application revision that rendered an object.
	LabelAppRevision = "app.oam.dev/appRevision"
	// LabelAppUID is the owning Application's UID, on trackers.
	LabelAppUID = "app.oam.dev/uid"
	// LabelWorkloadType is the component type of a workload.
	LabelWorkloadType = "workload.oam.dev/type"
	// LabelTraitType is the trait type of an object a trait rendered.
	LabelTraitType = "trait.oam.dev/type"
	// LabelTraitResource is the output name of an object a trait rendered.
	LabelTraitResource = "trait.oam.dev/resource"
	// LabelTrackerType is the tracker type, on trackers.
	LabelTrackerType = "app.oam.dev/resource-tracker-type"
	// LabelScheduledShardID is the shard an Application belongs to, and
	// its trackers with it, when sharding is on (--enable-sharding).
	LabelScheduledShardID = "controller.core.oam.dev/scheduled-shard-id"

	// AnnotationReconcileInterval overrides --application-re-sync-period for
	// one Application (a Go duration, at least 10s).
	AnnotationReconcileInterval = "app.oam.dev/reconcile-interval"
	// AnnotationControllerRequirement names the controller version that may
	// reconcile the Application; any other leaves it alone. KubeVela's CLI
	// sets it to "Disabled" around a rollback (vela workflow rollback, vela
	// up --revision) to freeze the Application while it swaps the spec.
	AnnotationControllerRequirement = "app.oam.dev/controller-version-require"
	// AnnotationDriftMode set to "report" makes StateKeep report drift
	// (StateKept=False with reason DriftDetected, and a Warning event)
	// without repairing it; "repair" or unset repairs it.
	AnnotationDriftMode = "app.oam.dev/drift-mode"
	// AnnotationServiceAccountName names a ServiceAccount of the
	// Application's namespace that every request Steward makes for the
	// Application impersonates (apply, StateKeep, health reads, garbage
	// collection, deletion), in every cluster. KubeVela's name.
	AnnotationServiceAccountName = "app.oam.dev/service-account-name"
	// AnnotationPublishVersion pins the version of an Application.
	AnnotationPublishVersion = "app.oam.dev/publishVersion"
	// AnnotationLastApplied is the last configuration Steward applied, used
	// for client-side three-way patches.
	AnnotationLastApplied = "app.oam.dev/last-applied-configuration"
	// AnnotationSharedBy lists the Applications sharing an object (a
	// shared-resource policy), as "namespace/name" separated by commas,
	// KubeVela's format. The first one owns and writes the object.
	AnnotationSharedBy = "app.oam.dev/shared-by"
	// AnnotationDefinitionDescription describes a definition.
	AnnotationDefinitionDescription = "definition.oam.dev/description"

	// DriftModeReport is the report-only value of AnnotationDriftMode.
	DriftModeReport = "report"

	// FinalizerResourceTracker holds an Application until its trackers and
	// resources are cleaned up.
	FinalizerResourceTracker = "app.oam.dev/resource-tracker-finalizer"
	// FinalizerOrphanResource leaves resources in place on deletion.
	FinalizerOrphanResource = "app.oam.dev/orphan-resource"
	// FinalizerTrackerProtection is on every ResourceTracker Steward
	// writes, and only Steward removes it: a tracker deleted by someone
	// else stays until Steward has re-created it, so that nothing it lists
	// is orphaned.
	FinalizerTrackerProtection = "app.oam.dev/tracker-protection"
	// FinalizerKubeVelaTracker is the finalizer KubeVela puts on the
	// ResourceTrackers it writes. Steward takes KubeVela's trackers over
	// when it takes over their Application (docs/migration.md): it
	// replaces this finalizer with its own, and removes it from any
	// tracker it deletes, since no KubeVela runs to remove it.
	FinalizerKubeVelaTracker = "resourcetracker.core.oam.dev/finalizer"
)

// The rescue copy of a tracker being re-created (see tracker.Recreate):
// written before the hand-deleted tracker is let go and removed once its
// replacement exists, so that a crash in between loses nothing. It carries
// these labels instead of the app labels, so nothing but the rescue reads
// it as a tracker of the Application.
const (
	// LabelRescueOfApp is the Application's name on a rescue copy.
	LabelRescueOfApp = "app.oam.dev/rescue-of-name"
	// LabelRescueOfNamespace is the Application's namespace on a rescue
	// copy.
	LabelRescueOfNamespace = "app.oam.dev/rescue-of-namespace"
	// AnnotationRescueOf holds the name, labels and annotations of the
	// tracker a rescue copy stands for, as JSON.
	AnnotationRescueOf = "app.oam.dev/rescue-of"
)

// Policy types an Application lists in spec.policies, as KubeVela names
// them.
const (
	// PolicyTypeTopology places components on clusters and namespaces.
	PolicyTypeTopology = "topology"
	// PolicyTypeOverride changes components' properties and traits for the
	// deploy steps that name it.
	PolicyTypeOverride = "override"
	// PolicyTypeGarbageCollect says when recorded objects are deleted.
	PolicyTypeGarbageCollect = "garbage-collect"
	// PolicyTypeApplyOnce leaves fields (or whole objects) to their live
	// values after the first apply.
	PolicyTypeApplyOnce = "apply-once"
	// PolicyTypeReadOnly makes Steward read objects, never write them.
	PolicyTypeReadOnly = "read-only"
	// PolicyTypeTakeOver lets Steward adopt objects it did not create.
	PolicyTypeTakeOver = "take-over"
	// PolicyTypeSharedResource lets Applications share objects.
	PolicyTypeSharedResource = "shared-resource"
)

// Reasons of the events Steward records on an Application, besides the
// condition reasons above (a Warning event carries the reason of the
// Ready condition that turned False).
const (
	// EventApplied: a new version, or a rollback, was applied; the note
	// names what was created and configured.
	EventApplied = "Applied"
	// EventDriftRepaired: StateKeep restored objects someone else changed
	// or deleted.
	EventDriftRepaired = "DriftRepaired"
	// EventFieldsTaken: server-side apply took fields another field
	// manager had set to other values, because the manifest sets them;
	// said once per set of fields, with the previous managers.
	EventFieldsTaken = "FieldsTaken"
	// EventGarbageCollected: objects no current version renders were
	// deleted.
	EventGarbageCollected = "GarbageCollected"
	// EventReady: the Application became Ready.
	EventReady = "Ready"
	// EventUnsupportedFeature: the Application uses a KubeVela feature
	// Steward does not carry and that changes nothing of what is
	// delivered (app.oam.dev/autoUpdate, component scopes); said once.
	EventUnsupportedFeature = "UnsupportedFeature"
	// EventInvalidReconcileInterval: the app.oam.dev/reconcile-interval
	// annotation was ignored; the note says why.
	EventInvalidReconcileInterval = "InvalidReconcileInterval"
	// EventHelmHooksNotRun: a Helm chart declares hooks, which Steward
	// does not run (it delivers the chart's objects); said once per set of
	// hooks.
	EventHelmHooksNotRun = "HelmHooksNotRun"
	// EventRolledBack: an earlier publishVersion's recorded manifests were
	// applied again.
	EventRolledBack = "RolledBack"
	// EventApplicationRevisionNotWritten: the live version has no
	// ApplicationRevision of its own (deleted by hand, say) and none is
	// written, since the Application's spec is not the one the version
	// was rendered from (a rollback by publishVersion, a spec edited
	// under the same publishVersion).
	EventApplicationRevisionNotWritten = "ApplicationRevisionNotWritten"
	// EventLeftBehind: objects in clusters no longer registered were
	// dropped from the trackers without being deleted.
	EventLeftBehind = "LeftBehind"
	// EventResourceTrackerRecreated: trackers someone deleted by hand were
	// re-created with what they listed.
	EventResourceTrackerRecreated = "ResourceTrackerRecreated"
	// EventTakenOverFromKubeVela: what KubeVela left of an Application it
	// delivered (its resource trackers, its finalizers on them, its
	// workflow context ConfigMap, its conditions) was taken over or
	// removed; the note names each.
	EventTakenOverFromKubeVela = "TakenOverFromKubeVela"
)

// Condition is one condition of an Application. Its fields are those of
// metav1.Condition, but only type and status are required: KubeVela's
// conditions (crossplane's shape) carry no message when there is nothing
// to say, nor an observedGeneration, and tools written for KubeVela write
// them into an Application's status (to nudge a reconcile, say). The
// conditions Steward sets always carry a reason, an observedGeneration and
// a transition time.
type Condition struct {
	// Type of the condition, unique in the list.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type"`
	// Status is True, False or Unknown.
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status"`
	// ObservedGeneration is the generation the condition was set for.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +optional
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a CamelCase word for why the condition is what it is.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says what happened, for a human.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Message string `json:"message,omitempty"`
}

// FindCondition returns the condition of type t in conds, or nil.
func FindCondition(conds []Condition, t string) *Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// IsConditionTrue reports whether the condition of type t is True.
func IsConditionTrue(conds []Condition, t string) bool {
	c := FindCondition(conds, t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// IsConditionFalse reports whether the condition of type t is False.
func IsConditionFalse(conds []Condition, t string) bool {
	c := FindCondition(conds, t)
	return c != nil && c.Status == metav1.ConditionFalse
}

// SetCondition sets c in conds, replacing the condition of its type. The
// transition time moves only when the status changes (a zero time in c
// means now).
func SetCondition(conds *[]Condition, c Condition) {
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.Now()
	}
	old := FindCondition(*conds, c.Type)
	if old == nil {
		*conds = append(*conds, c)
		return
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
}

// RemoveCondition drops the condition of type t from conds; it reports
// whether there was one.
func RemoveCondition(conds *[]Condition, t string) bool {
	for i := range *conds {
		if (*conds)[i].Type == t {
			*conds = append((*conds)[:i], (*conds)[i+1:]...)
			return true
		}
	}
	return false
}
