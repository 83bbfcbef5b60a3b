package placement

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/workflow"
)

// UnsupportedError is a workflow instruction Steward does not carry out:
// a step type other than deploy (or a step group of deploy steps), or a
// field that changes when or whether a step runs. Carrying out the rest
// would skip it silently (a suspend step before a production deploy would
// deliver to production at once), so the whole version is refused.
type UnsupportedError struct {
	// Step names the step ("" for the workflow itself).
	Step string
	// What names the instruction, like `step type "suspend"`.
	What string
}

func (e *UnsupportedError) Error() string {
	where := "the workflow"
	if e.Step != "" {
		where = fmt.Sprintf("workflow step %q", e.Step)
	}
	return fmt.Sprintf("%s: %s is not supported by Steward, which runs deploy, apply-component, apply-object and suspend steps; nothing of this version is applied. Remove it, or see docs/workflow.md", where, e.What)
}

// CheckWorkflow refuses a workflow with an instruction Steward would not
// carry out; see UnsupportedError.
func CheckWorkflow(wf *v1beta1.Workflow) error {
	if wf == nil {
		return nil
	}
	if wf.Ref != "" {
		return &UnsupportedError{What: fmt.Sprintf("ref %q (WorkflowTemplate)", wf.Ref)}
	}
	if err := checkMode(wf); err != nil {
		return err
	}
	gated, grouped, deploys := workflow.Gated(wf), false, false
	for _, s := range wf.Steps {
		grouped = grouped || s.Type == "step-group"
		deploys = deploys || s.Type == StepDeploy || s.Type == StepApplyComponent || s.Type == StepApplyObject
	}
	if gated && grouped {
		return &UnsupportedError{What: "a step-group in a workflow with suspend steps, auto: false, if or timeout, or apply-component or apply-object steps (they run between top-level steps)"}
	}
	if gated && !deploys {
		return &UnsupportedError{What: "a workflow of suspend steps without a deploy step (it would deliver nothing)"}
	}
	if gated {
		// Steps run one by one by name: names must be distinct.
		if err := distinctNames(wf); err != nil {
			return err
		}
	}
	for i, s := range wf.Steps {
		name := stepName(s.Name, i)
		if s.Type == "step-group" {
			if err := checkStepFields(name, s.WorkflowStepBase, false); err != nil {
				return err
			}
			for j, sub := range s.SubSteps {
				if err := checkStep(stepName(sub.Name, j), sub, false); err != nil {
					return err
				}
			}
			continue
		}
		if len(s.SubSteps) > 0 {
			return &UnsupportedError{Step: name, What: "subSteps outside a step-group"}
		}
		if s.Type == StepSuspend {
			if err := checkSuspend(name, s.WorkflowStepBase); err != nil {
				return err
			}
			continue
		}
		if s.Type == StepApplyComponent {
			if err := checkApplyComponent(name, s.WorkflowStepBase); err != nil {
				return err
			}
			continue
		}
		if s.Type == StepApplyObject {
			if err := checkApplyObject(name, s.WorkflowStepBase); err != nil {
				return err
			}
			continue
		}
		if err := checkStep(name, s.WorkflowStepBase, true); err != nil {
			return err
		}
	}
	if gated {
		// Timeouts parse and conditions evaluate over the steps' names.
		if _, err := workflow.Steps(wf); err != nil {
			return &InvalidWorkflowError{Err: err}
		}
	}
	return nil
}

// InvalidWorkflowError is a workflow Steward runs whose step is wrong: a
// timeout that does not parse, a condition that does not evaluate to a
// boolean (a step name misspelt).
type InvalidWorkflowError struct{ Err error }

func (e *InvalidWorkflowError) Error() string {
	return "workflow " + e.Err.Error() + "; nothing of this version is applied"
}

func (e *InvalidWorkflowError) Unwrap() error { return e.Err }

