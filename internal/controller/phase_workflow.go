package controller

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/workflow"
)

// advanceWorkflow runs the gates of a version rendered from a workflow
// with suspend steps (internal/workflow): it decides which deploy steps
// this pass applies. The whole version is recorded before anything is
// applied, as always, with the steps it was rendered with
// (annotationWorkflowSteps) and, on each object, its step; keepState
// applies only the objects of steps the run has reached. Until the run
// finishes, garbage collection of earlier versions waits, so that what the
// steps not yet reached will replace stays in place. The run follows the
// recorded steps, not the spec: a spec edited under the same
// publishVersion, a new generation that fails to render, or a rollback
// keeps the steps of the version being kept.
func (r *ApplicationReconciler) advanceWorkflow(ctx context.Context, s *scope) error {
	if s.current == nil || s.current.Annotations[annotationWorkflowSteps] == "" {
		return nil
	}
	steps, err := workflow.Decode(s.current.Annotations[annotationWorkflowSteps])
	if err != nil {
		s.flowErr = err
		return nil
	}
	rev := liveRevision(s.app, s.current).Name
	s.flow = workflow.Advance(steps, s.app.Status.Workflow, rev, time.Now())
	log := ctrl.LoggerFrom(ctx).V(decisionLevel)
	switch s.flow.Status.Phase {
	case workflow.PhaseSuspending:
		log.Info("Workflow suspended: the steps after it apply nothing until it is resumed", "revision", rev, "message", s.flow.Status.Message)
	case workflow.PhaseTerminated:
		log.Info("Workflow terminated: the steps it had not reached apply nothing", "revision", rev)
	}
	return nil
}

// finishWorkflow records, after keepState, whether the deploy step this
// pass ran has applied everything: only a pass that could apply (valid
// policies and identity, a version recorded) and applied without a
// failure or a component waiting counts.
func (r *ApplicationReconciler) finishWorkflow(_ context.Context, s *scope) error {
	if s.flow == nil {
		return nil
	}
	done := s.keep.ran && s.rulesErr == nil && s.identityErr == nil && s.recordErr == nil &&
		len(s.keep.failures) == 0 && len(s.keep.waiting) == 0
	msg := ""
	if !done {
		msg = "waiting until every object of the step is applied"
	}
	s.flow.Finish(done, msg, time.Now())
	return nil
}

// gatedEntry reports whether an entry belongs to a step the run has not
// reached: it is neither applied nor deleted in this pass. Step names are
// ignored when the version being kept has no gated workflow (a root entry
// recorded by an earlier, gated version) and once its run has finished.
func (s *scope) gatedEntry(e v1beta1.ManagedResource) bool {
	switch {
	case e.Step == "":
		return false
	case s.flowErr != nil:
		return true
	case s.flow == nil || s.flow.Status.Finished:
		return false
	}
	return !s.flow.Reached[e.Step]
}

// dispatching reports whether an entry belongs to the deploy step the run
// reaches in this pass: it is applied as a dispatch (apply-once fields
// written, created even in report-only drift mode), as a newly recorded
// version is.
func (s *scope) dispatching(e v1beta1.ManagedResource) bool {
	return s.fresh || (e.Step != "" && e.Step == s.flow.Dispatching())
}

// workflowCondition describes a gated run for the Dispatched condition;
// false when there is nothing to say.
func workflowCondition(s *scope) (reason, message string, ok bool) {
	if s.flowErr != nil {
		return v1beta1.ReasonUnsupportedWorkflow, s.flowErr.Error() + "; nothing of the steps is applied", true
	}
	if s.flow == nil || s.flow.Status.Finished {
		return "", "", false
	}
	st := s.flow.Status
	switch st.Phase {
	case workflow.PhaseSuspending:
		return v1beta1.ReasonWorkflowSuspended, fmt.Sprintf("%s; resume it with `steward workflow resume %s` (or `vela workflow resume`)", st.Message, s.app.Name), true
	case workflow.PhaseTerminated:
		return v1beta1.ReasonWorkflowTerminated, st.Message, true
	}
	for _, step := range st.Steps {
		if step.Phase == workflow.StepRunning || step.Phase == workflow.StepPending {
			return v1beta1.ReasonWorkflowRunning, fmt.Sprintf("running workflow step %q", step.Name), true
		}
	}
	return "", "", false
}

// workflowPending reports whether a gated run has steps left to say so in
// the Dispatched condition.
func workflowPending(s *scope) bool {
	_, _, ok := workflowCondition(s)
	return ok
}
