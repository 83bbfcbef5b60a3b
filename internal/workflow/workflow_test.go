package workflow

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

func gate(duration string) Flow {
	wf := &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "staging", Type: v1beta1.WorkflowStepTypeDeploy}},
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "approve", Type: v1beta1.WorkflowStepTypeSuspend}},
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Type: v1beta1.WorkflowStepTypeDeploy}},
	}}
	if duration != "" {
		raw, _ := json.Marshal(map[string]string{"duration": duration})
		wf.Steps[1].Properties = &runtime.RawExtension{Raw: raw}
	}
	steps, err := bound(wf)
	if err != nil {
		panic(err)
	}
	return steps
}

// all judges every step the same.
func all(done bool, msg string) JudgeFunc {
	return func(string) (bool, string) { return done, msg }
}

// pass runs one pass that applies everything it reaches.
func pass(steps Flow, prev *v1beta1.WorkflowStatus, rev string, now time.Time) *Run {
	r := Advance(steps, prev, rev, now)
	r.Finish(all(true, ""), now)
	return r
}

func phases(st *v1beta1.WorkflowStatus) []string {
	var out []string
	for _, s := range st.Steps {
		out = append(out, s.Phase)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAdvance_AGateHoldsTheStepsAfterItUntilResumed(t *testing.T) {
	steps := gate("")
	if steps.Steps[2].Name != "deploy-2" {
		t.Fatalf("an unnamed deploy step is recorded as %q, want deploy-2 (placement's name)", steps.Steps[2].Name)
	}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "web-v1", now)
	if !r.Reached["staging"] || r.Reached["deploy-2"] || !r.Next {
		t.Fatalf("first pass: reached %v, next %v", r.Reached, r.Next)
	}
	r = pass(steps, r.Status, "web-v1", now.Add(time.Second))
	if r.Reached["deploy-2"] || !r.Status.Suspend || r.Status.Phase != v1beta1.WorkflowPhaseSuspending || r.Next || r.Requeue != 0 {
		t.Fatalf("at the gate: reached %v, status %+v", r.Reached, r.Status)
	}
	if got := phases(r.Status); !equal(got, []string{v1beta1.WorkflowStepSucceeded, v1beta1.WorkflowStepSuspending, v1beta1.WorkflowStepPending}) {
		t.Fatalf("step phases %v", got)
	}

	// Passes at the gate write nothing new: no status churn.
	again := pass(steps, r.Status, "web-v1", now.Add(time.Hour))
	if !equality.Semantic.DeepEqual(again.Status, r.Status) {
		t.Fatalf("a pass at the gate changed the status:\n%+v\n%+v", r.Status, again.Status)
	}

	resumed := r.Status.DeepCopy()
	resumed.Suspend = false
	r = pass(steps, resumed, "web-v1", now.Add(2*time.Hour))
	if !r.Reached["staging"] || !r.Reached["deploy-2"] || !r.Status.Finished || r.Status.Phase != v1beta1.WorkflowPhaseSucceeded || r.Status.Suspend {
		t.Fatalf("after the resume: reached %v, status %+v", r.Reached, r.Status)
	}
	done := pass(steps, r.Status, "web-v1", now.Add(3*time.Hour))
	if !equality.Semantic.DeepEqual(done.Status, r.Status) || !done.Reached["deploy-2"] {
		t.Fatalf("a finished run changed, or stopped applying: %+v", done.Status)
	}

	// Another revision starts over at the first step.
	r = pass(steps, done.Status, "web-v2", now.Add(4*time.Hour))
	if r.Reached["deploy-2"] || r.Status.Finished || r.Status.AppRevision != "web-v2" {
		t.Fatalf("a new revision: reached %v, status %+v", r.Reached, r.Status)
	}
}

func TestAdvance_ADurationResumesByItself(t *testing.T) {
	steps := gate("10m")
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "web-v1", now)
	r = pass(steps, r.Status, "web-v1", now)
	if !r.Status.Suspend || r.Requeue != 10*time.Minute {
		t.Fatalf("at the gate: requeue %s, status %+v", r.Requeue, r.Status)
	}
	r = pass(steps, r.Status, "web-v1", now.Add(4*time.Minute))
	if r.Requeue != 6*time.Minute || r.Reached["deploy-2"] {
		t.Fatalf("4 min later: requeue %s, reached %v", r.Requeue, r.Reached)
	}
	// Suspended by hand meanwhile: the duration no longer ends it.
	held := r.Status.DeepCopy()
	held.SuspendState = SuspendStateManual
	h := pass(steps, held, "web-v1", now.Add(10*time.Minute))
	if h.Reached["deploy-2"] || !h.Status.Suspend || h.Requeue != 0 {
		t.Fatalf("suspended by hand, after the duration: reached %v, requeue %s, status %+v", h.Reached, h.Requeue, h.Status)
	}
	r = pass(steps, r.Status, "web-v1", now.Add(10*time.Minute))
	if !r.Reached["deploy-2"] || r.Status.Suspend || !r.Status.Finished {
		t.Fatalf("after the duration: reached %v, status %+v", r.Reached, r.Status)
	}
}

