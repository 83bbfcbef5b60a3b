package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// Run is one pass of the workflow of the version an Application keeps,
// and its Status is status.workflow after the pass: the controller
// writes nothing else there (Report). A run is one of three kinds, each
// made by its own constructor and completed by Finish:
//
//   - a gated run (Advance, AdvanceWith): a workflow with more than
//     deploy steps to run in one pass, run step by step;
//   - a one-pass run (OnePassRun): a version delivered in one pass,
//     reporting the steps KubeVela would show for it;
//   - a refused run (RefusedRun): a workflow Steward refused before
//     anything of it was applied, failed at the step at fault.
//
// Only a gated run decides what a pass applies (Gated); the others
// report.
type Run struct {
	kind runKind
	flow Flow
	// Status is the run's status after this pass; Finish completes it.
	Status *v1beta1.WorkflowStatus
	// Reached are the delivering steps whose objects the pass applies.
	Reached map[string]bool
	// running are the steps this pass runs (for the first time, or again
	// until they succeed) and Finish judges, in the order reached.
	running []string
	// status finds a step's status by name.
	status map[string]*v1beta1.StepStatus
	// delivers are the delivering steps, by name.
	delivers map[string]bool
	// waited is whether Finish left a step waiting.
	waited bool
	// Requeue is when the run must be looked at again: a suspend step's
	// duration ends, or a step's timeout passes; zero when nothing waits
	// for time.
	Requeue time.Duration
	// Next is true when a step finished and the steps after it can run
	// at once.
	Next bool
	// Started is true when this pass started the run (there was none of
	// this revision).
	Started bool

	now time.Time
	// suspended is whether the run was suspended when the pass began: a
	// suspending step ends when it is not (a resume).
	suspended bool
	manual    bool
	// byHand is whether the run was suspended with no step waiting for a
	// resume: it stays suspended until resumed.
	byHand bool
	// held is the first step a suspension keeps from starting.
	held string
	// waiting are the steps this pass left suspending.
	waiting map[string]bool
	// data is what the steps exported so far, and which steps taking
	// them have their objects rendered with them.
	data Data
	// renderWanted is whether a step waits only for its objects to be
	// rendered with the values it takes.
	renderWanted bool
	// verdicts are how the custom steps the controller ran ended
	// (Settle); resumedCustom are those resumed after suspending
	// themselves.
	verdicts      map[string]Verdict
	resumedCustom map[string]bool
	// onePass is what a one-pass run that has not finished reports from.
	onePass *onePassRun
}

// Advance starts the pass of revision: from the status of the run so far
// (prev, nil for none; a run of another revision starts over), it moves
// past suspend steps that were resumed or whose duration elapsed, skips
// steps whose condition is false, fails steps whose timeout passed, and
// reaches the steps that may run now: the next step when steps run one by
// one, every step whose dependencies have run in DAG mode, and a step
// group's sub-steps as its mode says.
func Advance(f Flow, prev *v1beta1.WorkflowStatus, revision string, now time.Time) *Run {
	return AdvanceWith(f, prev, revision, now, Data{})
}

