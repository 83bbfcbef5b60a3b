package workflow

import (
	"slices"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// judge says which steps are done: those named, the others wait.
func judge(done ...string) JudgeFunc {
	return func(name string) (bool, string) {
		if slices.Contains(done, name) {
			return true, ""
		}
		return false, "waiting for health"
	}
}

func subPhases(st *v1beta1.WorkflowStatus, i int) []string {
	var out []string
	for _, s := range st.Steps[i].SubStepsStatus {
		out = append(out, s.Phase)
	}
	return out
}

func TestAdvance_AStepGroupRunsItsSubStepsTogether(t *testing.T) {
	f := stepsOf(t, `{steps: [
	  {name: regions, type: step-group, subSteps: [{name: eu, type: deploy}, {name: us, type: deploy}]},
	  {name: global, type: deploy}]}`)
	if f.Mode() != "StepByStep-DAG" {
		t.Fatalf("mode %q", f.Mode())
	}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	if got := r.Dispatching(); !equal(got, []string{"eu", "us"}) || r.Reached["global"] {
		t.Fatalf("first pass dispatches %v, reached %v: want both sub-steps at once", got, r.Reached)
	}
	r.Finish(judge("eu"), now)
	if got := subPhases(r.Status, 0); !equal(got, []string{v1beta1.WorkflowStepSucceeded, v1beta1.WorkflowStepRunning}) || r.Status.Steps[0].Phase != v1beta1.WorkflowStepRunning || r.Next {
		t.Fatalf("eu healthy, us not: sub-steps %v, group %s, next %v", got, r.Status.Steps[0].Phase, r.Next)
	}
	if r.Status.Steps[0].SubStepsStatus[1].Message != "waiting for health" {
		t.Fatalf("us says %q", r.Status.Steps[0].SubStepsStatus[1].Message)
	}

	// The next pass runs us again, not eu, and not global yet.
	r = Advance(f, r.Status, "v1", now.Add(time.Second))
	if got := r.Dispatching(); !equal(got, []string{"us"}) || !r.Reached["eu"] || r.Reached["global"] {
		t.Fatalf("second pass dispatches %v, reached %v", got, r.Reached)
	}
	r.Finish(judge("us"), now.Add(time.Second))
	if r.Status.Steps[0].Phase != v1beta1.WorkflowStepSucceeded || !r.Next {
		t.Fatalf("both healthy: group %s, next %v", r.Status.Steps[0].Phase, r.Next)
	}
	r = pass(f, r.Status, "v1", now.Add(2*time.Second))
	if !r.Reached["global"] || !r.Status.Finished || r.Status.Phase != v1beta1.WorkflowPhaseSucceeded {
		t.Fatalf("global: %+v", r.Status)
	}
}

func TestAdvance_SubStepsOneByOne(t *testing.T) {
	f := stepsOf(t, `{mode: {subSteps: StepByStep}, steps: [
	  {name: regions, type: step-group, subSteps: [{name: eu, type: deploy}, {name: us, type: deploy}]}]}`)
	if f.Mode() != "StepByStep-StepByStep" {
		t.Fatalf("mode %q", f.Mode())
	}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	if got := r.Dispatching(); !equal(got, []string{"eu"}) {
		t.Fatalf("dispatches %v, want eu alone", got)
	}
	r.Finish(judge("eu"), now)
	r = Advance(f, r.Status, "v1", now)
	if got := r.Dispatching(); !equal(got, []string{"us"}) {
		t.Fatalf("then dispatches %v, want us", got)
	}
}

func TestAdvance_DAGRunsStepsWhenWhatTheyDependOnHasRun(t *testing.T) {
	f := stepsOf(t, `{mode: {steps: DAG}, steps: [
	  {name: prod, type: deploy, dependsOn: [staging, db]},
	  {name: staging, type: deploy},
	  {name: db, type: apply-component, dependsOn: [staging]},
	  {name: docs, type: deploy}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	if got := r.Dispatching(); !equal(got, []string{"staging", "docs"}) {
		t.Fatalf("first pass dispatches %v, want staging and docs", got)
	}
	r.Finish(judge("staging", "docs"), now)
	r = Advance(f, r.Status, "v1", now)
	if got := r.Dispatching(); !equal(got, []string{"db"}) {
		t.Fatalf("second pass dispatches %v, want db", got)
	}
	// db times out... no timeout here: it fails by condition instead.
	r.Status.Steps[2].Phase, r.Status.Steps[2].Reason = v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepReasonTimeout
	r = Advance(f, r.Status, "v1", now)
	if r.Status.Steps[0].Phase != v1beta1.WorkflowStepSkipped || r.Reached["prod"] || !r.Status.Finished || r.Status.Phase != v1beta1.WorkflowPhaseFailed {
		t.Fatalf("prod depends on a failed step: %+v", r.Status)
	}
}

func TestAdvance_AGroupSuspendsAndTimesOut(t *testing.T) {
	f := stepsOf(t, `{steps: [
	  {name: g, type: step-group, timeout: 10m, subSteps: [
	    {name: approve, type: suspend},
	    {name: canary, type: deploy},
	    {name: rest, type: deploy, dependsOn: [approve]}]},
	  {name: cleanup, type: deploy, if: status.g.timeout}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(f, nil, "v1", now)
	if !r.Status.Suspend || r.Status.Phase != v1beta1.WorkflowPhaseSuspending || !r.Reached["canary"] || r.Reached["rest"] {
		t.Fatalf("a suspend sub-step holds the one after it, not its sibling: %+v reached %v", r.Status, r.Reached)
	}
	if r.Requeue != 10*time.Minute {
		t.Fatalf("requeue %v, want the group's timeout", r.Requeue)
	}
	// Resumed: rest runs.
	resumed := r.Status.DeepCopy()
	resumed.Suspend = false
	r = Advance(f, resumed, "v1", now.Add(time.Minute))
	if got := r.Dispatching(); !equal(got, []string{"rest"}) || r.Status.Suspend {
		t.Fatalf("resumed: dispatches %v, status %+v", got, r.Status)
	}
	r.Finish(judge(), now.Add(time.Minute))
	// rest never becomes healthy: the group times out, rest with it,
	// and the step that waits for that runs.
	r = Advance(f, r.Status, "v1", now.Add(11*time.Minute))
	g := r.Status.Steps[0]
	if g.Phase != v1beta1.WorkflowStepFailed || g.Reason != v1beta1.WorkflowStepReasonTimeout || g.SubStepsStatus[2].Phase != v1beta1.WorkflowStepFailed || !r.Reached["rest"] {
		t.Fatalf("timed out: %+v", g)
	}
	if got := r.Dispatching(); !equal(got, []string{"cleanup"}) {
		t.Fatalf("after the timeout dispatches %v, want cleanup", got)
	}
}

func TestAdvance_AGroupSkippedSkipsItsSubSteps(t *testing.T) {
	f := stepsOf(t, `{steps: [
	  {name: a, type: deploy},
	  {name: g, type: step-group, if: status.a.failed, subSteps: [{name: b, type: deploy}, {name: c, type: suspend}]},
	  {name: d, type: deploy}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := pass(f, nil, "v1", now)
	r = pass(f, r.Status, "v1", now)
	if !equal(subPhases(r.Status, 1), []string{v1beta1.WorkflowStepSkipped, v1beta1.WorkflowStepSkipped}) || r.Reached["b"] || !r.Reached["d"] {
		t.Fatalf("skipped group: %+v reached %v", r.Status.Steps[1], r.Reached)
	}
}

func TestAdvance_DependsOnAppWaitsForTheJudge(t *testing.T) {
	f := stepsOf(t, `{steps: [{name: db, type: depends-on-app, properties: {name: db}}, {name: api, type: deploy}]}`)
	if f.Steps[0].App != "/db" {
		t.Fatalf("app %q", f.Steps[0].App)
	}
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	if len(r.Dispatching()) != 0 || r.Reached["api"] {
		t.Fatalf("depends-on-app dispatches nothing: %v %v", r.Dispatching(), r.Reached)
	}
	r.Finish(JudgeFunc(func(string) (bool, string) { return false, "waiting for Application default/db" }), now)
	if !r.Waiting() || r.Status.Steps[0].Message != "waiting for Application default/db" {
		t.Fatalf("waiting: %+v", r.Status.Steps[0])
	}
	r = Advance(f, r.Status, "v1", now)
	r.Finish(judge("db"), now)
	if !r.Next {
		t.Fatal("db running: the next step runs at once")
	}
	if r = Advance(f, r.Status, "v1", now); !r.Reached["api"] {
		t.Fatalf("then api: %v", r.Reached)
	}
}

func TestDecode_ReadsStepsRecordedAsAList(t *testing.T) {
	f, err := Decode(`[{"name":"a","type":"deploy"},{"name":"wait","type":"suspend"}]`)
	if err != nil || len(f.Steps) != 2 || f.DAG || f.Steps[1].Type != v1beta1.WorkflowStepTypeSuspend {
		t.Fatalf("%+v %v", f, err)
	}
}

// A group that times out never applies a sub-step that waited for its
// approval; what a running sub-step applied stays kept.
func TestAdvance_AGroupTimeoutSkipsAnUnapprovedSubStep(t *testing.T) {
	f := stepsOf(t, `{steps: [{name: g, type: step-group, timeout: 10m, subSteps: [
	  {name: gated, type: deploy, properties: {auto: false}}, {name: other, type: deploy}]}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	r.Finish(judge(), now)
	if r.Reached["gated"] || !r.Reached["other"] || !r.Status.Suspend {
		t.Fatalf("first pass: reached %v, suspend %v", r.Reached, r.Status.Suspend)
	}
	for _, at := range []time.Duration{11 * time.Minute, 12 * time.Minute} {
		r = Advance(f, r.Status, "v1", now.Add(at))
		if r.Reached["gated"] || !r.Reached["other"] {
			t.Fatalf("after the timeout: reached %v", r.Reached)
		}
	}
	if got := subPhases(r.Status, 0); !equal(got, []string{v1beta1.WorkflowStepSkipped, v1beta1.WorkflowStepFailed}) || !r.Status.Finished || r.Status.Suspend {
		t.Fatalf("sub-steps %v, status %+v", got, r.Status)
	}
	if g := r.Status.Steps[0]; g.Reason == v1beta1.WorkflowStepReasonTimeout && g.Phase != v1beta1.WorkflowStepFailed {
		t.Fatalf("group %+v", g)
	}
}

// Terminating a run keeps what the step running then applied.
func TestAdvance_TerminatedKeepsTheRunningStep(t *testing.T) {
	f := stepsOf(t, `{steps: [{name: a, type: deploy}, {name: b, type: deploy}]}`)
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := Advance(f, nil, "v1", now)
	r.Finish(judge(), now)
	ended := r.Status.DeepCopy()
	ended.Terminated = true
	r = Advance(f, ended, "v1", now)
	if !r.Reached["a"] || r.Reached["b"] || r.Status.Phase != v1beta1.WorkflowPhaseTerminated || len(r.Dispatching()) != 0 {
		t.Fatalf("terminated: reached %v, %+v", r.Reached, r.Status)
	}
	// vela workflow terminate marks the running step failed.
	ended.Steps[0].Phase, ended.Steps[0].Reason = v1beta1.WorkflowStepFailed, "Terminate"
	if r = Advance(f, ended, "v1", now); !r.Reached["a"] {
		t.Fatalf("terminated by vela: reached %v", r.Reached)
	}
}
