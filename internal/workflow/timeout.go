package workflow

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// waitTimeout applies a step's timeout while it waits, before it starts,
// for the values it takes: counted from when it was first reached, it
// fails the step, which applied nothing. It returns false: the step does
// not start in this pass.
func (r *Run) waitTimeout(s *Step, ss *v1beta1.StepStatus) bool {
	if ss.FirstExecuteTime.IsZero() {
		ss.FirstExecuteTime = metav1.NewTime(r.now)
	}
	if !r.expired(s, ss.FirstExecuteTime) {
		return false
	}
	ss.Phase, ss.Reason, ss.LastExecuteTime = v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepReasonTimeout, metav1.NewTime(r.now)
	ss.Message = fmt.Sprintf("the step did not start within its timeout (%s): %s", s.Timeout, ss.Message)
	return false
}

// timedOut fails the step when its timeout passed since started, and
// otherwise asks for a pass when it will. A delivering step that times
// out was delivering: what it applied stays kept.
func (r *Run) timedOut(s *Step, ss *v1beta1.StepStatus, started metav1.Time) bool {
	if !r.expired(s, started) {
		return false
	}
	ss.Phase, ss.Reason, ss.LastExecuteTime = v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepReasonTimeout, metav1.NewTime(r.now)
	ss.Message = fmt.Sprintf("the step did not succeed within its timeout (%s)", s.Timeout)
	if s.Delivers() {
		r.Reached[s.Name] = true
	}
	return true
}

// expired reports whether the step's timeout passed since started, and
// otherwise asks for a pass when it will.
func (r *Run) expired(s *Step, started metav1.Time) bool {
	if s.Timeout <= 0 || started.IsZero() {
		return false
	}
	if left := started.Add(s.Timeout).Sub(r.now); left > 0 {
		r.wake(left)
		return false
	}
	return true
}

func (r *Run) wake(d time.Duration) {
	if r.Requeue == 0 || d < r.Requeue {
		r.Requeue = d
	}
}