// AdvanceWith is Advance for a run whose steps pass data: d holds the
// values exported so far in the run prev (dropped when the run starts
// over) and the steps whose objects are rendered with them. A step taking
// inputs starts only once its objects are rendered with them.
func AdvanceWith(f Flow, prev *v1beta1.WorkflowStatus, revision string, now time.Time, d Data) *Run {
	st, started := restart(f, prev, revision, now)
	if started {
		d = Data{}
	}
	values := make(map[string]json.RawMessage, len(d.Values))
	maps.Copy(values, d.Values)
	d.Values = values
	r := &Run{flow: f, Status: st, Reached: map[string]bool{}, Started: started, now: now, data: d,
		status: map[string]*v1beta1.StepStatus{}, waiting: map[string]bool{}, delivers: f.Delivering()}
	r.walk(func(s *Step, ss *v1beta1.StepStatus) {
		r.status[s.Name] = ss
		// What a delivering step that started applied is kept, also
		// when it failed (timed out, or terminated by vela) or the run
		// was terminated while it ran; a skipped step, or one not
		// reached, delivers nothing.
		if s.Delivers() && begun(ss) {
			r.Reached[s.Name] = true
		}
	})
	if st.Finished {
		return r
	}
	st.Phase, st.Message = v1beta1.WorkflowPhaseExecuting, ""
	if !st.Suspend {
		st.SuspendState = ""
	}
	r.suspended = st.Suspend
	r.manual = st.Suspend && st.SuspendState == SuspendStateManual
	if st.Suspend && !r.manual {
		// Suspended with no step waiting: by hand (vela workflow
		// suspend), until resumed.
		r.byHand = true
		r.walk(func(_ *Step, ss *v1beta1.StepStatus) {
			r.byHand = r.byHand && ss.Phase != v1beta1.WorkflowStepSuspending
		})
	}
	top := r.top()
	if st.Terminated && !allRun(top) {
		st.Phase, st.Message = v1beta1.WorkflowPhaseTerminated, "the workflow was terminated; restart it to run the remaining steps"
		return r
	}
	done := r.level(f.Steps, top, f.DAG)
	r.settleSuspend()
	if !st.Suspend && r.held != "" {
		// A suspension that ended in this pass held a step: run it now.
		r.Next = true
	}
	if done {
		end(st, now)
		return r
	}
	if st.Suspend && st.Phase != v1beta1.WorkflowPhaseSuspending {
		st.Phase = v1beta1.WorkflowPhaseSuspending
		st.Message = "suspended"
		if r.held != "" {
			st.Message = fmt.Sprintf("suspended before step %q", r.held)
		}
		if r.manual {
			st.Message += " (suspended by hand: only a resume goes on)"
		}
	}
	return r
}

// top returns the statuses of the top-level steps.
func (r *Run) top() []*v1beta1.StepStatus {
	out := make([]*v1beta1.StepStatus, len(r.Status.Steps))
	for i := range r.Status.Steps {
		out[i] = &r.Status.Steps[i].StepStatus
	}
	return out
}

// subs returns the statuses of the i-th top-level step's sub-steps.
func (r *Run) subs(i int) []*v1beta1.StepStatus {
	ws := &r.Status.Steps[i]
	out := make([]*v1beta1.StepStatus, len(ws.SubStepsStatus))
	for j := range ws.SubStepsStatus {
		out[j] = &ws.SubStepsStatus[j]
	}
	return out
}

// walk calls fn for every step with its status.
func (r *Run) walk(fn func(s *Step, ss *v1beta1.StepStatus)) {
	for i := range r.flow.Steps {
		fn(&r.flow.Steps[i], &r.Status.Steps[i].StepStatus)
		for j := range r.flow.Steps[i].Sub {
			fn(&r.flow.Steps[i].Sub[j], &r.Status.Steps[i].SubStepsStatus[j])
		}
	}
}

// begun reports whether a step began to run: what a delivering step
// that started applied stays applied and kept.
func begun(ss *v1beta1.StepStatus) bool {
	switch ss.Phase {
	case v1beta1.WorkflowStepSucceeded:
		return true
	case v1beta1.WorkflowStepRunning:
		// vela workflow resume marks an approval step running before it
		// is approved.
		return ss.Message != approvalMessage
	case v1beta1.WorkflowStepFailed:
		// A condition that did not evaluate failed the step before it
		// ran.
		return ss.Reason != v1beta1.WorkflowStepReasonConditionError
	}
	return false
}

func ran(phase string) bool {
	return phase == v1beta1.WorkflowStepSucceeded || phase == v1beta1.WorkflowStepFailed || phase == v1beta1.WorkflowStepSkipped
}

func allRun(ss []*v1beta1.StepStatus) bool {
	for _, s := range ss {
		if !ran(s.Phase) {
			return false
		}
	}
	return true
}

// blocks reports whether a step that ran keeps the steps waiting for it
// from running when they have no if: it failed, or was skipped for a
// failure before it.
func blocks(s *Step, ss *v1beta1.StepStatus) bool {
	return ss.Phase == v1beta1.WorkflowStepFailed || ss.Phase == v1beta1.WorkflowStepSkipped && s.If == ""
}

