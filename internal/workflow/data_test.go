package workflow

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

func checkOf(t *testing.T, wf string) error {
	t.Helper()
	w := &v1beta1.Workflow{}
	if err := yaml.Unmarshal([]byte(wf), w); err != nil {
		t.Fatal(err)
	}
	_, err := bound(w)
	return err
}

func TestSteps_RefuseInputsAndOutputsThatCannotRun(t *testing.T) {
	for _, tc := range []struct{ name, wf, want string }{
		{"an input no step exports", `{steps: [{name: a, type: apply-object, inputs: [{from: ip, parameterKey: value.data.x}]}]}`,
			`input from "ip": no step exports`},
		{"outputs on a deploy step", `{steps: [{name: a, type: deploy, outputs: [{name: ip, valueFrom: x}]}, {name: b, type: deploy}]}`,
			"inputs and outputs on a deploy step"},
		{"an output exported twice", `{steps: [{name: a, type: apply-object, outputs: [{name: ip, valueFrom: output.x}]}, {name: b, type: apply-object, outputs: [{name: ip, valueFrom: output.y}]}]}`,
			`output "ip" is exported by another step too`},
		{"a valueFrom that is not CUE", `{steps: [{name: a, type: apply-object, outputs: [{name: ip, valueFrom: "output.["}]}]}`,
			"is not a CUE expression"},
		{"a parameterKey outside the properties", `{steps: [{name: a, type: apply-object, outputs: [{name: ip, valueFrom: output.x}]}, {name: b, type: apply-component, inputs: [{from: ip, parameterKey: data.x}]}]}`,
			"want a path under properties"},
		{"a value exported by a later step, one by one", `{steps: [{name: b, type: apply-object, inputs: [{from: ip, parameterKey: value.data.x}]}, {name: a, type: apply-object, outputs: [{name: ip, valueFrom: output.x}]}]}`,
			`step "a" exports it and runs after it`},
		{"values in a cycle", `{mode: {steps: DAG}, steps: [
			{name: a, type: apply-object, inputs: [{from: out-b, parameterKey: value.data.x}], outputs: [{name: out-a, valueFrom: output.x}]},
			{name: b, type: apply-object, inputs: [{from: out-a, parameterKey: value.data.y}], outputs: [{name: out-b, valueFrom: output.y}]}]}`,
			"form a cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOf(t, tc.wf)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// In DAG mode a step waits for the step whose value it takes, as in
// KubeVela, also across a step group.
func TestSteps_AStepWaitsForTheValuesItTakes(t *testing.T) {
	f := stepsOf(t, `{mode: {steps: DAG}, steps: [
	  {name: consumer, type: step-group, subSteps: [{name: c, type: apply-object, inputs: [{from: ip, parameterKey: value.data.ip}]}]},
	  {name: producer, type: apply-object, outputs: [{name: ip, valueFrom: output.spec.clusterIP}]}]}`)
	if !slices.Contains(f.Steps[0].DependsOn, "producer") {
		t.Fatalf("the group taking a value does not wait for its producer: %+v", f.Steps[0])
	}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	r := AdvanceWith(f, nil, "v1", now, Data{})
	if got := r.Dispatching(); !equal(got, []string{"producer"}) {
		t.Fatalf("first pass dispatches %v, want the producer alone", got)
	}
	// The producer succeeds and exports its value: the next pass is due
	// at once, to render the step taking it.
	r.Export(map[string]json.RawMessage{"ip": json.RawMessage(`"10.0.0.7"`)})
	r.Finish(judge("producer"), now)
	if !r.Next {
		t.Fatal("no pass asked for the step whose value arrived")
	}
	// Until its objects are rendered with the value, it does not start.
	r = AdvanceWith(f, r.Status, "v1", now.Add(time.Second), Data{Values: r.Values()})
	sub := r.Status.Steps[0].SubStepsStatus[0]
	if r.Reached["c"] || sub.Phase != v1beta1.WorkflowStepPending || sub.Message != renderMessage {
		t.Fatalf("not rendered yet: reached %v, sub-step %+v", r.Reached, sub)
	}
	r = AdvanceWith(f, r.Status, "v1", now.Add(2*time.Second), Data{Values: r.Values(), Rendered: map[string]bool{"c": true}})
	if got := r.Dispatching(); !equal(got, []string{"c"}) || r.Status.Steps[0].SubStepsStatus[0].Message != "" {
		t.Fatalf("rendered: dispatches %v, sub-step %+v", got, r.Status.Steps[0].SubStepsStatus[0])
	}
	// A new run starts without the values.
	r = AdvanceWith(f, r.Status, "v2", now.Add(3*time.Second), Data{Values: r.Values(), Rendered: map[string]bool{"c": true}})
	if len(r.Values()) != 0 {
		t.Fatalf("a new run kept the values %v", r.Values())
	}
}

// A step that runs whatever happened (if: always) but whose value was
// never exported fails, naming it, rather than running without it.
func TestAdvance_AValueNeverExportedFailsTheStepTakingIt(t *testing.T) {
	f := stepsOf(t, `{steps: [
	  {name: producer, type: apply-object, timeout: 1s, outputs: [{name: ip, valueFrom: output.spec.clusterIP}]},
	  {name: skipped, type: apply-object, inputs: [{from: ip, parameterKey: value.data.ip}]},
	  {name: always, type: apply-object, if: always, inputs: [{from: ip, parameterKey: value.data.ip}]}]}`)
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	r.Finish(judge(), now)
	r = AdvanceWith(f, r.Status, "v1", now.Add(2*time.Second), Data{})
	st := r.Status.Steps
	if st[0].Phase != v1beta1.WorkflowStepFailed || st[1].Phase != v1beta1.WorkflowStepSkipped || st[2].Phase != v1beta1.WorkflowStepFailed || st[2].Reason != v1beta1.WorkflowStepReasonInputMissing ||
		!strings.Contains(st[2].Message, `input from "ip"`) || r.Reached["always"] {
		t.Fatalf("steps %+v", st)
	}
}

func TestFill_SetsValuesAtTheirPaths(t *testing.T) {
	s := Step{Name: "s", Inputs: []Input{
		{From: "ip", ParameterKey: "properties.env[1].value"},
		{From: "port", ParameterKey: `properties.data["db.port"]`},
		{From: "mode", ParameterKey: "properties.mode"},
	}}
	props := map[string]any{"properties": map[string]any{
		"env":  []any{map[string]any{"name": "A", "value": "a"}},
		"mode": "slow",
	}}
	values := map[string]json.RawMessage{"ip": []byte(`"10.0.0.7"`), "port": []byte(`5432`), "mode": []byte(`"fast"`)}
	if err := s.Fill(props, values); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"properties": map[string]any{
		"env":  []any{map[string]any{"name": "A", "value": "a"}, map[string]any{"value": "10.0.0.7"}},
		"data": map[string]any{"db.port": float64(5432)},
		"mode": "fast",
	}}
	if !reflect.DeepEqual(props, want) {
		t.Fatalf("got %v\nwant %v", props, want)
	}
	for _, bad := range []string{"", "a..b", ".a", "a[x]", "a[0", `a["]`, "a[0]b"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) accepted", bad)
		}
	}
}

