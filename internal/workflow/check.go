package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// UnsupportedError is a workflow instruction Steward does not carry out:
// a step type it does not run, a property it does not read, inputs or
// outputs on a step that does not pass values. Carrying out the rest
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
	return fmt.Sprintf("%s: %s is not supported by Steward, which runs deploy, apply-application, apply-component, apply-object, suspend, step-group and depends-on-app steps; nothing of this version is applied. Remove it, or see docs/md", where, e.What)
}

// Check refuses a workflow with an instruction Steward would not
// carry out; see UnsupportedError. A workflow it runs step by step
// (Gated) is also checked whole: names used once, dependsOn
// without a cycle and timeouts that parse. Its conditions are CUE: the
// controller evaluates them, within the evaluation budget, before it
// records a version (Flow.CheckConditions).
func Check(wf *v1beta1.Workflow) error {
	if wf == nil {
		return nil
	}
	if wf.Ref != "" {
		return &UnsupportedError{What: fmt.Sprintf("ref %q (WorkflowTemplate)", wf.Ref)}
	}
	if _, _, err := Mode(wf); err != nil {
		return &UnsupportedError{What: err.Error()}
	}
	gated := Gated(wf)
	names := Namer{}
	for _, s := range wf.Steps {
		name := names.Name(s.WorkflowStepBase)
		if s.Type == v1beta1.WorkflowStepTypeStepGroup {
			if err := checkStepFields(name, s.WorkflowStepBase); err != nil {
				return err
			}
			if s.Properties != nil && len(s.Properties.Raw) > 0 && string(s.Properties.Raw) != "{}" && string(s.Properties.Raw) != "null" {
				return &UnsupportedError{Step: name, What: "step-group properties " + string(s.Properties.Raw)}
			}
			for _, sub := range s.SubSteps {
				subName := names.Name(sub)
				if sub.Type == v1beta1.WorkflowStepTypeStepGroup {
					return &UnsupportedError{Step: subName, What: "a step-group inside a step-group"}
				}
				if err := checkOne(subName, sub); err != nil {
					return err
				}
			}
			continue
		}
		if len(s.SubSteps) > 0 {
			return &UnsupportedError{Step: name, What: "subSteps outside a step-group"}
		}
		if err := checkOne(name, s.WorkflowStepBase); err != nil {
			return err
		}
	}
	if gated {
		if _, err := Steps(wf); err != nil {
			if errors.As(err, new(*UnsupportedError)) {
				return err
			}
			return &InvalidWorkflowError{Err: err}
		}
	}
	return nil
}

// checkOne checks a step that is not a step group.
func checkOne(name string, s v1beta1.WorkflowStepBase) error {
	switch s.Type {
	case v1beta1.WorkflowStepTypeSuspend:
		return checkSuspend(name, s)
	case v1beta1.WorkflowStepTypeApplyComponent:
		return checkApplyComponent(name, s)
	case v1beta1.WorkflowStepTypeApplyObject:
		return checkApplyObject(name, s)
	case v1beta1.WorkflowStepTypeDependsOnApp:
		props, err := stepProperties(name, s.Type, s, map[string]bool{"name": true, "namespace": true})
		if err != nil {
			return err
		}
		if _, ok := props["name"]; !ok {
			return &InvalidWorkflowError{Err: fmt.Errorf("step %q: depends-on-app needs properties.name, the Application to wait for", name)}
		}
		return nil
	case v1beta1.WorkflowStepTypeApplyApplication:
		// Of runs one without properties as a deploy step.
		return &UnsupportedError{Step: name, What: "apply-application properties (the step takes none; it applies every component)"}
	}
	return checkStep(name, s)
}

// InvalidWorkflowError is a workflow Steward runs whose step is wrong: a
// timeout that does not parse, a condition that does not evaluate to a
// boolean (a step name misspelt).
type InvalidWorkflowError struct{ Err error }

func (e *InvalidWorkflowError) Error() string {
	return "workflow " + e.Err.Error() + "; nothing of this version is applied"
}

func (e *InvalidWorkflowError) Unwrap() error { return e.Err }

// checkStep checks a deploy step; a custom step (a step definition's
// template) is checked when it runs, and the controller refuses a
// version whose custom step types have no definition.
func checkStep(name string, s v1beta1.WorkflowStepBase) error {
	if !Native(s.Type) {
		return nil
	}
	if s.Type != v1beta1.WorkflowStepTypeDeploy {
		return &UnsupportedError{Step: name, What: fmt.Sprintf("step type %q", s.Type)}
	}
	if err := checkStepFields(name, s); err != nil {
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
				if p.Type != v1beta1.PolicyTypeTopology && p.Type != v1beta1.PolicyTypeOverride && p.Type != "replication" {
					// A resource policy inline in a step is not read by
					// policy.Parse: applying the step would ignore it.
					return &UnsupportedError{Step: name, What: fmt.Sprintf("inline policy of type %q (only topology, override and replication are read inline; list it in spec.policies)", p.Type)}
				}
			}
		case "policies", "parallelism", "ignoreTerraformComponent", "auto":
		default:
			return &UnsupportedError{Step: name, What: fmt.Sprintf("deploy property %q", k)}
		}
	}
	return nil
}

// checkSuspend accepts a suspend step with the properties Steward reads
// (duration, message).
func checkSuspend(name string, s v1beta1.WorkflowStepBase) error {
	if err := checkStepFields(name, s); err != nil {
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
			if _, err := suspendDuration(name, d); err != nil {
				return err
			}
		default:
			return &UnsupportedError{Step: name, What: fmt.Sprintf("suspend property %q", k)}
		}
	}
	return nil
}

// suspendDuration reads a suspend step's duration: positive, or none.
func suspendDuration(name, d string) (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	p, err := time.ParseDuration(d)
	if err != nil || p <= 0 {
		return 0, &UnsupportedError{Step: name, What: fmt.Sprintf("duration %q (want a positive duration such as \"30s\" or \"2m15s\")", d)}
	}
	return p, nil
}

// checkApplyComponent accepts an apply-component step's properties:
// component (required) and cluster.
func checkApplyComponent(name string, s v1beta1.WorkflowStepBase) error {
	props, err := stepProperties(name, v1beta1.WorkflowStepTypeApplyComponent, s, map[string]bool{"component": true, "cluster": true})
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
	props, err := stepProperties(name, v1beta1.WorkflowStepTypeApplyObject, s, map[string]bool{"value": false, "cluster": true})
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

// stepProperties checks a step's fields and reads its properties, refusing one Steward does not read; known names the
// properties it reads, true for those that must be strings.
func stepProperties(name, typ string, s v1beta1.WorkflowStepBase, known map[string]bool) (map[string]json.RawMessage, error) {
	if err := checkStepFields(name, s); err != nil {
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

// checkStepFields refuses the fields that pass values between steps on
// a step that neither takes nor exports values: Steward passes them into
// and out of apply-component and apply-object steps only.
func checkStepFields(name string, s v1beta1.WorkflowStepBase) error {
	if s.Type == v1beta1.WorkflowStepTypeApplyComponent || s.Type == v1beta1.WorkflowStepTypeApplyObject || !Native(s.Type) {
		return nil
	}
	var fields []string
	if len(s.Inputs) > 0 {
		fields = append(fields, "inputs")
	}
	if len(s.Outputs) > 0 {
		fields = append(fields, "outputs")
	}
	if len(fields) > 0 {
		return &UnsupportedError{Step: name, What: fmt.Sprintf("field %s on a %s step (values pass into and out of apply-component and apply-object steps)", strings.Join(fields, ", "), s.Type)}
	}
	return nil
}
