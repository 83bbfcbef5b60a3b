// Package workflow runs an Application's workflow when it has more than
// deploy steps to run in one pass: steps one after another or as a DAG
// (dependsOn), step groups whose sub-steps run in parallel or one by one,
// suspend steps that wait until the workflow is resumed (or for their
// duration), deploy steps with auto: false, steps that wait for another
// Application (depends-on-app), and the steps' if conditions and timeouts.
// It is pure: given the steps, the status of the run so far and the time,
// Advance says which steps a pass runs, and Finish records what the pass
// achieved, in KubeVela's status.workflow shape.
//
// Only workflows with a gate (Gated) are run here; any other workflow is
// delivered in one pass, as before.
package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
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
	// TypeStepGroup runs its sub-steps, in parallel unless the workflow's
	// mode says subSteps: StepByStep.
	TypeStepGroup = "step-group"
	// TypeDependsOnApp waits until another Application is running.
	TypeDependsOnApp = "depends-on-app"
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

// Modes of a workflow's steps and of its step groups' sub-steps, as
// KubeVela names them in spec.workflow.mode.
const (
	ModeStepByStepName = "StepByStep"
	ModeDAGName        = "DAG"
)

// ModeStepByStep is status.workflow.mode of the default run: steps one by
// one, sub-steps in parallel.
const ModeStepByStep = ModeStepByStepName + "-" + ModeDAGName

// SuspendStateManual marks, in status.workflow.suspendState, a run
// suspended by hand (steward workflow suspend): only a resume ends it,
// never a suspend step's duration.
const SuspendStateManual = "manual"

// Flow is a gated workflow as it is recorded with a version: its steps and
// how they run.
type Flow struct {
	// DAG runs the top-level steps as soon as the steps they depend on
	// have run (mode steps: DAG); otherwise one after another.
	DAG bool `json:"dag,omitempty"`
	// SubStepByStep runs step groups' sub-steps one after another (mode
	// subSteps: StepByStep); otherwise in parallel, by their dependsOn.
	SubStepByStep bool   `json:"subStepByStep,omitempty"`
	Steps         []Step `json:"steps"`
	// ev evaluates the steps' if conditions (Use).
	ev cueeval.Evaluator
}

// Use makes the flow evaluate its steps' conditions with ev: the
// controller's bounded evaluator pool. A run of a flow without one fails
// a step that has a condition.
func (f *Flow) Use(ev cueeval.Evaluator) { f.ev = ev }

// CheckConditions checks that every condition evaluates to a boolean over
// the steps' status, here, before any step has run: a typo in a step name
// is refused now, not found when the step is reached. A condition stopped
// by the evaluation budget is returned as the evaluator's
// *cueeval.BudgetError.
func (f Flow) CheckConditions() error {
	pending := &v1beta1.WorkflowStatus{}
	var conds []*Step
	f.each(func(s *Step, _ *Step) {
		pending.Steps = append(pending.Steps, v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{Name: s.Name, Phase: StepPending}})
		if s.If != "" && s.If != IfAlways {
			conds = append(conds, s)
		}
	})
	if len(conds) == 0 {
		return nil
	}
	exprs := make([]string, len(conds))
	for i, s := range conds {
		exprs[i] = s.If
	}
	results, err := f.conditions(exprs, pending)
	if err != nil {
		names := make([]string, len(conds))
		for i, s := range conds {
			names[i] = strconv.Quote(s.Name)
		}
		return fmt.Errorf("evaluating the if of steps %s: %w", strings.Join(names, ", "), err)
	}
	for i, res := range results {
		if res.Err != "" {
			return conds[i].conditionErr(res.Err)
		}
	}
	return nil
}

// conditions evaluates if expressions over the steps' status.
func (f Flow) conditions(exprs []string, st *v1beta1.WorkflowStatus) ([]cueeval.ExprResult, error) {
	if f.ev == nil {
		return nil, errors.New("the workflow's conditions have no evaluator")
	}
	res, err := f.ev.Evaluate(&cueeval.Request{Bools: &cueeval.Expressions{Exprs: exprs, Scope: ifScope(st), What: "workflow step conditions"}})
	if err != nil {
		return nil, err
	}
	if len(res.Results) != len(exprs) {
		return nil, fmt.Errorf("evaluating workflow step conditions: %d results for %d conditions", len(res.Results), len(exprs))
	}
	return res.Results, nil
}