func TestExport_ReadsTheLiveObject(t *testing.T) {
	s := Step{Name: "db", Outputs: []Output{
		{Name: "ip", ValueFrom: "output.spec.clusterIP"},
		{Name: "url", ValueFrom: `"postgres://\(output.spec.clusterIP):\(output.spec.ports[0].port)"`},
		{Name: "lit", ValueFrom: `"fixed"`},
	}}
	live := map[string]any{"output": map[string]any{"spec": map[string]any{"clusterIP": "10.0.0.7", "ports": []any{map[string]any{"port": 5432}}}}}
	got, err := s.Export(cueeval.NewLocal(0), live)
	if err != nil {
		t.Fatal(err)
	}
	if string(got["ip"]) != `"10.0.0.7"` || string(got["url"]) != `"postgres://10.0.0.7:5432"` || string(got["lit"]) != `"fixed"` {
		t.Fatalf("exported %s %s %s", got["ip"], got["url"], got["lit"])
	}
	// A field the object has not reported yet is an error naming the
	// output: the step waits for it.
	s.Outputs = []Output{{Name: "ready", ValueFrom: "output.status.readyReplicas"}}
	if _, err := s.Export(cueeval.NewLocal(0), live); err == nil || !strings.Contains(err.Error(), `output "ready"`) {
		t.Fatalf("a missing field: %v", err)
	}
}

// A value whose step was skipped skips the step taking it; a value
// exported but not read back yet (a cache behind the write) is waited
// for, never taken as missing; a step waiting for its values fails when
// its timeout passes, having applied nothing.
func TestAdvance_StepsWaitingForValues(t *testing.T) {
	f := stepsOf(t, `{steps: [
	  {name: producer, type: apply-object, if: 'status["producer"].phase == "x"', outputs: [{name: ip, valueFrom: output.spec.clusterIP}]},
	  {name: consumer, type: apply-object, inputs: [{from: ip, parameterKey: value.data.ip}]}]}`)
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	if st := r.Status.Steps; st[0].Phase != v1beta1.WorkflowStepSkipped || st[1].Phase != v1beta1.WorkflowStepSkipped || !strings.Contains(st[1].Message, "was skipped") || !r.Status.Finished || r.Status.Phase != v1beta1.WorkflowPhaseSucceeded {
		t.Fatalf("producer skipped: %+v", r.Status)
	}

	f = stepsOf(t, `{steps: [
	  {name: producer, type: apply-object, outputs: [{name: ip, valueFrom: output.spec.clusterIP}]},
	  {name: consumer, type: apply-object, timeout: 1m, inputs: [{from: ip, parameterKey: value.data.ip}]}]}`)
	r = Advance(f, nil, "v1", now)
	r.Finish(judge("producer"), now)
	// The next pass does not see the value (its tracker read is stale).
	r = AdvanceWith(f, r.Status, "v1", now.Add(time.Second), Data{})
	c := r.Status.Steps[1]
	if c.Phase != v1beta1.WorkflowStepPending || !strings.Contains(c.Message, "waiting for the value") || r.Requeue == 0 || r.Requeue > time.Second {
		t.Fatalf("value not read back: consumer %+v, requeue %v", c, r.Requeue)
	}
	r = AdvanceWith(f, r.Status, "v1", now.Add(2*time.Minute), Data{})
	c = r.Status.Steps[1]
	if c.Phase != v1beta1.WorkflowStepFailed || c.Reason != v1beta1.WorkflowStepReasonTimeout || r.Reached["consumer"] {
		t.Fatalf("timed out waiting: consumer %+v, reached %v", c, r.Reached)
	}
}