// checkMode accepts only the mode Steward's one pass satisfies: steps one
// after another (KubeVela's default, StepByStep), with sub-steps in any
// mode.
func checkMode(wf *v1beta1.Workflow) error {
	if wf.Mode == nil || len(wf.Mode.Raw) == 0 {
		return nil
	}
	var mode struct {
		Steps    string `json:"steps"`
		SubSteps string `json:"subSteps"`
	}
	if err := json.Unmarshal(wf.Mode.Raw, &mode); err != nil {
		return &UnsupportedError{What: "mode " + string(wf.Mode.Raw)}
	}
	if mode.Steps != "" && mode.Steps != "StepByStep" {
		return &UnsupportedError{What: fmt.Sprintf("mode steps: %s (only StepByStep)", mode.Steps)}
	}
	if mode.SubSteps != "" && mode.SubSteps != "DAG" && mode.SubSteps != "StepByStep" {
		return &UnsupportedError{What: fmt.Sprintf("mode subSteps: %s", mode.SubSteps)}
	}
	return nil
}

func stepName(name string, i int) string {
	if name == "" {
		return fmt.Sprintf("#%d", i+1)
	}
	return name
}

// checkStep checks a deploy step; topLevel allows auto: false, which the
// gate runs between top-level steps only.
func checkStep(name string, s v1beta1.WorkflowStepBase, topLevel bool) error {
	if s.Type != StepDeploy {
		return &UnsupportedError{Step: name, What: fmt.Sprintf("step type %q", s.Type)}
	}
	if err := checkStepFields(name, s, topLevel); err != nil {
		return err
	}
	if s.Properties == nil || len(s.Properties.Raw) == 0 {
		return nil
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(s.Properties.Raw, &props); err != nil {
		return fmt.Errorf("deploy step %q: properties: %w", name, err)
	}
	for k, v := range props {
		switch k {
		case "inlinePolicies":
			var inline []v1beta1.AppPolicy
			if err := json.Unmarshal(v, &inline); err != nil {
				return fmt.Errorf("deploy step %q: inlinePolicies: %w", name, err)
			}
			for _, p := range inline {
				if p.Type != TypeTopology && p.Type != TypeOverride {
					// A resource policy inline in a step is not read by
					// policy.Parse: applying the step would ignore it.
					return &UnsupportedError{Step: name, What: fmt.Sprintf("inline policy of type %q (only topology and override are read inline; list it in spec.policies)", p.Type)}
				}
			}
		case "policies", "parallelism", "ignoreTerraformComponent":
		case "auto":
			if strings.TrimSpace(string(v)) == "false" && !topLevel {
				return &UnsupportedError{Step: name, What: "auto: false inside a step-group (it pauses top-level deploy steps only)"}
			}
		default:
			return &UnsupportedError{Step: name, What: fmt.Sprintf("deploy property %q", k)}
		}
	}
	return nil
}

// distinctNames refuses two top-level steps of one name, as a run of a
// gated workflow names them (unnamed deploy steps deploy-<n>, unnamed
// suspend steps suspend-<n>, n counting steps of the type from 1).
func distinctNames(wf *v1beta1.Workflow) error {
	seen := map[string]bool{}
	count := map[string]int{}
	for _, s := range wf.Steps {
		count[s.Type]++
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("%s-%d", s.Type, count[s.Type])
		}
		if seen[name] {
			return &UnsupportedError{Step: name, What: "a second step of the same name (each step of a workflow with suspend steps needs its own)"}
		}
		seen[name] = true
	}
	return nil
}

// StepSuspend waits, between deploy steps, until the workflow is resumed
// or for its duration (internal/workflow runs it).
const StepSuspend = "suspend"