// Mode is the run's status.workflow.mode, like "StepByStep-DAG".
func (f Flow) Mode() string {
	steps, subs := ModeStepByStepName, ModeDAGName
	if f.DAG {
		steps = ModeDAGName
	}
	if f.SubStepByStep {
		subs = ModeStepByStepName
	}
	return steps + "-" + subs
}

// Step is one step of a gated workflow.
type Step struct {
	// Name is the step's name; delivering steps name what their objects
	// are recorded under.
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
	// expression over status.<step>; empty runs the step when no step it
	// waits for failed.
	If string `json:"if,omitempty"`
	// Timeout fails the step when it has not succeeded that long after it
	// started; zero waits for ever.
	Timeout time.Duration `json:"timeout,omitempty"`
	// DependsOn names steps of the same level that must have run first.
	DependsOn []string `json:"dependsOn,omitempty"`
	// App, for a depends-on-app step, is the Application it waits for,
	// "namespace/name".
	App string `json:"app,omitempty"`
	// Sub are a step group's sub-steps.
	Sub []Step `json:"subSteps,omitempty"`
	// Inputs fill values other steps exported into the step's
	// properties; its objects are rendered once they are all exported.
	Inputs []Input `json:"inputs,omitempty"`
	// Outputs are the values the step exports once it succeeded.
	Outputs []Output `json:"outputs,omitempty"`
}

// Encode returns a flow as it is recorded on a version's tracker.
func Encode(f Flow) string {
	raw, _ := json.Marshal(f)
	return string(raw)
}

// Decode reads the flow recorded on a version's tracker; a list of steps
// (recorded before modes and step groups were run) runs step by step.
func Decode(recorded string) (Flow, error) {
	var f Flow
	var err error
	if strings.HasPrefix(strings.TrimSpace(recorded), "[") {
		err = json.Unmarshal([]byte(recorded), &f.Steps)
	} else {
		err = json.Unmarshal([]byte(recorded), &f)
	}
	if err != nil {
		return Flow{}, fmt.Errorf("the workflow steps recorded with the version do not parse: %w", err)
	}
	return f, nil
}