func TestEncode_TheRecordedStepsReadBack(t *testing.T) {
	steps := gate("90s")
	got, err := Decode(Encode(steps))
	if err != nil || len(got.Steps) != 3 || got.Steps[1].Name != steps.Steps[1].Name || got.Steps[1].Duration != 90*time.Second {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if _, err := Decode("{"); err == nil {
		t.Error("a broken record decoded")
	}
}

func TestAdvance_SuspendTerminateAndFailedSteps(t *testing.T) {
	steps := Flow{Steps: []Step{{Name: "a", Type: v1beta1.WorkflowStepTypeDeploy}, {Name: "b", Type: v1beta1.WorkflowStepTypeDeploy}, {Name: "wait", Type: v1beta1.WorkflowStepTypeSuspend}}}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

	// A step that does not apply everything stays running, with why.
	r := Advance(steps, nil, "v1", now)
	r.Finish(all(false, "waiting"), now)
	if r.Status.Steps[0].Phase != v1beta1.WorkflowStepRunning || r.Status.Steps[0].Message != "waiting" || r.Next {
		t.Fatalf("a failed step: %+v", r.Status.Steps[0])
	}

	// Suspended by hand before b starts: b is not reached.
	r = pass(steps, r.Status, "v1", now)
	if r.Status.Steps[0].Phase != v1beta1.WorkflowStepSucceeded {
		t.Fatalf("a: %+v", r.Status.Steps[0])
	}
	held := r.Status.DeepCopy()
	held.Suspend = true
	r = pass(steps, held, "v1", now)
	if r.Reached["b"] || r.Status.Phase != v1beta1.WorkflowPhaseSuspending || !r.Reached["a"] {
		t.Fatalf("suspended by hand: reached %v, phase %s", r.Reached, r.Status.Phase)
	}

	// Terminated: nothing more is reached, what ran stays applied.
	ended := r.Status.DeepCopy()
	ended.Suspend, ended.Terminated = false, true
	r = pass(steps, ended, "v1", now)
	if r.Reached["b"] || !r.Reached["a"] || r.Status.Phase != v1beta1.WorkflowPhaseTerminated || r.Status.Finished {
		t.Fatalf("terminated: reached %v, status %+v", r.Reached, r.Status)
	}
}

func TestSteps_RefusesWhatItCannotRun(t *testing.T) {
	for name, wf := range map[string]*v1beta1.Workflow{
		"a duplicate name": {Steps: []v1beta1.WorkflowStep{
			{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "x", Type: v1beta1.WorkflowStepTypeDeploy}},
			{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "x", Type: v1beta1.WorkflowStepTypeSuspend}}}},
		"no deploy step": {Steps: []v1beta1.WorkflowStep{
			{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "w", Type: v1beta1.WorkflowStepTypeSuspend}}}},
		"another step type": {Steps: []v1beta1.WorkflowStep{
			{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "g", Type: "step-group"}},
			{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "w", Type: v1beta1.WorkflowStepTypeSuspend}}}},
	} {
		if _, err := bound(wf); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// status.workflow is read by KubeVela's tooling (vela status, vela
// workflow): every field Steward writes has KubeVela's JSON name
// (KubeVela's common.WorkflowStatus and StepStatus; contextBackend, the
// workflow context's ConfigMap, is the one field Steward does not use).
func TestStatus_HasKubeVelasFieldNames(t *testing.T) {
	steps := gate("1m")
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "web-v1", now)
	r = pass(steps, r.Status, "web-v1", now)
	r.Status.SuspendState, r.Status.EndTime = "x", r.Status.StartTime
	r.Status.Steps[0].Reason = "x"
	r.Status.Steps[0].SubStepsStatus = []v1beta1.StepStatus{{ID: "a"}}
	raw, err := json.Marshal(r.Status)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	kubevela := map[string]bool{"appRevision": true, "mode": true, "status": true, "message": true, "suspend": true,
		"suspendState": true, "terminated": true, "finished": true, "contextBackend": true, "steps": true,
		"startTime": true, "endTime": true}
	for k := range top {
		if !kubevela[k] {
			t.Errorf("status.workflow.%s is not a field of KubeVela's", k)
		}
	}
	for _, k := range []string{"appRevision", "mode", "status", "suspend", "terminated", "finished", "steps", "startTime"} {
		if _, ok := top[k]; !ok {
			t.Errorf("status.workflow.%s is missing", k)
		}
	}
	var stepsJSON []map[string]json.RawMessage
	if err := json.Unmarshal(top["steps"], &stepsJSON); err != nil {
		t.Fatal(err)
	}
	stepFields := map[string]bool{"id": true, "name": true, "type": true, "phase": true, "message": true, "reason": true,
		"firstExecuteTime": true, "lastExecuteTime": true, "subSteps": true}
	for k := range stepsJSON[0] {
		if !stepFields[k] {
			t.Errorf("status.workflow.steps[].%s is not a field of KubeVela's", k)
		}
	}
	for _, k := range []string{"id", "name", "type", "phase", "firstExecuteTime", "lastExecuteTime", "subSteps", "reason"} {
		if _, ok := stepsJSON[0][k]; !ok {
			t.Errorf("status.workflow.steps[].%s is missing", k)
		}
	}
}