// checkSuspend accepts a suspend step with the properties Steward reads
// (duration, message); a suspend step inside a step group, or a workflow
// mixing one with step groups, is refused by CheckWorkflow.
func checkSuspend(name string, s v1beta1.WorkflowStepBase) error {
	if err := checkStepFields(name, s, true); err != nil {
		return err
	}
	if s.Properties == nil || len(s.Properties.Raw) == 0 {
		return nil
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(s.Properties.Raw, &props); err != nil {
		return fmt.Errorf("suspend step %q: properties: %w", name, err)
	}
	for k, v := range props {
		switch k {
		case "message":
		case "duration":
			var d string
			_ = json.Unmarshal(v, &d)
			if p, err := time.ParseDuration(d); err != nil || p <= 0 {
				return &UnsupportedError{Step: name, What: fmt.Sprintf("duration %s (want a positive duration such as \"30s\" or \"2m15s\")", v)}
			}
		default:
			return &UnsupportedError{Step: name, What: fmt.Sprintf("suspend property %q", k)}
		}
	}
	return nil
}

// checkApplyComponent accepts an apply-component step's properties:
// component (required) and cluster.
func checkApplyComponent(name string, s v1beta1.WorkflowStepBase) error {
	props, err := stepProperties(name, StepApplyComponent, s, map[string]bool{"component": true, "cluster": true})
	if err != nil {
		return err
	}
	var component string
	_ = json.Unmarshal(props["component"], &component)
	if component == "" {
		return &InvalidWorkflowError{Err: fmt.Errorf("step %q: apply-component needs properties.component, the component to apply", name)}
	}
	return nil
}

// checkApplyObject accepts an apply-object step's properties: value (the
// object, required) and cluster.
func checkApplyObject(name string, s v1beta1.WorkflowStepBase) error {
	props, err := stepProperties(name, StepApplyObject, s, map[string]bool{"value": false, "cluster": true})
	if err != nil {
		return err
	}
	var value map[string]any
	if raw, ok := props["value"]; ok {
		if err := json.Unmarshal(raw, &value); err != nil {
			value = nil
		}
	}
	if value == nil {
		return &InvalidWorkflowError{Err: fmt.Errorf("step %q: apply-object needs properties.value, an object with apiVersion, kind and metadata.name", name)}
	}
	return nil
}

// stepProperties checks a top-level step's fields and reads its
// properties, refusing one Steward does not read; known names the
// properties it reads, true for those that must be strings.
func stepProperties(name, typ string, s v1beta1.WorkflowStepBase, known map[string]bool) (map[string]json.RawMessage, error) {
	if err := checkStepFields(name, s, true); err != nil {
		return nil, err
	}
	var props map[string]json.RawMessage
	if s.Properties != nil && len(s.Properties.Raw) > 0 {
		if err := json.Unmarshal(s.Properties.Raw, &props); err != nil {
			return nil, &InvalidWorkflowError{Err: fmt.Errorf("step %q: properties: %w", name, err)}
		}
	}
	for k, v := range props {
		isString, ok := known[k]
		if !ok {
			return nil, &UnsupportedError{Step: name, What: fmt.Sprintf("%s property %q", typ, k)}
		}
		var str string
		if isString && json.Unmarshal(v, &str) != nil {
			return nil, &InvalidWorkflowError{Err: fmt.Errorf("step %q: %s: want a string, got %s", name, k, v)}
		}
	}
	return props, nil
}

// checkStepFields refuses the fields that order steps or pass values
// between them, and if and timeout except on top-level steps (which the
// gate runs one by one).
func checkStepFields(name string, s v1beta1.WorkflowStepBase, topLevel bool) error {
	var fields []string
	if s.If != "" && !topLevel {
		fields = append(fields, "if")
	}
	if s.Timeout != "" && !topLevel {
		fields = append(fields, "timeout")
	}
	if len(s.DependsOn) > 0 {
		fields = append(fields, "dependsOn")
	}
	if len(s.Inputs) > 0 {
		fields = append(fields, "inputs")
	}
	if len(s.Outputs) > 0 {
		fields = append(fields, "outputs")
	}
	if len(fields) > 0 {
		return &UnsupportedError{Step: name, What: "field " + strings.Join(fields, ", ")}
	}
	return nil
}
