package apprevision

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Workflow phases in KubeVela's words (status.workflow.status).
const (
	PhaseSucceeded  = "succeeded"
	PhaseFailed     = "failed"
	PhaseTerminated = "terminated"
	PhaseExecuting  = "executing"
)

// Outcome is how a revision's workflow stands, for its status.
type Outcome struct {
	// Status is what status.workflow records.
	Status *v1beta1.WorkflowStatus
	// Succeeded is status.succeeded.
	Succeeded bool
	// Ended is true once the workflow will not change by itself any
	// more (succeeded, failed or terminated): the revision's status is
	// then final until the workflow is restarted.
	Ended bool
}

// OutcomeOf reads a revision's outcome from its Application: the
// workflow's status where Steward runs the workflow step by step, and
// otherwise (one pass over all components) from the phase: running or
// unhealthy means delivered (succeeded, as KubeVela's deploy step ends
// once applied), workflowFailed failed, anything else still executing.
// revision names the revision in status.workflow.appRevision; now stamps
// the times a one-pass workflow has no record of.
func OutcomeOf(app *v1beta1.Application, revision string, now metav1.Time) Outcome {
	if ws := app.Status.Workflow; ws != nil {
		st := ws.DeepCopy()
		if st.AppRevision == "" {
			st.AppRevision = revision
		}
		ended := st.Terminated || st.Phase == PhaseSucceeded || st.Phase == PhaseFailed || st.Phase == PhaseTerminated ||
			(st.Finished && !st.Suspend)
		return Outcome{Status: st, Succeeded: st.Phase == PhaseSucceeded, Ended: ended}
	}
	st := &v1beta1.WorkflowStatus{AppRevision: revision, Mode: "StepByStep-DAG", StartTime: now}
	switch app.Status.Phase {
	case v1beta1.ApplicationRunning, v1beta1.ApplicationUnhealthy:
		st.Phase, st.Finished, st.EndTime = PhaseSucceeded, true, now
		return Outcome{Status: st, Succeeded: true, Ended: true}
	case v1beta1.ApplicationWorkflowFailed:
		st.Phase, st.Finished, st.EndTime = PhaseFailed, true, now
		return Outcome{Status: st, Ended: true}
	case v1beta1.ApplicationWorkflowTerminated:
		st.Phase, st.Terminated, st.EndTime = PhaseTerminated, true, now
		return Outcome{Status: st, Ended: true}
	}
	st.Phase = PhaseExecuting
	return Outcome{Status: st}
}

// Apply writes o into rev's status, keeping the start time already
// recorded, and says whether anything changed (so a caller writes the
// status only then).
func (o Outcome) Apply(rev *v1beta1.ApplicationRevision) bool {
	next := v1beta1.ApplicationRevisionStatus{Succeeded: o.Succeeded, Workflow: o.Status.DeepCopy(), WorkflowContext: rev.Status.WorkflowContext}
	if old := rev.Status.Workflow; old != nil && next.Workflow != nil {
		if !old.StartTime.IsZero() {
			next.Workflow.StartTime = old.StartTime
		}
		if !old.EndTime.IsZero() && next.Workflow.Phase == old.Phase {
			next.Workflow.EndTime = old.EndTime
		}
	}
	if equality.Semantic.DeepEqual(rev.Status, next) {
		return false
	}
	rev.Status = next
	return true
}