// level runs the steps of one level (the workflow's, or a group's
// sub-steps): one by one, or, in DAG mode, each once the steps it depends
// on have run. It reports whether every step of the level has run.
func (r *Run) level(steps []Step, ss []*v1beta1.StepStatus, dag bool) bool {
	index := make(map[string]int, len(steps))
	for i, s := range steps {
		index[s.Name] = i
	}
	order, _ := topoOrder(steps)
	for _, i := range order {
		s, cur := &steps[i], ss[i]
		if ran(cur.Phase) {
			continue
		}
		failed, ready := false, true
		waits := s.DependsOn
		if !dag {
			// One by one: a step waits for every step before it.
			waits = nil
			for j := 0; j < i; j++ {
				waits = append(waits, steps[j].Name)
			}
		}
		for _, d := range waits {
			j := index[d]
			ready = ready && ran(ss[j].Phase)
			failed = failed || blocks(&steps[j], ss[j])
		}
		if !ready {
			if !dag {
				break
			}
			continue
		}
		r.step(s, cur, failed)
		if !dag && !ran(cur.Phase) {
			break
		}
	}
	return allRun(ss)
}

// step runs one step that may run (the steps it waits for have run);
// failed says whether one of them failed.
func (r *Run) step(s *Step, ss *v1beta1.StepStatus, failed bool) {
	t := metav1.NewTime(r.now)
	if ss.Phase == v1beta1.WorkflowStepPending {
		if r.holding() && s.Type != v1beta1.WorkflowStepTypeSuspend && !s.Approve {
			// A suspension keeps steps from starting; those running go
			// on.
			if r.held == "" {
				r.held = s.Name
			}
			return
		}
		// A step's condition is read when it is reached; one reading the
		// step's inputs once their values are exported.
		if s.readsInputs() && !r.valuesReady(s, ss) {
			return
		}
		run, err := s.runs(r.flow, r.Status, failed, r.inputValues(s))
		if errors.As(err, new(*cueeval.BudgetError)) || errors.Is(err, cueeval.ErrUnavailable) {
			// Checked when the version was rendered, the condition did
			// not evaluate now within the budget (a busy node, an
			// evaluator the kernel took): the step waits, and the run is
			// looked at again.
			ss.Message = err.Error()
			r.wake(conditionRetry)
			return
		}
		if err != nil {
			ss.Phase, ss.Reason, ss.Message, ss.FirstExecuteTime, ss.LastExecuteTime = v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepReasonConditionError, err.Error(), t, t
			return
		}
		if !run {
			r.skip(s, ss)
			return
		}
		if len(s.Inputs) > 0 && !r.inputsReady(s, ss) {
			return
		}
	}
	switch s.Type {
	case v1beta1.WorkflowStepTypeSuspend:
		r.suspend(s, ss)
	case v1beta1.WorkflowStepTypeStepGroup:
		if ss.FirstExecuteTime.IsZero() {
			ss.FirstExecuteTime, ss.LastExecuteTime = t, t
		}
		ss.Phase = v1beta1.WorkflowStepRunning
		i := slices.IndexFunc(r.flow.Steps, func(g Step) bool { return g.Name == s.Name })
		subs := r.subs(i)
		if r.timedOut(s, ss, ss.FirstExecuteTime) {
			// The group's sub-steps that have not run end with it: those
			// running fail (what they applied is kept), the others
			// (pending, waiting for a resume or an approval) are
			// skipped, never applied.
			for j, sub := range subs {
				if ran(sub.Phase) {
					continue
				}
				if sub.Phase != v1beta1.WorkflowStepRunning || !begun(sub) {
					r.skip(&s.Sub[j], sub)
					sub.Message = "its step-group timed out"
					continue
				}
				sub.Phase, sub.Reason, sub.Message, sub.LastExecuteTime = v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepReasonTimeout, "its step-group timed out", t
			}
			r.settleSuspend()
			return
		}
		if r.level(s.Sub, subs, !r.flow.SubStepByStep) {
			r.closeGroup(s, ss, subs)
		}
	default:
		r.runStep(s, ss)
	}
}