// A deploy step with auto: false waits for a resume before it runs, as
// in KubeVela: the step itself is suspending, then runs once resumed,
// whether resumed as steward does (suspend: false) or as vela does (the
// step marked running too).
func TestAdvance_AutoFalsePausesBeforeTheStep(t *testing.T) {
	wf := &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "staging", Type: v1beta1.WorkflowStepTypeDeploy}},
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "prod", Type: v1beta1.WorkflowStepTypeDeploy, Properties: &runtime.RawExtension{Raw: []byte(`{"policies":["p"],"auto":false}`)}}},
	}}
	if !Gated(wf) {
		t.Fatal("a workflow with auto: false is not gated")
	}
	steps, err := bound(wf)
	if err != nil || !steps.Steps[1].Approve || steps.Steps[0].Approve {
		t.Fatalf("steps %+v, %v", steps, err)
	}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "web-v1", now)
	r = pass(steps, r.Status, "web-v1", now.Add(time.Second))
	if r.Reached["prod"] || !r.Status.Suspend || r.Status.Phase != v1beta1.WorkflowPhaseSuspending || r.Next {
		t.Fatalf("before prod: reached %v, status %+v", r.Reached, r.Status)
	}
	if got := phases(r.Status); !equal(got, []string{v1beta1.WorkflowStepSucceeded, v1beta1.WorkflowStepSuspending}) {
		t.Fatalf("step phases %v", got)
	}
	held := r.Status
	for name, resume := range map[string]func(*v1beta1.WorkflowStatus){
		"steward": func(st *v1beta1.WorkflowStatus) { st.Suspend = false },
		"vela":    func(st *v1beta1.WorkflowStatus) { st.Suspend = false; st.Steps[1].Phase = v1beta1.WorkflowStepRunning },
	} {
		t.Run(name, func(t *testing.T) {
			st := held.DeepCopy()
			resume(st)
			r := Advance(steps, st, "web-v1", now.Add(time.Minute))
			if !r.Reached["prod"] || r.dispatching() != "prod" || r.Status.Suspend {
				t.Fatalf("resumed: reached %v, status %+v", r.Reached, r.Status)
			}
			r.Finish(all(true, ""), now.Add(time.Minute))
			if !r.Status.Finished {
				t.Fatalf("not finished: %+v", r.Status)
			}
		})
	}
	if Gated(&v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{{WorkflowStepBase: v1beta1.WorkflowStepBase{Type: v1beta1.WorkflowStepTypeDeploy, Properties: &runtime.RawExtension{Raw: []byte(`{"auto":true}`)}}}}}) {
		t.Error("auto: true gates the workflow")
	}
}

