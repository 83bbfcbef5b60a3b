package workflow

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// holding reports whether a suspension keeps steps from starting: one
// the run was in when the pass began and is still in. Steps that may run
// together start together in the pass that reaches a suspend step, as
// KubeVela runs them; the suspension holds the rest from the next pass.
func (r *Run) holding() bool {
	return r.suspended && r.Status.Suspend
}

// settleSuspend keeps the run suspended while a step waits for a resume
// (a suspension by hand lasts until resumed): one left suspending by this
// pass, or one that was suspending when the pass began, unless the pass
// began resumed.
func (r *Run) settleSuspend() {
	if r.manual || r.byHand {
		return
	}
	r.Status.Suspend = false
	r.walk(func(s *Step, ss *v1beta1.StepStatus) {
		if ss.Phase == v1beta1.WorkflowStepSuspending && (r.suspended || r.waiting[s.Name]) {
			r.Status.Suspend = true
		}
	})
}

// suspend runs a suspend step: it waits until the run is resumed, or for
// its duration.
func (r *Run) suspend(s *Step, ss *v1beta1.StepStatus) {
	t := metav1.NewTime(r.now)
	if ss.FirstExecuteTime.IsZero() {
		ss.FirstExecuteTime = t
	}
	// A resume, or a duration that ends before the timeout, ends the
	// wait, however late this pass runs.
	resumed := r.resumed(ss)
	if s.Duration > 0 && !resumed && !r.manual && (s.Timeout == 0 || s.Duration < s.Timeout) {
		// Only a resume ends a suspension by hand.
		if left := ss.FirstExecuteTime.Add(s.Duration).Sub(r.now); left > 0 {
			r.wake(left)
		} else {
			resumed = true
		}
	}
	if resumed {
		ss.Phase, ss.Message, ss.LastExecuteTime = v1beta1.WorkflowStepSucceeded, "", t
		r.settleSuspend()
		return
	}
	// Its timeout counts from when it was reached: an approval not given
	// in time fails it, and the run goes on without it.
	if r.timedOut(s, ss, ss.FirstExecuteTime) {
		r.settleSuspend()
		return
	}
	runMsg := fmt.Sprintf("suspended at step %q", s.Name)
	if r.manual {
		runMsg += " (suspended by hand: only a resume goes on)"
	}
	r.wait(s, ss, s.Message, runMsg)
}

// resumed reports whether a step waiting for a resume (a suspend step, or
// a deploy step with auto: false) got one: the run is not suspended now,
// and the step was waiting, or was marked running as vela workflow resume
// marks it.
func (r *Run) resumed(ss *v1beta1.StepStatus) bool {
	return !r.suspended && (ss.Phase == v1beta1.WorkflowStepSuspending || ss.Phase == v1beta1.WorkflowStepRunning)
}

// wait leaves a step waiting for a resume, with message msg, and the run
// suspended, with runMsg when it was not suspended already.
func (r *Run) wait(s *Step, ss *v1beta1.StepStatus, msg, runMsg string) {
	st := r.Status
	if ss.Phase != v1beta1.WorkflowStepSuspending {
		ss.LastExecuteTime = metav1.NewTime(r.now)
	}
	ss.Phase, ss.Message = v1beta1.WorkflowStepSuspending, msg
	r.waiting[s.Name] = true
	if st.Phase != v1beta1.WorkflowPhaseSuspending {
		st.Message = runMsg
	}
	st.Suspend, st.Phase = true, v1beta1.WorkflowPhaseSuspending
}

// approvalMessage is the message of a deploy step with auto: false while
// it waits for its approval.
const approvalMessage = "waiting for approval (auto: false)"