// Gated reports whether a workflow is run step by step here: it has more
// than one deploy step (each waits for the one before it to be healthy,
// as in KubeVela), a suspend step, a deploy step with auto: false, a step
// with if, timeout or dependsOn, an apply-component, apply-object,
// depends-on-app or step-group step, or a mode. Only such a workflow
// records which step delivers each object; a workflow of one deploy step
// is delivered in one pass, as no workflow is.
func Gated(wf *v1beta1.Workflow) bool {
	if wf == nil {
		return false
	}
	deploys := 0
	for _, s := range wf.Steps {
		if s.Type == TypeDeploy {
			deploys++
		}
	}
	if deploys > 1 {
		return true
	}
	if wf.Mode != nil && len(wf.Mode.Raw) > 0 && string(wf.Mode.Raw) != "null" && string(wf.Mode.Raw) != "{}" {
		return true
	}
	gate := func(s v1beta1.WorkflowStepBase) bool {
		switch s.Type {
		case TypeSuspend, TypeApplyComponent, TypeApplyObject, TypeStepGroup, TypeDependsOnApp:
			// apply-component and apply-object steps run one by one,
			// each waiting for what it applies, as in KubeVela.
			return true
		}
		return s.Type == TypeDeploy && NotAuto(s.Properties) || s.If != "" || s.Timeout != "" || len(s.DependsOn) > 0
	}
	for _, s := range wf.Steps {
		if gate(s.WorkflowStepBase) {
			return true
		}
		for _, sub := range s.SubSteps {
			if gate(sub) {
				return true
			}
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

// StepName is the name a step is recorded under: its own, or
// "<type>-<n>", n counting steps of the type from 1 over the whole
// workflow (sub-steps where their group is), as placement names them.
func StepName(name, typ string, n int) string {
	if name != "" {
		return name
	}
	return fmt.Sprintf("%s-%d", typ, n)
}

// DeployStepName is the name a deploy step is recorded under.
func DeployStepName(name string, n int) string { return StepName(name, TypeDeploy, n) }

// ApplyObjectStepName is the name an apply-object step is recorded under.
func ApplyObjectStepName(name string, n int) string { return StepName(name, TypeApplyObject, n) }

// ApplyComponentStepName is the name an apply-component step is recorded
// under.
func ApplyComponentStepName(name string, n int) string {
	return StepName(name, TypeApplyComponent, n)
}

// Namer names steps in workflow order, as Steps and placement do.
type Namer map[string]int

// Name returns the recorded name of the next step of its type.
func (n Namer) Name(s v1beta1.WorkflowStepBase) string {
	n[s.Type]++
	return StepName(s.Name, s.Type, n[s.Type])
}

// Mode reads a workflow's mode: whether its steps run as a DAG, and
// whether step groups run their sub-steps one by one.
func Mode(wf *v1beta1.Workflow) (dag, subStepByStep bool, err error) {
	if wf == nil || wf.Mode == nil || len(wf.Mode.Raw) == 0 {
		return false, false, nil
	}
	var mode struct {
		Steps    string `json:"steps"`
		SubSteps string `json:"subSteps"`
	}
	if err := json.Unmarshal(wf.Mode.Raw, &mode); err != nil {
		return false, false, fmt.Errorf("mode %s: %w", wf.Mode.Raw, err)
	}
	for _, m := range []string{mode.Steps, mode.SubSteps} {
		if m != "" && m != ModeStepByStepName && m != ModeDAGName {
			return false, false, fmt.Errorf("mode %q: want StepByStep or DAG", m)
		}
	}
	return mode.Steps == ModeDAGName, mode.SubSteps == ModeStepByStepName, nil
}

// Steps returns the flow of a gated workflow, checked: step types it
// runs, properties it reads (a suspend step's duration, a depends-on-app
// step's name), names used once, dependsOn naming steps of the same level
// without a cycle, timeouts that parse and conditions that evaluate.
func Steps(wf *v1beta1.Workflow) (Flow, error) {
	var f Flow
	var err error
	if f.DAG, f.SubStepByStep, err = Mode(wf); err != nil {
		return Flow{}, err
	}
	names := Namer{}
	delivers := false
	for _, s := range wf.Steps {
		step, err := parseStep(s.WorkflowStepBase, names)
		if err != nil {
			return Flow{}, err
		}
		if s.Type == TypeStepGroup {
			for _, sub := range s.SubSteps {
				if sub.Type == TypeStepGroup {
					return Flow{}, fmt.Errorf("step %q: a step-group inside step-group %q (KubeVela runs one level of sub-steps)", names.peek(sub), step.Name)
				}
				ss, err := parseStep(sub, names)
				if err != nil {
					return Flow{}, err
				}
				step.Sub = append(step.Sub, ss)
			}
			if len(step.Sub) == 0 {
				return Flow{}, fmt.Errorf("step-group %q has no subSteps", step.Name)
			}
			if err := checkDepends(step.Sub, !f.SubStepByStep); err != nil {
				return Flow{}, err
			}
		} else if len(s.SubSteps) > 0 {
			return Flow{}, fmt.Errorf("step %q: subSteps outside a step-group", step.Name)
		}
		f.Steps = append(f.Steps, step)
	}
	seen := map[string]bool{}
	err = nil
	f.each(func(s *Step, _ *Step) {
		if seen[s.Name] && err == nil {
			err = fmt.Errorf("step name %q is used twice", s.Name)
		}
		seen[s.Name] = true
		delivers = delivers || s.Delivers()
	})
	if err != nil {
		return Flow{}, err
	}
	if !delivers {
		return Flow{}, fmt.Errorf("the workflow needs a deploy, apply-component or apply-object step: it would deliver nothing")
	}
	// Steps taking a value wait for the step exporting it.
	if err := checkData(&f); err != nil {
		return Flow{}, err
	}
	for _, g := range f.Steps {
		if err := checkDepends(g.Sub, !f.SubStepByStep); err != nil {
			return Flow{}, err
		}
	}
	if err := checkDepends(f.Steps, f.DAG); err != nil {
		return Flow{}, err
	}
	return f, nil
}

// peek is the name the next step of its type would get, for messages.
func (n Namer) peek(s v1beta1.WorkflowStepBase) string {
	return StepName(s.Name, s.Type, n[s.Type]+1)
}

// parseStep reads one step's fields and the properties the gate reads.
func parseStep(s v1beta1.WorkflowStepBase, names Namer) (Step, error) {
	step := Step{Name: names.Name(s), Type: s.Type, If: s.If, DependsOn: slices.Clone(s.DependsOn)}
	if len(s.If) > MaxExpression {
		return Step{}, fmt.Errorf("step %q: if is %d bytes, more than the %d an expression may have", step.Name, len(s.If), MaxExpression)
	}
	parseData(s, &step)
	switch s.Type {
	case TypeDeploy:
		step.Approve = NotAuto(s.Properties)
	case TypeApplyComponent, TypeApplyObject, TypeStepGroup:
	case TypeSuspend:
		var props struct {
			Duration string `json:"duration,omitempty"`
			Message  string `json:"message,omitempty"`
		}
		if err := decodeProperties(s, step.Name, &props); err != nil {
			return Step{}, err
		}
		if props.Duration != "" {
			d, err := time.ParseDuration(props.Duration)
			if err != nil || d <= 0 {
				return Step{}, fmt.Errorf("suspend step %q: duration %q: want a positive duration like 30s or 2m15s", step.Name, props.Duration)
			}
			step.Duration = d
		}
		step.Message = props.Message
	case TypeDependsOnApp:
		var props struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace,omitempty"`
		}
		if err := decodeProperties(s, step.Name, &props); err != nil {
			return Step{}, err
		}
		if props.Name == "" {
			return Step{}, fmt.Errorf("depends-on-app step %q: properties.name, the Application to wait for, is required", step.Name)
		}
		// A namespace left out is the Application's own, which the
		// controller fills in.
		step.App = props.Namespace + "/" + props.Name
	default:
		return Step{}, fmt.Errorf("step %q: type %q is not run by Steward", step.Name, s.Type)
	}
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		if err != nil || d <= 0 {
			return Step{}, fmt.Errorf("step %q: timeout %q: want a positive duration like 30s or 5m", step.Name, s.Timeout)
		}
		step.Timeout = d
	}
	return step, nil
}

// decodeProperties reads a step's properties into props; none leaves it
// as it is.
func decodeProperties(s v1beta1.WorkflowStepBase, name string, props any) error {
	if s.Properties == nil || len(s.Properties.Raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(s.Properties.Raw, props); err != nil {
		return fmt.Errorf("%s step %q: properties: %w", s.Type, name, err)
	}
	return nil
}

// checkDepends refuses a dependsOn that names no step of the same level,
// the step itself, a later step when the level runs one by one (it would
// wait for ever), or a cycle.
func checkDepends(steps []Step, dag bool) error {
	index := map[string]int{}
	for i, s := range steps {
		index[s.Name] = i
	}
	for i, s := range steps {
		for _, d := range s.DependsOn {
			j, ok := index[d]
			switch {
			case !ok:
				return fmt.Errorf("step %q: dependsOn %q names no step beside it (dependsOn names steps of the same level)", s.Name, d)
			case j == i:
				return fmt.Errorf("step %q: dependsOn names itself", s.Name)
			case !dag && j > i:
				return fmt.Errorf("step %q: dependsOn %q names a later step, which runs after it in StepByStep mode (use mode DAG)", s.Name, d)
			}
		}
	}
	if _, ok := topoOrder(steps); !ok {
		return fmt.Errorf("steps %s: their dependsOn form a cycle", names(steps))
	}
	return nil
}

func names(steps []Step) string {
	var out []string
	for _, s := range steps {
		if len(s.DependsOn) > 0 {
			out = append(out, fmt.Sprintf("%q", s.Name))
		}
	}
	return strings.Join(out, ", ")
}

// topoOrder orders steps so that each comes after the steps it depends
// on, keeping the listed order otherwise; false on a cycle.
func topoOrder(steps []Step) ([]int, bool) {
	index := map[string]int{}
	for i, s := range steps {
		index[s.Name] = i
	}
	done := make([]bool, len(steps))
	order := make([]int, 0, len(steps))
	for len(order) < len(steps) {
		progress := false
		for i, s := range steps {
			if done[i] {
				continue
			}
			ready := true
			for _, d := range s.DependsOn {
				if j, ok := index[d]; ok && !done[j] {
					ready = false
				}
			}
			if ready {
				done[i], progress = true, true
				order = append(order, i)
			}
		}
		if !progress {
			return nil, false
		}
	}
	return order, true
}

// Delivering returns the names of the steps that deliver objects (sub-steps
// included): tracker entries name one of them.
func (f Flow) Delivering() map[string]bool {
	out := map[string]bool{}
	f.each(func(s, _ *Step) {
		if s.Delivers() {
			out[s.Name] = true
		}
	})
	return out
}

// All yields every step, a step group before its sub-steps.
func (f Flow) All() iter.Seq[Step] {
	return func(yield func(Step) bool) {
		for _, s := range f.Steps {
			if !yield(s) {
				return
			}
			for _, sub := range s.Sub {
				if !yield(sub) {
					return
				}
			}
		}
	}
}

// each calls fn for every step, a step group before its sub-steps (with
// the group as parent).
func (f Flow) each(fn func(s, parent *Step)) {
	for i := range f.Steps {
		fn(&f.Steps[i], nil)
		for j := range f.Steps[i].Sub {
			fn(&f.Steps[i].Sub[j], &f.Steps[i])
		}
	}
}

// runs evaluates the step's condition over the run's status: with no if,
// the step runs when no step it waits for failed (failed says whether one
// did), as in KubeVela.
func (s Step) runs(f Flow, st *v1beta1.WorkflowStatus, failed bool) (bool, error) {
	switch s.If {
	case "":
		return !failed, nil
	case IfAlways:
		return true, nil
	}
	res, err := f.conditions([]string{s.If}, st)
	if err != nil {
		return false, fmt.Errorf("step %q: if %q: %w", s.Name, s.If, err)
	}
	if res[0].Err != "" {
		return false, s.conditionErr(res[0].Err)
	}
	return res[0].Bool, nil
}

// conditionErr says the step's condition does not evaluate.
func (s Step) conditionErr(msg string) error {
	return fmt.Errorf("step %q: if %q: %s (Steward reads always and CUE over status.<step>.phase, succeeded, failed, skipped, timeout, reason and message; inputs are not read in if)", s.Name, s.If, msg)
}

// ifScope is what an if expression reads, as JSON: status.<step> holds
// each step's phase, reason and message and the booleans succeeded,
// failed, skipped and timeout (sub-steps included).
func ifScope(st *v1beta1.WorkflowStatus) json.RawMessage {
	fields := map[string]any{}
	add := func(ss v1beta1.StepStatus) {
		fields[ss.Name] = map[string]any{
			"phase": ss.Phase, "reason": ss.Reason, "message": ss.Message,
			"succeeded": ss.Phase == StepSucceeded, "failed": ss.Phase == StepFailed,
			"skipped": ss.Phase == StepSkipped, "timeout": ss.Phase == StepFailed && ss.Reason == ReasonTimeout,
		}
	}
	for _, ss := range st.Steps {
		add(ss.StepStatus)
		for _, sub := range ss.SubStepsStatus {
			add(sub)
		}
	}
	raw, _ := json.Marshal(map[string]any{"status": fields})
	return raw
}

// Run is one pass over a gated workflow.
type Run struct {
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
	st.Phase, st.Message = PhaseExecuting, ""
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
			r.byHand = r.byHand && ss.Phase != StepSuspending
		})
	}
	top := r.top()
	if st.Terminated && !allRun(top) {
		st.Phase, st.Message = PhaseTerminated, "the workflow was terminated; restart it to run the remaining steps"
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
	if st.Suspend && st.Phase != PhaseSuspending {
		st.Phase = PhaseSuspending
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
		if ss.Phase == StepSuspending && (r.suspended || r.waiting[s.Name]) {
			r.Status.Suspend = true
		}
	})
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
	case StepSucceeded:
		return true
	case StepRunning:
		// vela workflow resume marks an approval step running before it
		// is approved.
		return ss.Message != approvalMessage
	case StepFailed:
		// A condition that did not evaluate failed the step before it
		// ran.
		return ss.Reason != ReasonCondition
	}
	return false
}

