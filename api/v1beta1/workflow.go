package v1beta1

// Workflow step types Steward runs, as KubeVela names them in
// spec.workflow.steps[].type.
const (
	// WorkflowStepTypeDeploy delivers the components, in one pass, to the
	// clusters its topology policies select.
	WorkflowStepTypeDeploy = "deploy"
	// WorkflowStepTypeApplyComponent delivers one component, to one
	// cluster (the hub by default), as a deploy step of that component
	// would.
	WorkflowStepTypeApplyComponent = "apply-component"
	// WorkflowStepTypeApplyObject delivers one raw object, to one cluster
	// (the hub by default).
	WorkflowStepTypeApplyObject = "apply-object"
	// WorkflowStepTypeSuspend waits until the workflow is resumed, or for
	// its duration.
	WorkflowStepTypeSuspend = "suspend"
	// WorkflowStepTypeStepGroup runs its sub-steps, in parallel unless the
	// workflow's mode says subSteps: StepByStep.
	WorkflowStepTypeStepGroup = "step-group"
	// WorkflowStepTypeDependsOnApp waits until another Application is
	// running.
	WorkflowStepTypeDependsOnApp = "depends-on-app"
	// WorkflowStepTypeApplyApplication delivers every component, as older
	// KubeVela workflows write it; Steward runs it as a deploy step
	// without properties.
	WorkflowStepTypeApplyApplication = "apply-application"
)

// IsNativeWorkflowStep reports whether Steward runs steps of type t
// itself: such a step keeps its built-in behaviour even when a
// WorkflowStepDefinition of that name is installed (KubeVela installs
// definitions named deploy, suspend, step-group and others).
func IsNativeWorkflowStep(t string) bool {
	switch t {
	case WorkflowStepTypeDeploy, WorkflowStepTypeApplyComponent, WorkflowStepTypeApplyObject,
		WorkflowStepTypeSuspend, WorkflowStepTypeStepGroup, WorkflowStepTypeDependsOnApp,
		WorkflowStepTypeApplyApplication:
		return true
	}
	return false
}

// Phases of a workflow run, status.workflow.status, as KubeVela names
// them.
const (
	WorkflowPhaseExecuting  = "executing"
	WorkflowPhaseSuspending = "suspending"
	WorkflowPhaseSucceeded  = "succeeded"
	WorkflowPhaseTerminated = "terminated"
	WorkflowPhaseFailed     = "failed"
)

// Phases of a workflow step, status.workflow.steps[].phase, as KubeVela
// names them.
const (
	// WorkflowStepPending: not reached yet.
	WorkflowStepPending = "pending"
	// WorkflowStepRunning: its objects are being applied, or its
	// components are not healthy yet, or what it waits for is not there.
	WorkflowStepRunning = "running"
	// WorkflowStepSuspending: a suspend step, or an auto: false deploy
	// step, waits to be resumed.
	WorkflowStepSuspending = "suspending"
	WorkflowStepSucceeded  = "succeeded"
	WorkflowStepFailed     = "failed"
	// WorkflowStepSkipped: its if was false, or a step it waits for
	// failed; it applied nothing.
	WorkflowStepSkipped = "skipped"
)

// Reasons of a failed workflow step, status.workflow.steps[].reason.
const (
	// WorkflowStepReasonTimeout: its timeout passed before it succeeded.
	WorkflowStepReasonTimeout = "Timeout"
	// WorkflowStepReasonConditionError: its if did not evaluate; the step
	// did not run.
	WorkflowStepReasonConditionError = "ConditionError"
	// WorkflowStepReasonInputMissing: a value it takes was never exported
	// (the step exporting it failed or was skipped, and this one runs
	// anyway: if: always).
	WorkflowStepReasonInputMissing = "InputMissing"
)
