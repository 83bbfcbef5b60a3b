// Package workflow runs the gates of an Application's workflow: deploy
// steps one after another, suspend steps between them that wait until
// the workflow is resumed (or for their duration), deploy steps with
// auto: false, and the steps' if conditions and timeouts. It is pure:
// given the
// steps, the status of the run so far and the time, Advance says which
// deploy steps a pass may apply, and Finish records what the pass
// achieved, in KubeVela's status.workflow shape.
//
// Only workflows with a gate (a suspend step, a deploy step with auto:
// false, a step with if or timeout) are run here (Gated); any other
// workflow is delivered in one pass, as before.
package workflow

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Step types the gate runs.
const (
	TypeDeploy = "deploy"
	// TypeApplyComponent delivers one component, to one cluster (the
	// hub by default), as a deploy step of that component would.
	TypeApplyComponent = "apply-component"
	// TypeApplyObject delivers one raw object, to one cluster (the hub
	// by default).
	TypeApplyObject = "apply-object"
	TypeSuspend     = "suspend"
)

// Phases of a run, and of its steps, as KubeVela names them.
const (
	PhaseExecuting  = "executing"
	PhaseSuspending = "suspending"
	PhaseSucceeded  = "succeeded"
	PhaseTerminated = "terminated"
	PhaseFailed     = "failed"

	StepPending    = "pending"
	StepRunning    = "running"
	StepSuspending = "suspending"
	StepSucceeded  = "succeeded"
	StepFailed     = "failed"
	StepSkipped    = "skipped"

	// ReasonTimeout is a failed step's reason when its timeout passed
	// before it succeeded.
	ReasonTimeout = "Timeout"
	// ReasonCondition is a failed step's reason when its if did not
	// evaluate; the step did not run.
	ReasonCondition = "ConditionError"
)

// IfAlways runs a step whatever the earlier steps did.
const IfAlways = "always"

// ModeStepByStep is the only mode a gated workflow runs in.
const ModeStepByStep = "StepByStep-DAG"

// SuspendStateManual marks, in status.workflow.suspendState, a run
// suspended by hand (steward workflow suspend): only a resume ends it,
// never a suspend step's duration.
const SuspendStateManual = "manual"