// skip marks a step, and a group's sub-steps, skipped.
func (r *Run) skip(s *Step, ss *v1beta1.StepStatus) {
	t := metav1.NewTime(r.now)
	ss.Phase, ss.FirstExecuteTime, ss.LastExecuteTime = v1beta1.WorkflowStepSkipped, t, t
	if s.Type == v1beta1.WorkflowStepTypeStepGroup {
		i := slices.IndexFunc(r.flow.Steps, func(g Step) bool { return g.Name == s.Name })
		for _, sub := range r.subs(i) {
			sub.Phase, sub.FirstExecuteTime, sub.LastExecuteTime = v1beta1.WorkflowStepSkipped, t, t
		}
	}
}

// closeGroup ends a step group whose sub-steps have all run: failed when
// one failed, else succeeded.
func (r *Run) closeGroup(s *Step, ss *v1beta1.StepStatus, subs []*v1beta1.StepStatus) {
	ss.Phase, ss.Message, ss.LastExecuteTime = v1beta1.WorkflowStepSucceeded, "", metav1.NewTime(r.now)
	for j, sub := range subs {
		if sub.Phase == v1beta1.WorkflowStepFailed {
			// The group's reason stays its own: status.<group>.timeout
			// says whether the group's timeout passed.
			ss.Phase = v1beta1.WorkflowStepFailed
			ss.Message = fmt.Sprintf("sub-step %q failed: %s", s.Sub[j].Name, sub.Message)
			break
		}
	}
}

// runStep runs a step the controller carries out: a delivering step (its
// objects are applied in this pass) or a depends-on-app step; Finish
// judges it.
func (r *Run) runStep(s *Step, ss *v1beta1.StepStatus) {
	t := metav1.NewTime(r.now)
	if s.Approve && (ss.Phase != v1beta1.WorkflowStepRunning || ss.Message == approvalMessage) {
		// auto: false: the step waits for a resume, as a suspend step
		// before it would. vela workflow resume marks it running; its
		// message still says it waits.
		if ss.FirstExecuteTime.IsZero() {
			ss.FirstExecuteTime = t
		}
		if !r.resumed(ss) {
			r.wait(s, ss, approvalMessage, fmt.Sprintf("suspended before step %q (auto: false)", s.Name))
			return
		}
		// Approved: it starts in this pass.
		ss.Phase, ss.Message = v1beta1.WorkflowStepPending, ""
	}
	if s.Custom && ss.Phase == v1beta1.WorkflowStepSuspending {
		// It suspended itself (a #Suspend action).
		if r.timedOut(s, ss, ss.FirstExecuteTime) || !r.customSuspended(s, ss) {
			return
		}
	}
	// Its timeout counts from when it started.
	if ss.Phase == v1beta1.WorkflowStepRunning && r.timedOut(s, ss, ss.LastExecuteTime) {
		return
	}
	if r.holding() && ss.Phase != v1beta1.WorkflowStepRunning {
		// Suspended by hand (vela or steward workflow suspend) before
		// this step started.
		if r.held == "" {
			r.held = s.Name
		}
		return
	}
	if ss.FirstExecuteTime.IsZero() {
		ss.FirstExecuteTime = t
	}
	if ss.Phase != v1beta1.WorkflowStepRunning {
		ss.LastExecuteTime = t
		if s.Timeout > 0 {
			r.wake(s.Timeout)
		}
	}
	ss.Phase = v1beta1.WorkflowStepRunning
	if s.Delivers() {
		r.Reached[s.Name] = true
	}
	r.running = append(r.running, s.Name)
}

