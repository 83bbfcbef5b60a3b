package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/workflow"
)

// runStatus is status.workflow when no gated run (s.flow) reports it:
// tools that read step phases (vela status, dashboards, CI waiting for
// workflowFailed) find the steps KubeVela would show.
//
//   - A workflow refused before anything of its version was applied (a
//     step type Steward does not run, an invalid workflow) is a failed
//     run of the new revision: the step at fault failed, the others
//     skipped.
//   - A version delivered in one pass reports the steps KubeVela runs
//     for it (workflow.OnePass), each with its phase from the pass's
//     facts: pending until its components are applied (or while they wait
//     for their dependencies), running until they are healthy, failed
//     while one of their objects cannot be applied, succeeded once
//     healthy. A run that succeeded stays so, as KubeVela's does: later
//     health shows in the conditions, not in a finished run.
//
// Times carry over from the previous status of the same revision, so a
// pass that changes no phase writes nothing.
func runStatus(s *scope, now time.Time) *v1beta1.WorkflowStatus {
	prev := s.app.Status.Workflow
	if err := workflowRefusal(s); err != nil {
		return refusedRun(s.app, err, prev, now)
	}
	if s.current == nil {
		return nil
	}
	rev := liveRevision(s.app, s.current).Name
	if prev != nil && prev.AppRevision == rev && prev.Finished {
		return prev
	}
	steps, mode := workflow.OnePass(s.app)
	st := &v1beta1.WorkflowStatus{AppRevision: rev, Mode: mode, StartTime: metav1.NewTime(now)}
	if prev != nil && prev.AppRevision == rev && !prev.StartTime.IsZero() {
		st.StartTime = prev.StartTime
	}
	done := true
	for i, step := range steps {
		phase, msg := onePassStep(s, step)
		ss := v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{ID: fmt.Sprintf("%s-%d", rev, i), Name: step.Name, Type: step.Type,
			Phase: phase, Message: msg}}
		stamp(&ss.StepStatus, prevStep(prev, rev, step.Name), now)
		st.Steps = append(st.Steps, ss)
		done = done && phase == v1beta1.WorkflowStepSucceeded
	}
	st.Phase = v1beta1.WorkflowPhaseExecuting
	if done {
		st.Phase, st.Finished, st.EndTime = v1beta1.WorkflowPhaseSucceeded, true, metav1.NewTime(now)
	}
	return st
}

// workflowRefusal is why the newest generation's workflow was refused
// (nothing of it applied), or why the kept version's recorded steps
// cannot run; nil otherwise.
func workflowRefusal(s *scope) error {
	if s.flowErr != nil {
		return s.flowErr
	}
	if s.renderErr != nil && reasonOf(s.renderErr, "") == v1beta1.ReasonUnsupportedWorkflow {
		return s.renderErr
	}
	if errors.As(s.renderErr, new(*workflow.MissingDefinitionError)) {
		// A step type with no definition: the step at fault fails.
		return s.renderErr
	}
	return nil
}

