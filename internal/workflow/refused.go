package workflow

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// RefusedRun is the run of revision (the Application's newest) whose
// workflow Steward refused before anything of it was applied (a step
// type it does not run, an invalid workflow, a step type with no
// definition), or of a version whose recorded steps cannot run: a
// failed run, the step err names failed (reason UnsupportedWorkflow, or
// DefinitionNotFound for a *MissingDefinitionError), every other step
// skipped, since none ran. Its times carry over from prev when prev is
// the same failed run. Finish has nothing to judge in it.
func RefusedRun(app *v1beta1.Application, revision string, err error, prev *v1beta1.WorkflowStatus, now time.Time) *Run {
	return &Run{kind: kindRefused, Reached: map[string]bool{}, Status: refusedStatus(app, revision, err, prev, now)}
}

func refusedStatus(app *v1beta1.Application, rev string, err error, prev *v1beta1.WorkflowStatus, now time.Time) *v1beta1.WorkflowStatus {
	var unsupported *UnsupportedError
	var missing *MissingDefinitionError
	failed, reason := "", v1beta1.ReasonUnsupportedWorkflow
	switch {
	case errors.As(err, &unsupported):
		failed = unsupported.Step
	case errors.As(err, &missing):
		failed, reason = missing.Step, v1beta1.ReasonDefinitionNotFound
	}
	msg := err.Error()
	st := &v1beta1.WorkflowStatus{AppRevision: rev, Mode: Flow{}.Mode(), Phase: v1beta1.WorkflowPhaseFailed, Message: msg,
		Terminated: true, Finished: true, StartTime: metav1.NewTime(now), EndTime: metav1.NewTime(now)}
	if dag, subs, merr := Mode(app.Spec.Workflow); merr == nil {
		st.Mode = Flow{DAG: dag, SubStepByStep: subs}.Mode()
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
	names := Namer{}
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
