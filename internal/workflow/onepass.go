package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// onePassRun is what a run of a version delivered in one pass reports
// from: the steps KubeVela runs for it, and the run so far.
type onePassRun struct {
	steps    []v1beta1.WorkflowStepBase
	mode     string
	revision string
	prev     *v1beta1.WorkflowStatus
}

// OnePassRun is the run of a version Steward delivers in one pass (a
// workflow without gates, or none), revision: tools that read step
// phases (vela status, dashboards, CI waiting for workflowFailed) find
// the steps KubeVela would show for it (OnePass). Finish gives each its
// phase from the pass's facts (Judge.Delivery): pending until its
// components are applied (or while they wait for their dependencies),
// running until they are healthy, failed while one of their objects
// cannot be applied, succeeded once healthy; until then every step is
// pending. A run of the revision that finished stays as it is, as
// KubeVela's does: later health shows in the conditions, not in a
// finished run. Times carry over from prev of the same revision, so a
// pass that changes no phase writes nothing.
//
// The run applies nothing and waits for nothing: Reached, Next, Requeue
// and Started stay zero, and Gated is false.
func OnePassRun(app *v1beta1.Application, prev *v1beta1.WorkflowStatus, revision string, now time.Time) *Run {
	r := &Run{kind: kindOnePass, Reached: map[string]bool{}}
	if prev != nil && prev.AppRevision == revision && prev.Finished {
		r.Status = prev
		return r
	}
	steps, mode := OnePass(app)
	r.onePass = &onePassRun{steps: steps, mode: mode, revision: revision, prev: prev}
	r.judgeOnePass(Delivery{}, now)
	return r
}

// judgeOnePass sets the status of a one-pass run from what the pass
// delivered; a finished run stays as it was.
func (r *Run) judgeOnePass(d Delivery, now time.Time) {
	o := r.onePass
	if o == nil {
		return
	}
	prev, rev := o.prev, o.revision
	st := &v1beta1.WorkflowStatus{AppRevision: rev, Mode: o.mode, StartTime: metav1.NewTime(now)}
	if prev != nil && prev.AppRevision == rev && !prev.StartTime.IsZero() {
		st.StartTime = prev.StartTime
	}
	done := true
	for i, step := range o.steps {
		phase, msg := d.phase(step)
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
	r.Status = st
}

// phase is the phase of a step of a one-pass version: the worst of the
// components it delivers (apply-component: its component; deploy: every
// component).
func (d Delivery) phase(step v1beta1.WorkflowStepBase) (phase, message string) {
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
	if !d.Kept {
		return v1beta1.WorkflowStepPending, ""
	}
	for _, f := range d.Failed {
		if f.Component != "" && in(f.Component) {
			return v1beta1.WorkflowStepFailed, f.Message
		}
	}
	for _, c := range d.Waiting {
		if in(c) {
			return v1beta1.WorkflowStepPending, "waiting for the components it depends on"
		}
	}
	var unhealthy []string
	for _, h := range d.Unhealthy {
		if in(h.Component) {
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