// refusedRun is the failed run of a revision whose workflow Steward
// refused: the step the error names failed, every other skipped (none
// ran: nothing of the version is applied).
func refusedRun(app *v1beta1.Application, err error, prev *v1beta1.WorkflowStatus, now time.Time) *v1beta1.WorkflowStatus {
	rev := delivery.RevisionNameOf(app.Name, app.Annotations[v1beta1.AnnotationPublishVersion], app.Generation)
	var unsupported *workflow.UnsupportedError
	var missing *workflow.MissingDefinitionError
	failed, reason := "", v1beta1.ReasonUnsupportedWorkflow
	switch {
	case errors.As(err, &unsupported):
		failed = unsupported.Step
	case errors.As(err, &missing):
		failed, reason = missing.Step, v1beta1.ReasonDefinitionNotFound
	}
	msg := err.Error()
	st := &v1beta1.WorkflowStatus{AppRevision: rev, Mode: workflow.Flow{}.Mode(), Phase: v1beta1.WorkflowPhaseFailed, Message: msg,
		Terminated: true, Finished: true, StartTime: metav1.NewTime(now), EndTime: metav1.NewTime(now)}
	if dag, subs, merr := workflow.Mode(app.Spec.Workflow); merr == nil {
		st.Mode = workflow.Flow{DAG: dag, SubStepByStep: subs}.Mode()
	}
	if prev != nil && prev.AppRevision == rev && prev.Phase == v1beta1.WorkflowPhaseFailed {
		st.StartTime, st.EndTime = prev.StartTime, prev.EndTime
	}
	phaseOf := func(name string) (string, string, string) {
		if name == failed {
			return v1beta1.WorkflowStepFailed, reason, msg
		}
		return v1beta1.WorkflowStepSkipped, "", ""
	}
	if app.Spec.Workflow == nil {
		return st
	}
	names := workflow.Namer{}
	for i, step := range app.Spec.Workflow.Steps {
		name := names.Name(step.WorkflowStepBase)
		ss := v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{ID: fmt.Sprintf("%s-%d", rev, i), Name: name, Type: step.Type}}
		ss.Phase, ss.Reason, ss.Message = phaseOf(name)
		for j, sub := range step.SubSteps {
			subName := names.Name(sub)
			sst := v1beta1.StepStatus{ID: fmt.Sprintf("%s-%d-%d", rev, i, j), Name: subName, Type: sub.Type}
			sst.Phase, sst.Reason, sst.Message = phaseOf(subName)
			if sst.Phase == v1beta1.WorkflowStepFailed {
				ss.Phase, ss.Reason, ss.Message = sst.Phase, sst.Reason, fmt.Sprintf("sub-step %q failed", subName)
			}
			ss.SubStepsStatus = append(ss.SubStepsStatus, sst)
		}
		st.Steps = append(st.Steps, ss)
	}
	return st
}

// onePassStep is the phase of a step of a one-pass version: the worst of
// the components it delivers (apply-component: its component; deploy:
// every component).
func onePassStep(s *scope, step v1beta1.WorkflowStepBase) (phase, message string) {
	comps := map[string]bool{}
	if step.Type == v1beta1.WorkflowStepTypeApplyComponent && step.Properties != nil {
		var p struct {
			Component string `json:"component"`
		}
		if json.Unmarshal(step.Properties.Raw, &p) == nil && p.Component != "" {
			comps[p.Component] = true
		}
	}
	all := len(comps) == 0
	in := func(c string) bool { return all || comps[c] }
	if !s.keep.ran {
		return v1beta1.WorkflowStepPending, ""
	}
	for _, f := range s.keep.failures {
		if f.Component != "" && in(f.Component) {
			return v1beta1.WorkflowStepFailed, f.Err.Error()
		}
	}
	for _, c := range s.keep.waiting {
		if in(c) {
			return v1beta1.WorkflowStepPending, "waiting for the components it depends on"
		}
	}
	var unhealthy []string
	for k, h := range s.health {
		if c, _, _ := splitHealthKey(k); in(c) && !h.Healthy {
			unhealthy = append(unhealthy, h.Message)
		}
	}
	if len(unhealthy) > 0 {
		slices.Sort(unhealthy)
		unhealthy = slices.DeleteFunc(slices.Compact(unhealthy), func(m string) bool { return m == "" })
		return v1beta1.WorkflowStepRunning, "waiting for components to become healthy: " + strings.Join(unhealthy, "; ")
	}
	return v1beta1.WorkflowStepSucceeded, ""
}

// prevStep is the step's status in prev when prev is of revision rev.
func prevStep(prev *v1beta1.WorkflowStatus, rev, name string) *v1beta1.StepStatus {
	if prev == nil || prev.AppRevision != rev {
		return nil
	}
	for i := range prev.Steps {
		if prev.Steps[i].Name == name {
			return &prev.Steps[i].StepStatus
		}
	}
	return nil
}

// stamp sets a step's execution times: first when it left pending, last
// when its phase last changed.
func stamp(ss, prev *v1beta1.StepStatus, now time.Time) {
	if prev != nil {
		ss.FirstExecuteTime, ss.LastExecuteTime = prev.FirstExecuteTime, prev.LastExecuteTime
		if prev.Phase == ss.Phase && prev.Message == ss.Message {
			return
		}
	}
	if ss.Phase == v1beta1.WorkflowStepPending {
		return
	}
	if ss.FirstExecuteTime.IsZero() {
		ss.FirstExecuteTime = metav1.NewTime(now)
	}
	ss.LastExecuteTime = metav1.NewTime(now)
}