func ran(phase string) bool {
	return phase == StepSucceeded || phase == StepFailed || phase == StepSkipped
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
	return ss.Phase == StepFailed || ss.Phase == StepSkipped && s.If == ""
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
	if ss.Phase == StepPending {
		if r.holding() && s.Type != TypeSuspend && !s.Approve {
			// A suspension keeps steps from starting; those running go
			// on.
			if r.held == "" {
				r.held = s.Name
			}
			return
		}
		// A step's condition is read when it is reached.
		run, err := s.runs(r.flow, r.Status, failed)
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
			ss.Phase, ss.Reason, ss.Message, ss.FirstExecuteTime, ss.LastExecuteTime = StepFailed, ReasonCondition, err.Error(), t, t
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
	case TypeSuspend:
		r.suspend(s, ss)
	case TypeStepGroup:
		if ss.FirstExecuteTime.IsZero() {
			ss.FirstExecuteTime, ss.LastExecuteTime = t, t
		}
		ss.Phase = StepRunning
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
				if sub.Phase != StepRunning || !begun(sub) {
					r.skip(&s.Sub[j], sub)
					sub.Message = "its step-group timed out"
					continue
				}
				sub.Phase, sub.Reason, sub.Message, sub.LastExecuteTime = StepFailed, ReasonTimeout, "its step-group timed out", t
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

// inputsReady reports whether a step taking inputs may start: every
// value it takes was exported and its objects were rendered with them.
// A value never exported (the step exporting it failed or was skipped,
// and this one runs anyway: if: always) fails the step.
func (r *Run) inputsReady(s *Step, ss *v1beta1.StepStatus) bool {
	t := metav1.NewTime(r.now)
	for _, in := range s.Inputs {
		if _, ok := r.data.Values[in.From]; ok {
			continue
		}
		producer := r.flow.producer(in.From)
		switch ps := r.status[producer]; {
		case ps != nil && ps.Phase == StepSkipped:
			// Its value was never to be exported: the step taking it is
			// skipped with it.
			r.skip(s, ss)
			ss.Message = fmt.Sprintf("input from %q: step %q, which exports it, was skipped", in.From, producer)
			return false
		case ps != nil && ps.Phase == StepSucceeded:
			// Exported, and not read back yet (a cache behind the write):
			// the next pass reads it.
			ss.Message = fmt.Sprintf("waiting for the value of %q, which step %q exported", in.From, producer)
			r.wake(time.Second)
			return r.waitTimeout(s, ss)
		}
		ss.Phase, ss.Reason, ss.FirstExecuteTime, ss.LastExecuteTime = StepFailed, ReasonInputMissing, t, t
		ss.Message = fmt.Sprintf("input from %q: step %q, which exports it, did not succeed", in.From, producer)
		return false
	}
	if !r.data.Rendered[s.Name] {
		ss.Message = renderMessage
		if r.data.Blocked != "" {
			ss.Message = r.data.Blocked
		} else {
			r.renderWanted = true
		}
		return r.waitTimeout(s, ss)
	}
	if ss.Message == renderMessage || ss.Message == r.data.Blocked {
		ss.Message = ""
	}
	return true
}

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
	ss.Phase, ss.Reason, ss.LastExecuteTime = StepFailed, ReasonTimeout, metav1.NewTime(r.now)
	ss.Message = fmt.Sprintf("the step did not start within its timeout (%s): %s", s.Timeout, ss.Message)
	return false
}

// renderMessage is the message of a step waiting for its objects to be
// rendered with the values it takes.
const renderMessage = "waiting for its objects to be rendered with its inputs"

// Export records values a step exported in this pass: the steps taking
// them may start.
func (r *Run) Export(values map[string]json.RawMessage) {
	for k, v := range values {
		r.data.Values[k] = v
	}
}

// Values returns the values the run's steps exported so far.
func (r *Run) Values() map[string]json.RawMessage {
	if r == nil {
		return nil
	}
	return r.data.Values
}

// skip marks a step, and a group's sub-steps, skipped.
func (r *Run) skip(s *Step, ss *v1beta1.StepStatus) {
	t := metav1.NewTime(r.now)
	ss.Phase, ss.FirstExecuteTime, ss.LastExecuteTime = StepSkipped, t, t
	if s.Type == TypeStepGroup {
		i := slices.IndexFunc(r.flow.Steps, func(g Step) bool { return g.Name == s.Name })
		for _, sub := range r.subs(i) {
			sub.Phase, sub.FirstExecuteTime, sub.LastExecuteTime = StepSkipped, t, t
		}
	}
}

// closeGroup ends a step group whose sub-steps have all run: failed when
// one failed, else succeeded.
func (r *Run) closeGroup(s *Step, ss *v1beta1.StepStatus, subs []*v1beta1.StepStatus) {
	ss.Phase, ss.Message, ss.LastExecuteTime = StepSucceeded, "", metav1.NewTime(r.now)
	for j, sub := range subs {
		if sub.Phase == StepFailed {
			// The group's reason stays its own: status.<group>.timeout
			// says whether the group's timeout passed.
			ss.Phase = StepFailed
			ss.Message = fmt.Sprintf("sub-step %q failed: %s", s.Sub[j].Name, sub.Message)
			break
		}
	}
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
	resumed := !r.suspended && (ss.Phase == StepSuspending || ss.Phase == StepRunning)
	if s.Duration > 0 && !resumed && !r.manual && (s.Timeout == 0 || s.Duration < s.Timeout) {
		// Only a resume ends a suspension by hand.
		if left := ss.FirstExecuteTime.Add(s.Duration).Sub(r.now); left > 0 {
			r.wake(left)
		} else {
			resumed = true
		}
	}
	if resumed {
		ss.Phase, ss.Message, ss.LastExecuteTime = StepSucceeded, "", t
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
	if ss.Phase != StepSuspending {
		ss.LastExecuteTime = t
	}
	ss.Phase = StepSuspending
	ss.Message = s.Message
	if st.Phase != PhaseSuspending {
		st.Message = fmt.Sprintf("suspended at step %q", s.Name)
		if r.manual {
			st.Message += " (suspended by hand: only a resume goes on)"
		}
	}
	st.Suspend, st.Phase = true, PhaseSuspending
}

// runStep runs a step the controller carries out: a delivering step (its
// objects are applied in this pass) or a depends-on-app step; Finish
// judges it.
func (r *Run) runStep(s *Step, ss *v1beta1.StepStatus) {
	st := r.Status
	t := metav1.NewTime(r.now)
	if s.Approve && (ss.Phase != StepRunning || ss.Message == approvalMessage) {
		// auto: false: the step waits for a resume, as a suspend step
		// before it would. vela workflow resume marks it running; its
		// message still says it waits.
		if ss.FirstExecuteTime.IsZero() {
			ss.FirstExecuteTime = t
		}
		if resumed := !r.suspended && (ss.Phase == StepSuspending || ss.Phase == StepRunning); !resumed {
			if ss.Phase != StepSuspending {
				ss.LastExecuteTime = t
			}
			ss.Phase, ss.Message = StepSuspending, approvalMessage
			r.waiting[s.Name] = true
			if st.Phase != PhaseSuspending {
				st.Message = fmt.Sprintf("suspended before step %q (auto: false)", s.Name)
			}
			st.Suspend, st.Phase = true, PhaseSuspending
			return
		}
		// Approved: it starts in this pass.
		ss.Phase, ss.Message = StepPending, ""
	}
	// Its timeout counts from when it started.
	if ss.Phase == StepRunning && r.timedOut(s, ss, ss.LastExecuteTime) {
		return
	}
	if r.holding() && ss.Phase != StepRunning {
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
	if ss.Phase != StepRunning {
		ss.LastExecuteTime = t
		if s.Timeout > 0 {
			r.wake(s.Timeout)
		}
	}
	ss.Phase = StepRunning
	if s.Delivers() {
		r.Reached[s.Name] = true
	}
	r.running = append(r.running, s.Name)
}

// approvalMessage is the message of a deploy step with auto: false while
// it waits for its approval.
const approvalMessage = "waiting for approval (auto: false)"

// timedOut fails the step when its timeout passed since started, and
// otherwise asks for a pass when it will. A delivering step that times
// out was delivering: what it applied stays kept.
func (r *Run) timedOut(s *Step, ss *v1beta1.StepStatus, started metav1.Time) bool {
	if !r.expired(s, started) {
		return false
	}
	ss.Phase, ss.Reason, ss.LastExecuteTime = StepFailed, ReasonTimeout, metav1.NewTime(r.now)
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

// Delivers reports whether the step applies objects: a deploy, an
// apply-component or an apply-object step. Its objects are recorded under
// its name.
func (s Step) Delivers() bool {
	return s.Type == TypeDeploy || s.Type == TypeApplyComponent || s.Type == TypeApplyObject
}

// wake asks for a pass within d.
// conditionRetry is how soon a step whose condition could not be
// evaluated within the budget is tried again.
const conditionRetry = 30 * time.Second

func (r *Run) wake(d time.Duration) {
	if r.Requeue == 0 || d < r.Requeue {
		r.Requeue = d
	}
}

// Dispatching names the delivering steps this pass runs for the first
// time or again until they succeed, in the order reached: their objects
// are applied as a dispatch.
func (r *Run) Dispatching() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, name := range r.running {
		if r.delivers[name] {
			out = append(out, name)
		}
	}
	return out
}

// Waiting reports whether a step the pass ran is still waiting (for its
// components' health, or for another Application).
func (r *Run) Waiting() bool {
	return r != nil && r.waited
}

// Dispatches reports whether the pass runs a delivering step.
func (r *Run) Dispatches(step string) bool {
	return r != nil && step != "" && r.delivers[step] && slices.Contains(r.running, step)
}

// Step returns the recorded step of a name.
func (r *Run) Step(name string) (Step, bool) {
	var out Step
	found := false
	r.flow.each(func(s, _ *Step) {
		if s.Name == name {
			out, found = *s, true
		}
	})
	return out, found
}

// Finish records the outcome of the pass for each step it ran: judge
// says whether the step is done (every object applied and every component
// it delivers healthy, or the Application it waits for running) and, when
// not, what it waits for.
func (r *Run) Finish(judge func(step string) (done bool, message string), now time.Time) {
	if len(r.running) == 0 {
		return
	}
	r.now = now
	progressed := false
	for _, name := range r.running {
		ss := r.status[name]
		done, msg := judge(name)
		if !done {
			ss.Message = msg
			r.waited = true
			continue
		}
		ss.Phase, ss.Message, ss.LastExecuteTime = StepSucceeded, "", metav1.NewTime(now)
		progressed = true
	}
	if !progressed {
		return
	}
	for i := range r.flow.Steps {
		g := &r.flow.Steps[i]
		if ss := &r.Status.Steps[i].StepStatus; g.Type == TypeStepGroup && ss.Phase == StepRunning && allRun(r.subs(i)) {
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
		if before := r.status[s.Name]; before != nil && before.Phase == StepPending && ss.Phase != StepPending {
			started = true
		}
	})
	// A step whose value just arrived starts once the next pass has
	// rendered its objects with it.
	return started || next.Status.Finished || next.renderWanted
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
func restart(f Flow, prev *v1beta1.WorkflowStatus, revision string, now time.Time) (*v1beta1.WorkflowStatus, bool) {
	if prev != nil && prev.AppRevision == revision && sameSteps(f.Steps, prev.Steps) {
		st := prev.DeepCopy()
		st.Mode = f.Mode()
		return st, false
	}
	st := &v1beta1.WorkflowStatus{AppRevision: revision, Mode: f.Mode(), StartTime: metav1.NewTime(now)}
	for i, s := range f.Steps {
		ws := v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{
			ID: fmt.Sprintf("%s-%d", revision, i), Name: s.Name, Type: s.Type, Phase: StepPending,
		}}
		for j, sub := range s.Sub {
			ws.SubStepsStatus = append(ws.SubStepsStatus, v1beta1.StepStatus{
				ID: fmt.Sprintf("%s-%d-%d", revision, i, j), Name: sub.Name, Type: sub.Type, Phase: StepPending,
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
