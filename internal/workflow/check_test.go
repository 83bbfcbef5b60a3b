package workflow_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/workflow"
)

func TestCheck_RefusesWhatWouldBeSkipped(t *testing.T) {
	tests := []struct {
		name, workflow, want string // want: "" accepted, else in the message
	}{
		{"deploy steps", `{steps: [{name: a, type: deploy, properties: {policies: [x], parallelism: 2, auto: true}}, {name: b, type: deploy}]}`, ""},
		{"a step group of deploys", `{steps: [{name: g, type: step-group, subSteps: [{name: a, type: deploy}, {name: b, type: deploy}]}]}`, ""},
		{"an approval gate", `{steps: [{name: staging, type: deploy}, {name: approve, type: suspend, properties: {duration: 1m, message: "approve it"}}, {name: prod, type: deploy}]}`, ""},
		{"two steps of one name", `{steps: [{name: prod, type: deploy}, {type: suspend}, {name: suspend-1, type: deploy}]}`, `"suspend-1": a second step of the same name`},
		{"suspend steps alone", `{steps: [{name: wait, type: suspend}]}`, `it would do nothing`},
		// KubeVela runs a workflow of custom steps alone (configs written,
		// webhooks called), delivering no component.
		{"config steps alone", `{steps: [{name: write, type: create-config, properties: {name: c, config: {a: 1}}}, {name: read, type: read-config, properties: {name: c}, outputs: [{name: cfg, valueFrom: output.$returns.config}]}, {name: drop, type: delete-config, properties: {name: c}}]}`, ""},
		{"a suspend property Steward does not read", `{steps: [{name: approve, type: suspend, properties: {approvers: [a]}}, {name: d, type: deploy}]}`, `suspend property "approvers"`},
		{"a suspend duration that does not parse", `{steps: [{name: wait, type: suspend, properties: {duration: soon}}, {name: d, type: deploy}]}`, `duration "soon" (want a positive duration`},
		{"a conditional suspend", `{steps: [{name: approve, type: suspend, if: always}, {name: d, type: deploy}]}`, ""},
		{"a timeout and a condition", `{steps: [{name: staging, type: deploy, timeout: 5m}, {name: fallback, type: deploy, if: 'status.staging.timeout || status["staging"].phase == "failed"'}, {name: prod, type: deploy}]}`, ""},
		// Conditions are CUE: the controller evaluates them, within the
		// evaluation budget, before it records a version
		// (workflow.Flow.CheckConditions), not here.
		{"a condition on a step that does not exist", `{steps: [{name: prod, type: deploy, if: "status.staging.succeeded"}]}`, ""},
		{"a timeout that does not parse", `{steps: [{name: prod, type: deploy, timeout: soon}]}`, `timeout "soon": want a positive duration`},
		{"a timeout inside a group", `{steps: [{name: g, type: step-group, subSteps: [{name: a, type: deploy, timeout: 1m}]}]}`, ""},
		{"a condition on a group", `{steps: [{name: g, type: step-group, if: always, subSteps: [{name: a, type: deploy}]}]}`, ""},
		{"a suspend inside a group", `{steps: [{name: g, type: step-group, subSteps: [{name: wait, type: suspend}, {name: a, type: deploy}]}]}`, ""},
		{"a suspend beside a group", `{steps: [{name: wait, type: suspend}, {name: g, type: step-group, subSteps: [{name: a, type: deploy}]}]}`, ""},
		{"auto false", `{steps: [{name: staging, type: deploy}, {name: prod, type: deploy, properties: {auto: false}}]}`, ""},
		{"auto false inside a group", `{steps: [{name: g, type: step-group, subSteps: [{name: prod, type: deploy, properties: {auto: false}}]}]}`, ""},
		{"auto false beside a group", `{steps: [{name: prod, type: deploy, properties: {auto: false}}, {name: g, type: step-group, subSteps: [{name: a, type: deploy}]}]}`, ""},
		{"apply-component steps", `{steps: [{name: api, type: apply-component, properties: {component: api}}, {name: cfg, type: apply-component, timeout: 1m, properties: {component: cfg, cluster: eu-1}}]}`, ""},
		{"apply-component without its component", `{steps: [{name: api, type: apply-component, properties: {cluster: eu-1}}]}`, `step "api": apply-component needs properties.component`},
		{"an apply-component property Steward does not read", `{steps: [{name: api, type: apply-component, properties: {component: api, namespace: x}}]}`, `apply-component property "namespace"`},
		{"apply-component inside a group", `{steps: [{name: g, type: step-group, subSteps: [{name: api, type: apply-component, properties: {component: api}}]}]}`, ""},
		{"a step-group inside a step-group", `{steps: [{name: g, type: step-group, subSteps: [{name: h, type: step-group}]}]}`, `"h": a step-group inside a step-group`},
		{"a step-group without sub-steps", `{steps: [{name: g, type: step-group}, {name: a, type: deploy}]}`, `step-group "g" has no subSteps`},
		{"a name used by a sub-step too", `{steps: [{name: a, type: deploy}, {name: g, type: step-group, subSteps: [{name: a, type: deploy}]}]}`, `"a": a second step of the same name`},
		{"dependsOn in DAG mode", `{mode: {steps: DAG}, steps: [{name: prod, type: deploy, dependsOn: [staging]}, {name: staging, type: deploy}, {name: other, type: deploy}]}`, ""},
		{"dependsOn between sub-steps", `{steps: [{name: g, type: step-group, subSteps: [{name: b, type: deploy, dependsOn: [a]}, {name: a, type: deploy}]}]}`, ""},
		{"dependsOn a later step, one by one", `{steps: [{name: prod, type: deploy, dependsOn: [staging]}, {name: staging, type: deploy}]}`, `dependsOn "staging" names a later step`},
		{"a dependsOn cycle", `{mode: {steps: DAG}, steps: [{name: a, type: deploy, dependsOn: [b]}, {name: b, type: deploy, dependsOn: [a]}]}`, `form a cycle`},
		{"dependsOn across levels", `{steps: [{name: a, type: deploy}, {name: g, type: step-group, subSteps: [{name: b, type: deploy, dependsOn: [a]}]}]}`, `dependsOn "a" names no step beside it`},
		{"depends-on-app", `{steps: [{name: db, type: depends-on-app, properties: {name: db, namespace: data}}, {name: a, type: deploy}]}`, ""},
		{"depends-on-app without its name", `{steps: [{name: db, type: depends-on-app, properties: {namespace: data}}, {name: a, type: deploy}]}`, `depends-on-app needs properties.name`},
		{"inputs", `{steps: [{name: prod, type: deploy, inputs: [{from: ip, parameterKey: x}]}]}`, "field inputs"},
		{"apply-object steps", `{steps: [{name: cm, type: apply-object, properties: {value: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}, cluster: eu-1}}, {name: wait, type: suspend}]}`, ""},
		{"apply-object without its object", `{steps: [{name: cm, type: apply-object}]}`, `step "cm": apply-object needs properties.value`},
		{"apply-object whose value is not an object", `{steps: [{name: cm, type: apply-object, properties: {value: "x"}}]}`, `step "cm": apply-object needs properties.value`},
		{"an apply-object property Steward does not read", `{steps: [{name: cm, type: apply-object, properties: {value: {kind: x}, patch: {}}}]}`, `apply-object property "patch"`},
		{"dependsOn a step that does not exist", `{steps: [{name: prod, type: deploy, dependsOn: [staging]}]}`, `dependsOn "staging" names no step beside it`},
		{"outputs", `{steps: [{name: prod, type: deploy, outputs: [{name: ip, valueFrom: output.status}]}]}`, "field outputs"},
		{"an unknown deploy property", `{steps: [{name: prod, type: deploy, properties: {policy: [x]}}]}`, `deploy property "policy"`},
		{"mode DAG", `{mode: {steps: DAG, subSteps: StepByStep}, steps: [{name: a, type: deploy}]}`, ""},
		{"a mode Steward does not know", `{mode: {steps: Parallel}, steps: [{name: a, type: deploy}]}`, `the workflow: mode "Parallel": want StepByStep or DAG`},
		{"the default mode", `{mode: {steps: StepByStep, subSteps: DAG}, steps: [{name: a, type: deploy}]}`, ""},
		{"an inline resource policy", `{steps: [{name: a, type: deploy, properties: {inlinePolicies: [{type: read-only, properties: {}}]}}]}`, `inline policy of type "read-only"`},
		{"inline topology", `{steps: [{name: a, type: deploy, properties: {inlinePolicies: [{type: topology, properties: {clusters: [local]}}]}}]}`, ""},
		{"a template", `{ref: my-template}`, "WorkflowTemplate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := &v1beta1.Workflow{}
			if err := yaml.Unmarshal([]byte(tt.workflow), wf); err != nil {
				t.Fatal(err)
			}
			err := workflow.Check(wf)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			refused := func(err error) bool {
				return errors.As(err, new(*workflow.UnsupportedError)) || errors.As(err, new(*workflow.InvalidWorkflowError))
			}
			if !refused(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want an UnsupportedError or InvalidWorkflowError saying %q", err, tt.want)
			}
			// Resolve, the only way to a deploy step, refuses it too.
			app := &v1beta1.Application{Spec: v1beta1.ApplicationSpec{Workflow: wf}}
			if _, err := placement.Resolve(app, nil); !refused(err) {
				t.Errorf("Resolve: %v, want the refusal", err)
			}
		})
	}
}

