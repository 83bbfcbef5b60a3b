package workflow

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// KubeVela evaluates an if over the values the step takes, by the output
// they come from (inputs.cfg, inputs["cfg"]): the step whose condition
// holds runs, the other is skipped, once the value is exported.
func TestIf_ReadsTheValuesTheStepTakes(t *testing.T) {
	f := stepsOf(t, `{mode: {steps: DAG}, steps: [
	  {name: read, type: read-config, properties: {name: env}, outputs: [{name: cfg, valueFrom: output.$returns.config}]},
	  {name: to-prod, type: notification, if: 'inputs.cfg.env == "prod"', inputs: [{from: cfg, parameterKey: message}]},
	  {name: to-dev, type: notification, if: 'inputs["cfg"].env == "dev" || status["read"].failed', inputs: [{from: cfg}]}]}`)
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	if got := r.Dispatching(); !equal(got, []string{"read"}) {
		t.Fatalf("first pass runs %v, want read alone", got)
	}
	r.Settle("read", Verdict{Phase: v1beta1.WorkflowStepSucceeded, Values: map[string]json.RawMessage{"cfg": json.RawMessage(`{"env": "prod"}`)}})
	r.Finish(judge(), now)
	if !r.Next {
		t.Fatal("no pass asked for the steps after the one that exported")
	}
	r = AdvanceWith(f, r.Status, "v1", now.Add(time.Second), Data{Values: r.Values()})
	st := r.Status.Steps
	if st[1].Phase != v1beta1.WorkflowStepRunning || st[2].Phase != v1beta1.WorkflowStepSkipped {
		t.Fatalf("to-prod %s (%s), to-dev %s (%s); want running and skipped", st[1].Phase, st[1].Message, st[2].Phase, st[2].Message)
	}
}

// A condition over a value not read back yet waits for it rather than
// failing; one whose value was never exported fails its step, naming
// the input, as a step taking a missing value does.
func TestIf_OverInputsWaitsForTheirValues(t *testing.T) {
	f := stepsOf(t, `{steps: [
	  {name: read, type: read-config, properties: {name: env}, outputs: [{name: cfg, valueFrom: output.$returns.config}]},
	  {name: notify, type: notification, if: 'inputs.cfg.env == "prod"', inputs: [{from: cfg}]}]}`)
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	r.Settle("read", Verdict{Phase: v1beta1.WorkflowStepSucceeded})
	r.Finish(judge(), now)
	r = AdvanceWith(f, r.Status, "v1", now.Add(time.Second), Data{})
	if n := r.Status.Steps[1]; n.Phase != v1beta1.WorkflowStepPending || !strings.Contains(n.Message, "waiting for the value") {
		t.Fatalf("value not read back: notify %+v", n)
	}
	// Read back, a value that makes the condition false skips the step,
	// which no longer says it waits.
	r = AdvanceWith(f, r.Status, "v1", now.Add(2*time.Second), Data{Values: map[string]json.RawMessage{"cfg": json.RawMessage(`{"env": "dev"}`)}})
	if n := r.Status.Steps[1]; n.Phase != v1beta1.WorkflowStepSkipped || n.Message != "" {
		t.Fatalf("value read back: notify %+v", n)
	}

	r = Advance(f, nil, "v2", now)
	r.Settle("read", Verdict{Phase: v1beta1.WorkflowStepFailed, Message: "no config"})
	r.Finish(judge(), now)
	r = AdvanceWith(f, r.Status, "v2", now.Add(time.Second), Data{})
	if n := r.Status.Steps[1]; n.Phase != v1beta1.WorkflowStepFailed || n.Reason != v1beta1.WorkflowStepReasonInputMissing {
		t.Fatalf("value never exported: notify %+v", n)
	}
}

// What a condition over inputs names is checked when the version is
// rendered, before any value exists: inputs the step takes, steps the
// workflow has.
func TestSteps_CheckWhatAConditionOverInputsNames(t *testing.T) {
	producer := `{name: read, type: read-config, properties: {name: env}, outputs: [{name: cfg, valueFrom: output.$returns.config}]}`
	for _, tc := range []struct{ name, step, want string }{
		{"an input the step takes", `{name: notify, type: notification, if: 'inputs["cfg"].env == "prod" && status.read.succeeded', inputs: [{from: cfg}]}`, ""},
		{"an input the step does not take", `{name: notify, type: notification, if: 'inputs.other == 1', inputs: [{from: cfg}]}`, `reads inputs["other"], which the step does not take (it takes "cfg")`},
		{"inputs on a step that takes none", `{name: notify, type: notification, if: 'inputs.cfg == 1'}`, "reads inputs, and the step takes none"},
		{"a step the workflow does not have", `{name: notify, type: notification, if: 'inputs.cfg == 1 || status.raed.failed', inputs: [{from: cfg}]}`, `reads status["raed"], which names no step`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOf(t, `{steps: [`+producer+`, `+tc.step+`]}`)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
