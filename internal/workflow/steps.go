package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

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
		if s.Type == v1beta1.WorkflowStepTypeStepGroup {
			for _, sub := range s.SubSteps {
				if sub.Type == v1beta1.WorkflowStepTypeStepGroup {
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
			// Steps run by name: each needs its own.
			err = &UnsupportedError{Step: s.Name, What: "a second step of the same name (each step of a workflow Steward runs step by step needs its own)"}
		}
		seen[s.Name] = true
		// A custom step does work of its own (a config written, an
		// object applied, a webhook called): a workflow of custom steps
		// alone runs, as in KubeVela, and delivers no component.
		delivers = delivers || s.Delivers()
	})
	if err != nil {
		return Flow{}, err
	}
	if !delivers {
		return Flow{}, fmt.Errorf("the workflow needs a deploy, apply-component, apply-object or custom step (a WorkflowStepDefinition's): it would do nothing")
	}
	// Steps taking a value wait for the step exporting it.
	if err := checkData(&f); err != nil {
		return Flow{}, err
	}
	if err := checkInputConditions(f); err != nil {
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
	case v1beta1.WorkflowStepTypeDeploy:
		step.Approve = NotAuto(s.Properties)
	case v1beta1.WorkflowStepTypeApplyComponent, v1beta1.WorkflowStepTypeApplyObject, v1beta1.WorkflowStepTypeStepGroup:
	case v1beta1.WorkflowStepTypeSuspend:
		var props struct {
			Duration string `json:"duration,omitempty"`
			Message  string `json:"message,omitempty"`
		}
		if err := decodeProperties(s, step.Name, &props); err != nil {
			return Step{}, err
		}
		d, err := suspendDuration(step.Name, props.Duration)
		if err != nil {
			return Step{}, err
		}
		step.Duration = d
		step.Message = props.Message
	case v1beta1.WorkflowStepTypeDependsOnApp:
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
		if Native(s.Type) {
			return Step{}, fmt.Errorf("step %q: type %q is not run by Steward", step.Name, s.Type)
		}
		step.Custom = true
		if s.Properties != nil && len(s.Properties.Raw) > 0 {
			step.Properties = slices.Clone(s.Properties.Raw)
		}
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