// Finish records the outcome of the pass, once its objects were applied
// and their health evaluated. In a gated run, for each step it ran:
// judge.Done says whether the step is done (every object applied and
// every component it delivers healthy, or the Application it waits for
// running) and, when not, what it waits for. In a one-pass run, every
// step takes its phase from judge.Delivery. A refused run has nothing
// to judge.
func (r *Run) Finish(judge Judge, now time.Time) {
	switch r.kind {
	case kindOnePass:
		if r.onePass != nil {
			r.judgeOnePass(judge.Delivery(), now)
		}
		return
	case kindRefused:
		return
	}
	if len(r.running) == 0 {
		return
	}
	r.now = now
	progressed := false
	for _, name := range r.running {
		ss := r.status[name]
		if v, ok := r.verdicts[name]; ok {
			s, _ := r.Step(name)
			if r.settleCustom(&s, ss, v, now) {
				progressed = true
			}
			continue
		}
		done, msg := judge.Done(name)
		if !done {
			ss.Message = msg
			r.waited = true
			continue
		}
		ss.Phase, ss.Message, ss.LastExecuteTime = v1beta1.WorkflowStepSucceeded, "", metav1.NewTime(now)
		progressed = true
	}
	if !progressed {
		return
	}
	for i := range r.flow.Steps {
		g := &r.flow.Steps[i]
		if ss := &r.Status.Steps[i].StepStatus; g.Type == v1beta1.WorkflowStepTypeStepGroup && ss.Phase == v1beta1.WorkflowStepRunning && allRun(r.subs(i)) {
			r.closeGroup(g, ss, r.subs(i))
		}
	}
	if allRun(r.top()) {
		end(r.Status, now)
		return
	}
	// The next pass runs at once when it would start a step (a step
	// after them, or one that depends on them).
	r.Next = r.wouldStart()
}

// wouldStart reports whether a pass now would start a step that has not
// run: a dry run of the next pass.
func (r *Run) wouldStart() bool {
	next := AdvanceWith(r.flow, r.Status, r.Status.AppRevision, r.now, r.data)
	started := false
	next.walk(func(s *Step, ss *v1beta1.StepStatus) {
		if before := r.status[s.Name]; before != nil && before.Phase == v1beta1.WorkflowStepPending && ss.Phase != v1beta1.WorkflowStepPending {
			started = true
		}
	})
	// A step whose value just arrived starts once the next pass has
	// rendered its objects with it.
	return started || next.Status.Finished || next.renderWanted
}

// end finishes the run: succeeded, or, when a step failed, failed and
// terminated, as KubeVela ends it.
func end(st *v1beta1.WorkflowStatus, now time.Time) {
	st.Finished, st.Suspend, st.SuspendState = true, false, ""
	st.Phase, st.Message = v1beta1.WorkflowPhaseSucceeded, ""
	for _, ss := range st.Steps {
		if ss.Phase == v1beta1.WorkflowStepFailed {
			st.Phase, st.Terminated = v1beta1.WorkflowPhaseFailed, true
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
func restart(f Flow, prev *v1beta1.WorkflowStatus, revision string, now time.Time) (*v1beta1.WorkflowStatus, bool) {
	if prev != nil && prev.AppRevision == revision && sameSteps(f.Steps, prev.Steps) {
		st := prev.DeepCopy()
		st.Mode = f.Mode()
		return st, false
	}
	st := &v1beta1.WorkflowStatus{AppRevision: revision, Mode: f.Mode(), StartTime: metav1.NewTime(now)}
	for i, s := range f.Steps {
		ws := v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{
			ID: fmt.Sprintf("%s-%d", revision, i), Name: s.Name, Type: s.Type, Phase: v1beta1.WorkflowStepPending,
		}}
		for j, sub := range s.Sub {
			ws.SubStepsStatus = append(ws.SubStepsStatus, v1beta1.StepStatus{
				ID: fmt.Sprintf("%s-%d-%d", revision, i, j), Name: sub.Name, Type: sub.Type, Phase: v1beta1.WorkflowStepPending,
			})
		}
		st.Steps = append(st.Steps, ws)
	}
	return st, true
}

func sameSteps(steps []Step, status []v1beta1.WorkflowStepStatus) bool {
	if len(steps) != len(status) {
		return false
	}
	for i, s := range steps {
		if status[i].Name != s.Name || status[i].Type != s.Type || len(status[i].SubStepsStatus) != len(s.Sub) {
			return false
		}
		for j, sub := range s.Sub {
			if status[i].SubStepsStatus[j].Name != sub.Name || status[i].SubStepsStatus[j].Type != sub.Type {
				return false
			}
		}
	}
	return true
}