func TestOf_ApplyApplicationIsADeployStep(t *testing.T) {
	app := &v1beta1.Application{}
	app.Spec.Workflow = &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "apply", Type: v1beta1.WorkflowStepTypeApplyApplication}},
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "group", Type: v1beta1.WorkflowStepTypeStepGroup},
			SubSteps: []v1beta1.WorkflowStepBase{{Name: "sub", Type: v1beta1.WorkflowStepTypeApplyApplication, Properties: &runtime.RawExtension{Raw: []byte(`{}`)}}}},
	}}
	wf := workflow.Of(app)
	if wf.Steps[0].Type != v1beta1.WorkflowStepTypeDeploy || wf.Steps[1].SubSteps[0].Type != v1beta1.WorkflowStepTypeDeploy {
		t.Fatalf("steps %+v, want deploy steps", wf.Steps)
	}
	if app.Spec.Workflow.Steps[0].Type != v1beta1.WorkflowStepTypeApplyApplication {
		t.Error("Of changed the Application's own workflow")
	}
	if err := workflow.Check(wf); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// With properties (it takes none) it is refused, not run as something else.
	app.Spec.Workflow.Steps[0].Properties = &runtime.RawExtension{Raw: []byte(`{"component":"x"}`)}
	if err := workflow.Check(workflow.Of(app)); err == nil || !strings.Contains(err.Error(), "apply-application properties") {
		t.Fatalf("Check: %v, want apply-application properties refused", err)
	}
}
