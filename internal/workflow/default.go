package workflow

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Of returns the workflow an Application runs: its own when it lists
// steps (or names a WorkflowTemplate), else the one KubeVela generates
// for it. With two or more topology policies that is one deploy step per
// topology policy, in their order, named deploy-<policy>, each with the
// override policies: the topologies are delivered one after another,
// each waiting for its components' health, as in KubeVela. Otherwise
// there is nothing to run step by step (one topology policy, or none,
// is one deploy step, delivered in one pass with the components in
// dependency order, as KubeVela's generated apply-component steps do),
// and the Application's own (possibly nil) workflow is returned.
//
// An apply-application step (KubeVela's older step that applies every
// component and waits for each to be healthy) is returned as a deploy
// step without properties, which does the same: every component, on the
// hub, in dependency order, waiting for health. One with properties is
// left as it is, and Check refuses it.
func Of(app *v1beta1.Application) *v1beta1.Workflow {
	wf := app.Spec.Workflow
	if !Generated(app) {
		return withApplyApplication(wf)
	}
	topologies, overrides := policyNames(app)
	out := &v1beta1.Workflow{}
	if wf != nil {
		out.Mode = wf.Mode
	}
	for _, t := range topologies {
		out.Steps = append(out.Steps, v1beta1.WorkflowStep{WorkflowStepBase: deployStep("deploy-"+t, append(append([]string{}, overrides...), t))})
	}
	return out
}

// Generated reports whether the workflow an Application runs is the one
// generated for it (Of): it lists no steps, names no WorkflowTemplate,
// and has two or more topology policies.
func Generated(app *v1beta1.Application) bool {
	if wf := app.Spec.Workflow; wf != nil && (len(wf.Steps) > 0 || wf.Ref != "") {
		return false
	}
	n := 0
	for _, p := range app.Spec.Policies {
		if p.Type == v1beta1.PolicyTypeTopology {
			n++
		}
	}
	return n > 1
}

// OnePass returns the steps KubeVela runs for an Application that Steward
// delivers in one pass (a workflow without gates), to report them in
// status.workflow, with the run's mode. They are the workflow's own steps
// when it lists any; else KubeVela's generated ones: deploy-<policy> for a
// topology policy; one "deploy" step when there are override policies or
// ref-objects components; otherwise one apply-component step per
// component, named after it and depending on the steps of the components
// it depends on. Generated steps run as a DAG (mode "DAG-DAG"), as
// KubeVela runs them.
func OnePass(app *v1beta1.Application) (steps []v1beta1.WorkflowStepBase, mode string) {
	wf := app.Spec.Workflow
	dag, subStepByStep, _ := Mode(wf)
	mode = Flow{DAG: dag, SubStepByStep: subStepByStep}.Mode()
	if wf != nil && len(wf.Steps) > 0 {
		for _, s := range wf.Steps {
			steps = append(steps, s.WorkflowStepBase)
		}
		return steps, mode
	}
	if wf == nil {
		mode = ModeDAGName + "-" + ModeDAGName
	}
	topologies, overrides := policyNames(app)
	refObjects := false
	for _, c := range app.Spec.Components {
		refObjects = refObjects || c.Type == "ref-objects"
	}
	deploy := deployStep
	for _, t := range topologies {
		steps = append(steps, deploy("deploy-"+t, append(append([]string{}, overrides...), t)))
	}
	if len(steps) > 0 {
		return steps, mode
	}
	if refObjects || len(overrides) > 0 {
		return []v1beta1.WorkflowStepBase{deploy("deploy", append([]string{}, overrides...))}, mode
	}
	for _, c := range app.Spec.Components {
		props, _ := json.Marshal(map[string]string{"component": c.Name})
		steps = append(steps, v1beta1.WorkflowStepBase{Name: c.Name, Type: v1beta1.WorkflowStepTypeApplyComponent,
			Properties: &runtime.RawExtension{Raw: props}, DependsOn: c.DependsOn})
	}
	return steps, mode
}

// withApplyApplication returns wf with each apply-application step
// without properties as a deploy step; wf itself when it has none.
func withApplyApplication(wf *v1beta1.Workflow) *v1beta1.Workflow {
	if wf == nil {
		return nil
	}
	rewrite := func(s *v1beta1.WorkflowStepBase) bool {
		if s.Type != v1beta1.WorkflowStepTypeApplyApplication || !emptyProperties(s.Properties) {
			return false
		}
		s.Type = v1beta1.WorkflowStepTypeDeploy
		s.Properties = nil
		return true
	}
	var out *v1beta1.Workflow
	for i := range wf.Steps {
		for j := -1; j < len(wf.Steps[i].SubSteps); j++ {
			var base v1beta1.WorkflowStepBase
			if j < 0 {
				base = wf.Steps[i].WorkflowStepBase
			} else {
				base = wf.Steps[i].SubSteps[j]
			}
			if !rewrite(&base) {
				continue
			}
			if out == nil {
				out = wf.DeepCopy()
			}
			if j < 0 {
				out.Steps[i].WorkflowStepBase = base
			} else {
				out.Steps[i].SubSteps[j] = base
			}
		}
	}
	if out == nil {
		return wf
	}
	return out
}

func emptyProperties(p *runtime.RawExtension) bool {
	if p == nil {
		return true
	}
	switch string(p.Raw) {
	case "", "{}", "null":
		return true
	}
	return false
}

// policyNames returns the names of an Application's topology and override
// policies, in order.
func policyNames(app *v1beta1.Application) (topologies, overrides []string) {
	for _, p := range app.Spec.Policies {
		switch p.Type {
		case v1beta1.PolicyTypeTopology:
			topologies = append(topologies, p.Name)
		case v1beta1.PolicyTypeOverride:
			overrides = append(overrides, p.Name)
		}
	}
	return topologies, overrides
}

// deployStep is a deploy step with the given policies.
func deployStep(name string, policies []string) v1beta1.WorkflowStepBase {
	props, _ := json.Marshal(map[string]any{"policies": policies})
	return v1beta1.WorkflowStepBase{Name: name, Type: v1beta1.WorkflowStepTypeDeploy, Properties: &runtime.RawExtension{Raw: props}}
}
