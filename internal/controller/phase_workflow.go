package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/tracker"
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
	if err == nil {
		err = checkRecordedSteps(s.current, steps)
	}
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

// checkRecordedSteps fails closed when the version's objects do not all
// name one of its recorded deploy steps: a ResourceTracker CRD from before
// steps were recorded prunes the field, and an object without its step
// would be applied whatever the gate says.
func checkRecordedSteps(rt *v1beta1.ResourceTracker, steps []workflow.Step) error {
	deploys := map[string]bool{}
	for _, st := range steps {
		if st.Delivers() {
			deploys[st.Name] = true
		}
	}
	entries, err := tracker.Entries(rt)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Data != nil && !e.Deleted && !deploys[e.Step] {
			return fmt.Errorf("resource tracker %s records %s without its workflow step (%q): the ResourceTracker CRD may predate workflow steps; upgrade the CRDs (config/crd, or the chart's crds/, which helm upgrade does not update)", rt.Name, tracker.KeyOf(e), e.Step)
		}
	}
	return nil
}

// finishWorkflow records, after keepState and health, whether the deploy
// step this pass ran has succeeded: every object of the step applied (by
// a pass that could apply: valid policies and identity, a version
// recorded, no failure, no component waiting) and every component the
// step delivers healthy by its definition's health policy, as KubeVela's
// deploy step waits for. A step that succeeded is not judged again.
func (r *ApplicationReconciler) finishWorkflow(_ context.Context, s *scope) error {
	if s.flow == nil {
		return nil
	}
	done := s.keep.ran && s.rulesErr == nil && s.identityErr == nil && s.recordErr == nil &&
		len(s.keep.failures) == 0 && len(s.keep.waiting) == 0
	msg := ""
	if !done {
		msg = "waiting until every object of the step is applied"
	} else if sick := unhealthyInStep(s, s.flow.Dispatching()); len(sick) > 0 {
		done = false
		msg = "waiting for components to become healthy: " + strings.Join(sick, ", ")
	}
	s.flow.Finish(done, msg, time.Now())
	return nil
}

// unhealthyInStep names the components (with their cluster and health
// message) the step delivers that are not healthy yet; health not
// evaluated counts as not healthy.
func unhealthyInStep(s *scope, step string) []string {
	if step == "" {
		return nil
	}
	if s.health == nil {
		return []string{"health not evaluated yet"}
	}
	entries, err := liveEntries(s.current, s.root)
	if err != nil {
		return []string{err.Error()}
	}
	seen := map[string]bool{}
	var sick []string
	for _, e := range entries {
		if e.Step != step || e.Component == "" {
			continue
		}
		k := healthKey(e.Component, e.Cluster)
		if seen[k] {
			continue
		}
		seen[k] = true
		// A component the spec no longer names is not judged.
		if h, ok := s.health[k]; ok && !h.Healthy {
			name := e.Component
			if !cluster.IsLocal(e.Cluster) {
				name += " in cluster " + e.Cluster
			}
			if h.Message != "" {
				name += " (" + h.Message + ")"
			}
			sick = append(sick, name)
		}
	}
	slices.Sort(sick)
	return sick
}

// gatedEntry reports whether an entry belongs to a step the run has not
// reached, or skipped: it is neither applied nor deleted in this pass.
// Step names are ignored when the version being kept has no gated
// workflow (a root entry recorded by an earlier, gated version).
func (s *scope) gatedEntry(e v1beta1.ManagedResource) bool {
	switch {
	case e.Step == "":
		return false
	case s.flowErr != nil:
		return true
	case s.recordErr != nil:
		// The new render's root entries were recorded but not its
		// version: their steps belong to a run that has not started.
		return true
	case s.flow == nil:
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
	if s.flow == nil || s.flow.Succeeded() {
		return "", "", false
	}
	st := s.flow.Status
	if st.Phase == workflow.PhaseFailed {
		return v1beta1.ReasonWorkflowFailed, st.Message + "; the steps after it that have no if condition were skipped; fix it and change the Application, or `steward workflow restart " + s.app.Name + "`", true
	}
	switch st.Phase {
	case workflow.PhaseSuspending:
		return v1beta1.ReasonWorkflowSuspended, fmt.Sprintf("%s; resume it with `steward workflow resume %s` (or `vela workflow resume`)", st.Message, s.app.Name), true
	case workflow.PhaseTerminated:
		return v1beta1.ReasonWorkflowTerminated, st.Message, true
	}
	for _, step := range st.Steps {
		if step.Phase == workflow.StepRunning || step.Phase == workflow.StepPending {
			msg := fmt.Sprintf("running workflow step %q", step.Name)
			if step.Message != "" {
				msg += ": " + step.Message
			}
			return v1beta1.ReasonWorkflowRunning, msg, true
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
