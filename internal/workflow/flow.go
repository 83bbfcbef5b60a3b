package workflow

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
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
	// Custom is a step run from a WorkflowStepDefinition's template
	// (its Type), with Properties as its parameter.
	Custom     bool            `json:"custom,omitempty"`
	Properties json.RawMessage `json:"properties,omitempty"`
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
		if s.Type == v1beta1.WorkflowStepTypeDeploy {
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
		case v1beta1.WorkflowStepTypeSuspend, v1beta1.WorkflowStepTypeApplyComponent, v1beta1.WorkflowStepTypeApplyObject, v1beta1.WorkflowStepTypeStepGroup, v1beta1.WorkflowStepTypeDependsOnApp:
			// apply-component and apply-object steps run one by one,
			// each waiting for what it applies, as in KubeVela.
			return true
		}
		return s.Type == v1beta1.WorkflowStepTypeDeploy && NotAuto(s.Properties) || s.If != "" || s.Timeout != "" || len(s.DependsOn) > 0 || !Native(s.Type)
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
func DeployStepName(name string, n int) string {
	return StepName(name, v1beta1.WorkflowStepTypeDeploy, n)
}

// ApplyObjectStepName is the name an apply-object step is recorded under.
func ApplyObjectStepName(name string, n int) string {
	return StepName(name, v1beta1.WorkflowStepTypeApplyObject, n)
}

// ApplyComponentStepName is the name an apply-component step is recorded
// under.
func ApplyComponentStepName(name string, n int) string {
	return StepName(name, v1beta1.WorkflowStepTypeApplyComponent, n)
}

// Namer names steps in workflow order, as Steps and placement do.
type Namer map[string]int

// Name returns the recorded name of the next step of its type.
func (n Namer) Name(s v1beta1.WorkflowStepBase) string {
	n[s.Type]++
	return StepName(s.Name, s.Type, n[s.Type])
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

// Delivers reports whether the step applies objects: a deploy, an
// apply-component or an apply-object step. Its objects are recorded under
// its name.
func (s Step) Delivers() bool { return s.Custom || Delivers(s.Type) }

// Delivers reports whether steps of a type apply objects: deploy,
// apply-component and apply-object steps.
func Delivers(stepType string) bool {
	return stepType == v1beta1.WorkflowStepTypeDeploy || stepType == v1beta1.WorkflowStepTypeApplyComponent || stepType == v1beta1.WorkflowStepTypeApplyObject
}
