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
	st := r.Status
	t := metav1.NewTime(r.now)
	if ss.FirstExecuteTime.IsZero() {
		ss.FirstExecuteTime = t
	}
	// A resume, or a duration that ends before the timeout, ends the
	// wait, however late this pass runs.
	resumed := !r.suspended && (ss.Phase == v1beta1.WorkflowStepSuspending || ss.Phase == v1beta1.WorkflowStepRunning)
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
	r.waiting[s.Name] = true
	if ss.Phase != v1beta1.WorkflowStepSuspending {
		ss.LastExecuteTime = t
	}
	ss.Phase = v1beta1.WorkflowStepSuspending
	ss.Message = s.Message
	if st.Phase != v1beta1.WorkflowPhaseSuspending {
		st.Message = fmt.Sprintf("suspended at step %q", s.Name)
		if r.manual {
			st.Message += " (suspended by hand: only a resume goes on)"
		}
	}
	st.Suspend, st.Phase = true, v1beta1.WorkflowPhaseSuspending
}

// approvalMessage is the message of a deploy step with auto: false while
// it waits for its approval.
const approvalMessage = "waiting for approval (auto: false)"