// Step is one step of a gated workflow.
type Step struct {
	// Name is the step's name; deploy steps name what their objects are
	// recorded under.
	Name string `json:"name"`
	Type string `json:"type"`
	// Duration, for a suspend step, resumes it by itself that long after
	// it was reached; zero waits for a resume.
	Duration time.Duration `json:"duration,omitempty"`
	// Message, for a suspend step, is shown while it waits.
	Message string `json:"message,omitempty"`
	// Approve, for a deploy step (KubeVela's auto: false), suspends the
	// run before the step until it is resumed.
	Approve bool `json:"approve,omitempty"`
	// If is the step's condition (KubeVela's if): "always", or a CUE
	// expression over status.<step>; empty runs the step when no earlier
	// step failed.
	If string `json:"if,omitempty"`
	// Timeout fails the step when it has not succeeded that long after it
	// started; zero waits for ever.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Encode returns steps as they are recorded on a version's tracker.
func Encode(steps []Step) string {
	raw, _ := json.Marshal(steps)
	return string(raw)
}

// Decode reads the steps recorded on a version's tracker.
func Decode(recorded string) ([]Step, error) {
	var steps []Step
	if err := json.Unmarshal([]byte(recorded), &steps); err != nil {
		return nil, fmt.Errorf("the workflow steps recorded with the version do not parse: %w", err)
	}
	return steps, nil
}

// Gated reports whether a workflow has a gate: a suspend step, a deploy
// step with auto: false, a step with if or timeout, or an apply-component
// step. Only such a workflow records which step delivers each object, and
// is run step by step.
func Gated(wf *v1beta1.Workflow) bool {
	if wf == nil {
		return false
	}
	for _, s := range wf.Steps {
		if s.Type == TypeSuspend || s.Type == TypeDeploy && NotAuto(s.Properties) || s.If != "" || s.Timeout != "" {
			return true
		}
		if s.Type == TypeApplyComponent || s.Type == TypeApplyObject {
			// apply-component and apply-object steps run one by one,
			// each waiting for what it applies, as in KubeVela.
			return true
		}
	}
	return false
}

// NotAuto reports whether a deploy step's properties say auto: false: the
// step waits for a resume before it runs, as in KubeVela.
func NotAuto(props *runtime.RawExtension) bool {
	if props == nil || len(props.Raw) == 0 {
		return false
	}
	var p struct {
		Auto *bool `json:"auto"`
	}
	return json.Unmarshal(props.Raw, &p) == nil && p.Auto != nil && !*p.Auto
}

// DeployStepName is the name a deploy step is recorded under: its own, or
// "deploy-<n>" (n counts deploy steps from 1), as placement names it.
func DeployStepName(name string, n int) string {
	if name != "" {
		return name
	}
	return fmt.Sprintf("%s-%d", TypeDeploy, n)
}

// Steps returns the steps of a gated workflow. A suspend step's
// properties are checked here: duration must parse.
func Steps(wf *v1beta1.Workflow) ([]Step, error) {
	var out []Step
	deploys, suspends, applies, objects := 0, 0, 0, 0
	for _, s := range wf.Steps {
		switch s.Type {
		case TypeDeploy:
			deploys++
			out = append(out, Step{Name: DeployStepName(s.Name, deploys), Type: TypeDeploy, Approve: NotAuto(s.Properties), If: s.If})
		case TypeApplyComponent:
			applies++
			out = append(out, Step{Name: ApplyComponentStepName(s.Name, applies), Type: TypeApplyComponent, If: s.If})
		case TypeApplyObject:
			objects++
			out = append(out, Step{Name: ApplyObjectStepName(s.Name, objects), Type: TypeApplyObject, If: s.If})
		case TypeSuspend:
			suspends++
			step := Step{Name: s.Name, Type: TypeSuspend, If: s.If}
			if step.Name == "" {
				step.Name = fmt.Sprintf("%s-%d", TypeSuspend, suspends)
			}
			if s.Properties != nil && len(s.Properties.Raw) > 0 {
				var props struct {
					Duration string `json:"duration,omitempty"`
					Message  string `json:"message,omitempty"`
				}
				if err := json.Unmarshal(s.Properties.Raw, &props); err != nil {
					return nil, fmt.Errorf("suspend step %q: properties: %w", step.Name, err)
				}
				if props.Duration != "" {
					d, err := time.ParseDuration(props.Duration)
					if err != nil || d <= 0 {
						return nil, fmt.Errorf("suspend step %q: duration %q: want a positive duration like 30s or 2m15s", step.Name, props.Duration)
					}
					step.Duration = d
				}
				step.Message = props.Message
			}
			out = append(out, step)
		default:
			return nil, fmt.Errorf("step %q: type %q is not run in a workflow with suspend steps", s.Name, s.Type)
		}
	}
	if deploys+applies+objects == 0 {
		return nil, fmt.Errorf("a workflow with suspend steps needs deploy, apply-component or apply-object steps: it would deliver nothing")
	}
	seen := map[string]bool{}
	for _, s := range out {
		if seen[s.Name] {
			return nil, fmt.Errorf("step name %q is used twice", s.Name)
		}
		seen[s.Name] = true
	}
	for i, s := range wf.Steps {
		if s.Timeout != "" {
			d, err := time.ParseDuration(s.Timeout)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("step %q: timeout %q: want a positive duration like 30s or 5m", out[i].Name, s.Timeout)
			}
			out[i].Timeout = d
		}
	}
	// A condition must evaluate to a boolean over the steps' status
	// (here, before any has run): a typo in a step name is refused now,
	// not found when the step is reached.
	pending := &v1beta1.WorkflowStatus{}
	for _, s := range out {
		pending.Steps = append(pending.Steps, v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{Name: s.Name, Phase: StepPending}})
	}
	for _, s := range out {
		if _, err := s.runs(pending, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runs evaluates the step's condition over the run's status: with no if,
// the step runs when no earlier step failed (failed says whether one
// did), as in KubeVela.
func (s Step) runs(st *v1beta1.WorkflowStatus, failed bool) (bool, error) {
	switch s.If {
	case "":
		return !failed, nil
	case IfAlways:
		return true, nil
	}
	ok, err := evalIf(s.If, st)
	if err != nil {
		return false, fmt.Errorf("step %q: if %q: %v (Steward reads always and CUE over status.<step>.phase, succeeded, failed, skipped, timeout, reason and message; inputs are not supported)", s.Name, s.If, err)
	}
	return ok, nil
}

// evalIf evaluates a KubeVela if expression: CUE, where status.<step>
// holds each step's phase, reason and message and the booleans succeeded,
// failed, skipped and timeout.
func evalIf(expr string, st *v1beta1.WorkflowStatus) (bool, error) {
	fields := make(map[string]any, len(st.Steps))
	for _, ss := range st.Steps {
		fields[ss.Name] = map[string]any{
			"phase": ss.Phase, "reason": ss.Reason, "message": ss.Message,
			"succeeded": ss.Phase == StepSucceeded, "failed": ss.Phase == StepFailed,
			"skipped": ss.Phase == StepSkipped, "timeout": ss.Phase == StepFailed && ss.Reason == ReasonTimeout,
		}
	}
	ctx := cuecontext.New()
	scope := ctx.Encode(map[string]any{"status": fields})
	v := ctx.CompileString(expr, cue.Scope(scope))
	if err := v.Err(); err != nil {
		return false, err
	}
	return v.Bool()
}

// Run is one pass over a gated workflow.
type Run struct {
	steps []Step
	// Status is the run's status after this pass; Finish completes it.
	Status *v1beta1.WorkflowStatus
	// Reached are the deploy steps whose objects the pass applies.
	Reached map[string]bool
	// current is the deploy step this pass runs for the first time (or
	// again, not yet succeeded); -1 for none.
	current int
	// Requeue is when the run must be looked at again: a suspend step's
	// duration ends, or a step's timeout passes; zero when nothing waits
	// for time.
	Requeue time.Duration
	// Next is true when a step finished and the next one can run at once.
	Next bool
	// Started is true when this pass started the run (there was none of
	// this revision).
	Started bool
}

// Advance starts the pass of revision: from the status of the run so far
// (prev, nil for none; a run of another revision starts over), it moves
// past suspend steps that were resumed or whose duration elapsed, skips
// steps whose condition is false, fails steps whose timeout passed, and
// reaches, at most, one deploy step that has not succeeded yet.
func Advance(steps []Step, prev *v1beta1.WorkflowStatus, revision string, now time.Time) *Run {
	st, started := restart(steps, prev, revision, now)
	r := &Run{steps: steps, Status: st, Reached: map[string]bool{}, current: -1, Started: started}
	for i, s := range steps {
		// What a deploy step that ran applied is kept; a skipped step,
		// or one not reached, delivers nothing.
		if ss := st.Steps[i]; s.Delivers() && (ss.Phase == StepSucceeded || ss.Phase == StepFailed && ss.Reason == ReasonTimeout) {
			r.Reached[s.Name] = true
		}
	}
	if st.Finished {
		return r
	}
	t := metav1.NewTime(now)
	st.Phase, st.Message = PhaseExecuting, ""
	if !st.Suspend {
		st.SuspendState = ""
	}
	manual := st.Suspend && st.SuspendState == SuspendStateManual
	failed := false
	for i, s := range steps {
		ss := &st.Steps[i]
		switch ss.Phase {
		case StepSucceeded, StepSkipped:
			continue
		case StepFailed:
			failed = true
			continue
		}
		if st.Terminated {
			st.Phase, st.Message = PhaseTerminated, "the workflow was terminated; restart it to run the remaining steps"
			return r
		}
		if ss.Phase == StepPending && !(st.Suspend && s.Delivers() && !s.Approve) {
			// A step's condition is read when it is reached.
			run, err := s.runs(st, failed)
			if err != nil {
				ss.Phase, ss.Reason, ss.Message, ss.FirstExecuteTime, ss.LastExecuteTime = StepFailed, ReasonCondition, err.Error(), t, t
				failed = true
				continue
			}
			if !run {
				ss.Phase, ss.FirstExecuteTime, ss.LastExecuteTime = StepSkipped, t, t
				continue
			}
		}
		switch s.Type {
		case TypeSuspend:
			if ss.FirstExecuteTime.IsZero() {
				ss.FirstExecuteTime = t
			}
			// A resume, or a duration that ends before the timeout, ends
			// the wait, however late this pass runs.
			resumed := !st.Suspend && (ss.Phase == StepSuspending || ss.Phase == StepRunning)
			if s.Duration > 0 && !resumed && !manual && (s.Timeout == 0 || s.Duration < s.Timeout) {
				// Only a resume ends a suspension by hand.
				if left := ss.FirstExecuteTime.Add(s.Duration).Sub(now); left > 0 {
					r.wake(left)
				} else {
					resumed, st.Suspend = true, false
				}
			}
			if resumed {
				ss.Phase, ss.Message, ss.LastExecuteTime = StepSucceeded, "", t
				continue
			}
			// Its timeout counts from when it was reached: an approval
			// not given in time fails it.
			if r.timedOut(s, ss, ss.FirstExecuteTime, now) {
				if !manual {
					// The step held the run; the run goes on without it.
					st.Suspend = false
				}
				failed = true
				continue
			}
			if ss.Phase != StepSuspending {
				ss.LastExecuteTime = t
			}
			ss.Phase = StepSuspending
			ss.Message = s.Message
			st.Suspend, st.Phase = true, PhaseSuspending
			st.Message = fmt.Sprintf("suspended at step %q", s.Name)
			if manual {
				st.Message += " (suspended by hand: only a resume goes on)"
			}
			return r
		case TypeDeploy, TypeApplyComponent, TypeApplyObject:
			if s.Approve && (ss.Phase != StepRunning || ss.Message == approvalMessage) {
				// auto: false: the step waits for a resume, as a
				// suspend step before it would. vela workflow resume
				// marks it running; its message still says it waits.
				if ss.FirstExecuteTime.IsZero() {
					ss.FirstExecuteTime = t
				}
				if resumed := !st.Suspend && (ss.Phase == StepSuspending || ss.Phase == StepRunning); !resumed {
					if ss.Phase != StepSuspending {
						ss.LastExecuteTime = t
					}
					ss.Phase, ss.Message = StepSuspending, approvalMessage
					st.Suspend, st.Phase = true, PhaseSuspending
					st.Message = fmt.Sprintf("suspended before step %q (auto: false)", s.Name)
					return r
				}
				// Approved: it starts deploying in this pass.
				ss.Phase, ss.Message = StepPending, ""
			}
			// Its timeout counts from when it started deploying.
			if ss.Phase == StepRunning && r.timedOut(s, ss, ss.LastExecuteTime, now) {
				failed = true
				continue
			}
			if st.Suspend && ss.Phase != StepRunning {
				// Suspended by hand (vela or steward workflow suspend)
				// before this step started.
				st.Phase, st.Message = PhaseSuspending, fmt.Sprintf("suspended before step %q", s.Name)
				return r
			}
			if ss.FirstExecuteTime.IsZero() {
				ss.FirstExecuteTime = t
			}
			if ss.Phase != StepRunning {
				ss.LastExecuteTime = t
				if s.Timeout > 0 {
					r.wake(s.Timeout)
				}
			}
			ss.Phase = StepRunning
			r.Reached[s.Name] = true
			r.current = i
			return r
		}
	}
	end(st, now)
	return r
}

// approvalMessage is the message of a deploy step with auto: false while
// it waits for its approval.
const approvalMessage = "waiting for approval (auto: false)"

// timedOut fails the step when its timeout passed since started, and
// otherwise asks for a pass when it will. A deploy step that times out
// was deploying: what it applied stays kept.
func (r *Run) timedOut(s Step, ss *v1beta1.WorkflowStepStatus, started metav1.Time, now time.Time) bool {
	if s.Timeout <= 0 || started.IsZero() {
		return false
	}
	if left := started.Add(s.Timeout).Sub(now); left > 0 {
		r.wake(left)
		return false
	}
	ss.Phase, ss.Reason, ss.LastExecuteTime = StepFailed, ReasonTimeout, metav1.NewTime(now)
	ss.Message = fmt.Sprintf("the step did not succeed within its timeout (%s)", s.Timeout)
	if s.Delivers() {
		r.Reached[s.Name] = true
	}
	return true
}

// Delivers reports whether the step applies objects: a deploy, an
// apply-component or an apply-object step. Its objects are recorded under
// its name.
func (s Step) Delivers() bool {
	return s.Type == TypeDeploy || s.Type == TypeApplyComponent || s.Type == TypeApplyObject
}

// ApplyObjectStepName is the name an apply-object step is recorded under:
// its own, or "apply-object-<n>" (n counts apply-object steps from 1).
func ApplyObjectStepName(name string, n int) string {
	if name != "" {
		return name
	}
	return fmt.Sprintf("%s-%d", TypeApplyObject, n)
}

// ApplyComponentStepName is the name an apply-component step is recorded
// under: its own, or "apply-component-<n>" (n counts apply-component
// steps from 1), as placement names it.
func ApplyComponentStepName(name string, n int) string {
	if name != "" {
		return name
	}
	return fmt.Sprintf("%s-%d", TypeApplyComponent, n)
}

// wake asks for a pass within d.
func (r *Run) wake(d time.Duration) {
	if r.Requeue == 0 || d < r.Requeue {
		r.Requeue = d
	}
}

// Dispatching names the deploy step this pass runs for the first time or
// again until it succeeds: its objects are applied as a dispatch. Empty
// when the pass runs none.
func (r *Run) Dispatching() string {
	if r == nil || r.current < 0 {
		return ""
	}
	return r.steps[r.current].Name
}

// Finish records the outcome of the pass for the deploy step it ran:
// done is true when every object of the step was applied and every
// component it delivers is healthy.
func (r *Run) Finish(done bool, message string, now time.Time) {
	if r.current < 0 {
		return
	}
	ss := &r.Status.Steps[r.current]
	if !done {
		ss.Message = message
		return
	}
	ss.Phase, ss.Message, ss.LastExecuteTime = StepSucceeded, "", metav1.NewTime(now)
	r.Next = true
	for i := r.current + 1; i < len(r.steps); i++ {
		switch r.Status.Steps[i].Phase {
		case StepSucceeded, StepFailed, StepSkipped:
		default:
			// The next pass reads its condition and runs it.
			return
		}
	}
	end(r.Status, now)
	r.Next = false
}

// Succeeded reports whether the run finished without a failed step.
func (r *Run) Succeeded() bool {
	return r != nil && r.Status.Finished && r.Status.Phase == PhaseSucceeded
}

// end finishes the run: succeeded, or, when a step failed, failed and
// terminated, as KubeVela ends it.
func end(st *v1beta1.WorkflowStatus, now time.Time) {
	st.Finished, st.Suspend, st.SuspendState = true, false, ""
	st.Phase, st.Message = PhaseSucceeded, ""
	for _, ss := range st.Steps {
		if ss.Phase == StepFailed {
			st.Phase, st.Terminated = PhaseFailed, true
			st.Message = fmt.Sprintf("step %q failed: %s", ss.Name, ss.Message)
			break
		}
	}
	if st.EndTime.IsZero() {
		st.EndTime = metav1.NewTime(now)
	}
}

// restart returns a copy of prev for revision, or a new run (and true)
// when prev is of another revision or of other steps.
func restart(steps []Step, prev *v1beta1.WorkflowStatus, revision string, now time.Time) (*v1beta1.WorkflowStatus, bool) {
	if prev != nil && prev.AppRevision == revision && sameSteps(steps, prev.Steps) {
		return prev.DeepCopy(), false
	}
	st := &v1beta1.WorkflowStatus{AppRevision: revision, Mode: ModeStepByStep, StartTime: metav1.NewTime(now)}
	for i, s := range steps {
		st.Steps = append(st.Steps, v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{
			ID: fmt.Sprintf("%s-%d", revision, i), Name: s.Name, Type: s.Type, Phase: StepPending,
		}})
	}
	return st, true
}

func sameSteps(steps []Step, status []v1beta1.WorkflowStepStatus) bool {
	if len(steps) != len(status) {
		return false
	}
	for i, s := range steps {
		if status[i].Name != s.Name || status[i].Type != s.Type {
			return false
		}
	}
	return true
}