func stepsOf(t *testing.T, wf string) Flow {
	t.Helper()
	w := &v1beta1.Workflow{}
	if err := yaml.Unmarshal([]byte(wf), w); err != nil {
		t.Fatal(err)
	}
	if !Gated(w) {
		t.Fatalf("not gated: %s", wf)
	}
	steps, err := bound(w)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// A deploy step that does not succeed within its timeout fails with
// reason Timeout; a step whose if reads that runs, a step without if is
// skipped, and the run ends failed and terminated, as KubeVela ends it.
func TestAdvance_ATimeoutFailsTheStepAndIfDecidesWhatRuns(t *testing.T) {
	steps := stepsOf(t, `{steps: [
  {name: staging, type: deploy, timeout: 1m},
  {name: fallback, type: deploy, if: "status.staging.timeout"},
  {name: prod, type: deploy},
  {name: report, type: deploy, if: always}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := Advance(steps, nil, "v1", now)
	if r.dispatching() != "staging" || r.Requeue != time.Minute {
		t.Fatalf("first pass: dispatching %q, requeue %v", r.Dispatching(), r.Requeue)
	}
	r.Finish(all(false, "waiting for health"), now)
	r = Advance(steps, r.Status, "v1", now.Add(40*time.Second))
	if r.dispatching() != "staging" || r.Requeue != 20*time.Second {
		t.Fatalf("before the timeout: dispatching %q, requeue %v", r.Dispatching(), r.Requeue)
	}
	r.Finish(all(false, "waiting for health"), now)

	r = Advance(steps, r.Status, "v1", now.Add(61*time.Second))
	st := r.Status.Steps[0]
	if st.Phase != v1beta1.WorkflowStepFailed || st.Reason != v1beta1.WorkflowStepReasonTimeout || r.dispatching() != "fallback" || !r.Reached["staging"] {
		t.Fatalf("after the timeout: staging %+v, dispatching %q, reached %v", st, r.Dispatching(), r.Reached)
	}
	r.Finish(all(true, ""), now.Add(61*time.Second))
	if r.Status.Finished || !r.Next {
		t.Fatalf("the run ended before its last steps: %+v", r.Status)
	}
	r = Advance(steps, r.Status, "v1", now.Add(62*time.Second))
	if got := phases(r.Status); !equal(got, []string{v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepSucceeded, v1beta1.WorkflowStepSkipped, v1beta1.WorkflowStepRunning}) || r.dispatching() != "report" {
		t.Fatalf("phases %v, dispatching %q", got, r.dispatching())
	}
	r.Finish(all(true, ""), now.Add(62*time.Second))
	w := r.Status
	if !w.Finished || !w.Terminated || w.Phase != v1beta1.WorkflowPhaseFailed || r.Succeeded() || r.Next {
		t.Fatalf("the run: %+v", w)
	}
	// A finished run reaches what ran, not what was skipped.
	r = Advance(steps, w, "v1", now.Add(time.Hour))
	if !r.Reached["staging"] || !r.Reached["fallback"] || r.Reached["prod"] || !r.Reached["report"] {
		t.Fatalf("reached %v", r.Reached)
	}
}

// A suspend step that is not resumed within its timeout fails: the run
// goes on without it, and only steps whose if allows it run.
func TestAdvance_ASuspendTimesOut(t *testing.T) {
	steps := stepsOf(t, `{steps: [
  {name: staging, type: deploy},
  {name: approve, type: suspend, timeout: 30s},
  {name: prod, type: deploy},
  {name: cleanup, type: deploy, if: 'status.approve.failed && !status.prod.succeeded'}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "v1", now)
	r = pass(steps, r.Status, "v1", now.Add(time.Second))
	if !r.Status.Suspend || r.Requeue != 30*time.Second {
		t.Fatalf("at the gate: %+v, requeue %v", r.Status, r.Requeue)
	}
	r = Advance(steps, r.Status, "v1", now.Add(32*time.Second))
	if r.Status.Suspend || r.dispatching() != "cleanup" || r.Reached["prod"] {
		t.Fatalf("after the timeout: %+v, dispatching %q", r.Status, r.dispatching())
	}
	if got := phases(r.Status); !equal(got, []string{v1beta1.WorkflowStepSucceeded, v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepSkipped, v1beta1.WorkflowStepRunning}) {
		t.Fatalf("phases %v", got)
	}
}

// An auto: false step's timeout counts from its approval: the approval
// wait does not fail it, and a step failed before it ran is not reached.
func TestAdvance_AutoFalseTimeoutCountsFromTheApproval(t *testing.T) {
	steps := stepsOf(t, `{steps: [{name: staging, type: deploy}, {name: prod, type: deploy, timeout: 1m, properties: {auto: false}}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "v1", now)
	r = pass(steps, r.Status, "v1", now.Add(time.Second))
	r = Advance(steps, r.Status, "v1", now.Add(time.Hour))
	if !r.Status.Suspend || r.Status.Steps[1].Phase != v1beta1.WorkflowStepSuspending || r.Reached["prod"] {
		t.Fatalf("an hour waiting for approval: %+v", r.Status)
	}
	st := r.Status.DeepCopy()
	st.Suspend = false
	r = Advance(steps, st, "v1", now.Add(2*time.Hour))
	if r.dispatching() != "prod" || r.Requeue != time.Minute {
		t.Fatalf("approved: dispatching %q, requeue %v", r.Dispatching(), r.Requeue)
	}
	r = Advance(steps, r.Status, "v1", now.Add(2*time.Hour+2*time.Minute))
	if r.Status.Steps[1].Phase != v1beta1.WorkflowStepFailed || !r.Reached["prod"] || !r.Status.Terminated {
		t.Fatalf("after its timeout: %+v, reached %v", r.Status, r.Reached)
	}
}

// An auto: false step resumed as vela does (suspend false, the step
// marked running) starts deploying then: its timeout counts from there.
func TestAdvance_AutoFalseResumedByVelaStartsItsTimeoutThen(t *testing.T) {
	steps := stepsOf(t, `{steps: [{name: staging, type: deploy}, {name: prod, type: deploy, timeout: 10m, properties: {auto: false}}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "v1", now)
	r = pass(steps, r.Status, "v1", now.Add(time.Second))
	st := r.Status.DeepCopy()
	st.Suspend, st.Steps[1].Phase = false, v1beta1.WorkflowStepRunning
	at := now.Add(time.Hour)
	r = Advance(steps, st, "v1", at)
	ss := r.Status.Steps[1]
	if r.dispatching() != "prod" || ss.Phase != v1beta1.WorkflowStepRunning || ss.Message != "" || !ss.LastExecuteTime.Time.Equal(at) || r.Requeue != 10*time.Minute {
		t.Fatalf("resumed by vela an hour later: %+v, requeue %v", ss, r.Requeue)
	}
	r.Finish(all(false, "waiting"), at)
	if r = Advance(steps, r.Status, "v1", at.Add(5*time.Minute)); r.Status.Steps[1].Phase != v1beta1.WorkflowStepRunning || r.Requeue != 5*time.Minute {
		t.Fatalf("5 minutes after the approval: %+v, requeue %v", r.Status.Steps[1], r.Requeue)
	}
}

// A suspend step ended by its duration, or resumed, before its timeout
// succeeds, even when the pass that sees it runs after the timeout; a
// run suspended by hand still wakes for a suspend step's timeout.
func TestAdvance_ASuspendEndedBeforeItsTimeoutSucceeds(t *testing.T) {
	steps := stepsOf(t, `{steps: [{name: staging, type: deploy}, {name: wait, type: suspend, timeout: 10m, properties: {duration: 5m}}, {name: prod, type: deploy}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(steps, nil, "v1", now)
	r = pass(steps, r.Status, "v1", now.Add(time.Second))
	if r.Requeue != 5*time.Minute {
		t.Fatalf("at the wait: requeue %v, want the duration", r.Requeue)
	}
	held := r.Status
	if late := Advance(steps, held, "v1", now.Add(11*time.Minute)); late.Status.Steps[1].Phase != v1beta1.WorkflowStepSucceeded || late.dispatching() != "prod" {
		t.Fatalf("a late pass: %+v", late.Status.Steps[1])
	}
	resumed := held.DeepCopy()
	resumed.Suspend = false
	if late := Advance(steps, resumed, "v1", now.Add(11*time.Minute)); late.Status.Steps[1].Phase != v1beta1.WorkflowStepSucceeded {
		t.Fatalf("resumed, seen late: %+v", late.Status.Steps[1])
	}
	manual := held.DeepCopy()
	manual.SuspendState = SuspendStateManual
	if r := Advance(steps, manual, "v1", now.Add(2*time.Minute)); r.Requeue != 8*time.Minute+time.Second || !r.Status.Suspend {
		t.Fatalf("suspended by hand: requeue %v, want the timeout's", r.Requeue)
	}
}

// dispatching names the steps a pass runs, for messages.
func (r *Run) dispatching() string { return strings.Join(r.Dispatching(), ",") }

// bound is Steps with the flow bound to an in-process evaluator, as the
// controller binds it to its pool.
func bound(wf *v1beta1.Workflow) (Flow, error) {
	f, err := Steps(wf)
	if err != nil {
		return Flow{}, err
	}
	f.Use(cueeval.NewLocal(0))
	return f, f.CheckConditions()
}

// TestCheckConditions_RefusesWhatDoesNotEvaluate: a condition is checked
// over the steps' status before any step runs, so that a typo is refused
// when the version is rendered, not found when the step is reached.
func TestCheckConditions_RefusesWhatDoesNotEvaluate(t *testing.T) {
	for _, tc := range []struct{ name, cond, want string }{
		{"a step that does not exist", "status.staging.succeeded", `step "prod": if "status.staging.succeeded": undefined field: staging`},
		{"inputs on a step that takes none", `inputs.x == "a"`, `reads inputs, and the step takes none`},
		{"not a boolean", "1", `as bool`},
		{"a step that exists", `status.staging.phase == "succeeded"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf := &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
				{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "staging", Type: v1beta1.WorkflowStepTypeDeploy}},
				{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "prod", Type: v1beta1.WorkflowStepTypeDeploy, If: tc.cond}},
			}}
			if tc.name != "a step that exists" {
				wf.Steps = wf.Steps[1:]
			}
			_, err := bound(wf)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
