package status

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// The status rules are pure functions of a pass's facts (facts.Pass):
// each condition has a table here, so that changing a rule is changing a
// line of a table, and none needs a control plane
// (go test -run 'Condition|Status' ./internal/controller/).

// statusApp is an Application at generation 2.
func statusApp() *v1beta1.Application {
	app := &v1beta1.Application{}
	app.Name, app.Namespace, app.Generation = "web", "team-a", 2
	return app
}

// versionTracker is a versioned tracker of generation gen.
func versionTracker(gen int64) *v1beta1.ResourceTracker {
	return &v1beta1.ResourceTracker{Spec: v1beta1.ResourceTrackerSpec{Type: v1beta1.ResourceTrackerTypeVersioned, ApplicationGeneration: gen}}
}

// want is a condition's expected status, reason and part of its message.
type want struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func checkCondition(t *testing.T, got v1beta1.Condition, w want) {
	t.Helper()
	if got.Status != w.status || got.Reason != w.reason || !strings.Contains(got.Message, w.message) {
		t.Errorf("got %s %s %q, want %s %s containing %q", got.Status, got.Reason, got.Message, w.status, w.reason, w.message)
	}
}

func failure(reason string) facts.Failure {
	return facts.Failure{Key: tracker.Key{Kind: "Deployment", Namespace: "team-a", Name: "web"}, Component: "web", Reason: reason, Err: errors.New("boom")}
}

func TestRenderedCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		s    facts.Pass
		want want
	}{
		"rendered": {facts.Pass{}, want{metav1.ConditionTrue, v1beta1.ReasonSucceeded, "generation 2 rendered"}},
		"properties refused": {facts.Pass{RenderReport: facts.RenderReport{RenderErr: &render.Error{Component: "web", Reason: v1beta1.ReasonInvalidProperties, Err: errors.New("image: want string")}}},
			want{metav1.ConditionFalse, v1beta1.ReasonInvalidProperties, `component "web": properties do not fit parameter: image: want string`}},
		"the version before stays": {facts.Pass{Trackers: facts.Trackers{Current: versionTracker(1)}, RenderReport: facts.RenderReport{RenderErr: &render.Error{Reason: v1beta1.ReasonEvaluationBudgetExceeded, Err: errors.New("exceeded the memory limit")}}},
			want{metav1.ConditionFalse, v1beta1.ReasonEvaluationBudgetExceeded, "exceeded the memory limit; generation 1 stays applied"}},
		"an error of another kind": {facts.Pass{RenderReport: facts.RenderReport{RenderErr: &facts.ReasonError{Reason: v1beta1.ReasonUnsupportedWorkflow, Err: errors.New("step type x")}}},
			want{metav1.ConditionFalse, v1beta1.ReasonUnsupportedWorkflow, "step type x"}},
		"an error without a reason": {facts.Pass{RenderReport: facts.RenderReport{RenderErr: errors.New("listing clusters")}}, want{metav1.ConditionFalse, v1beta1.ReasonRenderFailed, "listing clusters"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := tc.s
			s.App = statusApp()
			checkCondition(t, renderedCondition(&s), tc.want)
		})
	}
}

func TestDispatchedCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		s    facts.Pass
		want want
	}{
		"applied":             {facts.Pass{Keep: facts.KeepReport{Ran: true, Applied: 3}}, want{metav1.ConditionTrue, v1beta1.ReasonSucceeded, "3 objects applied"}},
		"not recorded":        {facts.Pass{RenderReport: facts.RenderReport{RecordErr: errors.New("etcd said no")}}, want{metav1.ConditionFalse, v1beta1.ReasonRecordFailed, "etcd said no"}},
		"identity":            {facts.Pass{Keep: facts.KeepReport{Ran: true}, Actor: facts.Actor{IdentityErr: errors.New("bad")}}, want{metav1.ConditionFalse, v1beta1.ReasonInvalidServiceAccount, "until the service account is fixed"}},
		"policies":            {facts.Pass{Keep: facts.KeepReport{Ran: true}, Policies: facts.Policies{RulesErr: errors.New("bad")}}, want{metav1.ConditionFalse, v1beta1.ReasonInvalidPolicy, "until the policies are fixed"}},
		"not rendered":        {facts.Pass{Keep: facts.KeepReport{Ran: true}, RenderReport: facts.RenderReport{RenderErr: errors.New("bad")}}, want{metav1.ConditionFalse, v1beta1.ReasonRenderFailed, "generation 2 was not rendered"}},
		"an object failed":    {facts.Pass{Keep: facts.KeepReport{Ran: true, Failures: []facts.Failure{failure(v1beta1.ReasonApplyFailed)}}}, want{metav1.ConditionFalse, v1beta1.ReasonApplyFailed, `component "web": boom`}},
		"a kind not served":   {facts.Pass{Keep: facts.KeepReport{Ran: true, Failures: []facts.Failure{failure(v1beta1.ReasonKindNotFound)}}}, want{metav1.ConditionFalse, v1beta1.ReasonKindNotFound, "install the CustomResourceDefinition"}},
		"waiting for another": {facts.Pass{Keep: facts.KeepReport{Ran: true, Waiting: []string{"api"}, UnhealthyDeps: []string{"db"}}}, want{metav1.ConditionFalse, v1beta1.ReasonDependencyNotReady, "waiting for dependencies of components api: db"}},
		"a workflow it cannot run": {facts.Pass{Keep: facts.KeepReport{Ran: true}, FlowErr: errors.New("no steps recorded")},
			want{metav1.ConditionFalse, v1beta1.ReasonUnsupportedWorkflow, "no steps recorded; nothing of the steps is applied"}},
		"nothing recorded yet": {facts.Pass{}, want{metav1.ConditionFalse, v1beta1.ReasonProgressing, "nothing recorded yet"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := tc.s
			s.App = statusApp()
			checkCondition(t, dispatchedCondition(&s), tc.want)
		})
	}
}

func TestStateKeptCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		s    facts.Pass
		want want
	}{
		"kept":           {facts.Pass{Keep: facts.KeepReport{Ran: true}}, want{metav1.ConditionTrue, v1beta1.ReasonSucceeded, "every recorded object matches"}},
		"drift reported": {facts.Pass{Keep: facts.KeepReport{Ran: true, Drifted: []facts.Change{{Key: tracker.Key{Kind: "Deployment", Name: "web"}}}}}, want{metav1.ConditionFalse, v1beta1.ReasonDriftDetected, "drift-mode=report"}},
		"identity":       {facts.Pass{Actor: facts.Actor{IdentityErr: errors.New("bad")}}, want{metav1.ConditionFalse, v1beta1.ReasonInvalidServiceAccount, "service account is invalid"}},
		"policies":       {facts.Pass{Policies: facts.Policies{RulesErr: errors.New("bad")}}, want{metav1.ConditionFalse, v1beta1.ReasonInvalidPolicy, "policies are invalid"}},
		"not yet":        {facts.Pass{}, want{metav1.ConditionFalse, v1beta1.ReasonStateKeepFailed, "nothing recorded yet"}},
		"failures":       {facts.Pass{Keep: facts.KeepReport{Ran: true, Failures: []facts.Failure{failure(v1beta1.ReasonApplyFailed)}}}, want{metav1.ConditionFalse, v1beta1.ReasonStateKeepFailed, "not every recorded object"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := tc.s
			s.App = statusApp()
			checkCondition(t, stateKeptCondition(&s), tc.want)
		})
	}
}

func TestHealthyCondition(t *testing.T) {
	sick := facts.ComponentHealth{Health: render.Health{Message: "ready 0/2"}}
	for name, tc := range map[string]struct {
		health map[string]facts.ComponentHealth
		want   want
	}{
		"not evaluated": {nil, want{metav1.ConditionUnknown, v1beta1.ReasonProgressing, "nothing applied yet"}},
		"healthy":       {map[string]facts.ComponentHealth{facts.HealthKey("web", "", ""): {Health: render.Health{Healthy: true}}}, want{metav1.ConditionTrue, v1beta1.ReasonSucceeded, "every component is healthy"}},
		"unhealthy, named with its cluster and step": {map[string]facts.ComponentHealth{facts.HealthKey("web", "eu-1", "prod"): sick},
			want{metav1.ConditionFalse, v1beta1.ReasonUnhealthy, `component "web" in cluster "eu-1" (workflow step "prod"): ready 0/2`}},
		"health not evaluated within the budget": {map[string]facts.ComponentHealth{
			facts.HealthKey("api", "", ""): sick,
			facts.HealthKey("web", "", ""): {Health: render.Health{Message: "exceeded the time limit", Reason: v1beta1.ReasonEvaluationBudgetExceeded}},
		}, want{metav1.ConditionFalse, v1beta1.ReasonEvaluationBudgetExceeded, `component "web": exceeded the time limit`}},
	} {
		t.Run(name, func(t *testing.T) {
			s := &facts.Pass{App: statusApp(), HealthReport: facts.HealthReport{Health: tc.health}}
			checkCondition(t, healthyCondition(s), tc.want)
		})
	}
}

func TestGarbageCollectedCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		gc   facts.GCReport
		want want
	}{
		"collected": {facts.GCReport{}, want{metav1.ConditionTrue, v1beta1.ReasonSucceeded, "nothing left to delete"}},
		"refused":   {facts.GCReport{Failures: []facts.Failure{failure(v1beta1.ReasonDeleteFailed)}}, want{metav1.ConditionFalse, v1beta1.ReasonDeleteFailed, "deletion is retried"}},
		"going":     {facts.GCReport{Pending: []tracker.Key{{Kind: "Service", Name: "old"}}}, want{metav1.ConditionFalse, v1beta1.ReasonProgressing, "waiting for 1 objects to go"}},
		"held":      {facts.GCReport{Skipped: true}, want{metav1.ConditionUnknown, v1beta1.ReasonProgressing, "before deleting what older versions created"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := &facts.Pass{App: statusApp(), GC: tc.gc}
			checkCondition(t, garbageCollectedCondition(s), tc.want)
		})
	}
}

func TestReadyCondition(t *testing.T) {
	ok := func(typ string) v1beta1.Condition {
		return v1beta1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded}
	}
	bad := v1beta1.Condition{Type: v1beta1.ConditionDispatched, Status: metav1.ConditionFalse, Reason: v1beta1.ReasonApplyFailed, Message: "boom"}
	for name, tc := range map[string]struct {
		conds []v1beta1.Condition
		want  want
	}{
		"all true": {[]v1beta1.Condition{ok(v1beta1.ConditionRendered), ok(v1beta1.ConditionDispatched), ok(v1beta1.ConditionStateKept), ok(v1beta1.ConditionHealthy)},
			want{metav1.ConditionTrue, v1beta1.ReasonSucceeded, "rendered, dispatched, kept and healthy"}},
		"the first that is not": {[]v1beta1.Condition{ok(v1beta1.ConditionRendered), bad, ok(v1beta1.ConditionStateKept), ok(v1beta1.ConditionHealthy)},
			want{metav1.ConditionFalse, v1beta1.ReasonApplyFailed, "boom"}},
		"garbage collection is not readiness": {[]v1beta1.Condition{ok(v1beta1.ConditionRendered), ok(v1beta1.ConditionDispatched), ok(v1beta1.ConditionStateKept), ok(v1beta1.ConditionHealthy),
			{Type: v1beta1.ConditionGarbageCollected, Status: metav1.ConditionFalse, Reason: v1beta1.ReasonDeleteFailed}},
			want{metav1.ConditionTrue, v1beta1.ReasonSucceeded, ""}},
	} {
		t.Run(name, func(t *testing.T) { checkCondition(t, readyCondition(tc.conds), tc.want) })
	}
}

func TestStatus_PhaseOf(t *testing.T) {
	c := func(typ string, status metav1.ConditionStatus, reason string) v1beta1.Condition {
		return v1beta1.Condition{Type: typ, Status: status, Reason: reason}
	}
	for want, conds := range map[v1beta1.ApplicationPhase][]v1beta1.Condition{
		v1beta1.ApplicationRunning:            {c(v1beta1.ConditionReady, metav1.ConditionTrue, "")},
		v1beta1.ApplicationRendering:          {c(v1beta1.ConditionRendered, metav1.ConditionFalse, v1beta1.ReasonRenderFailed)},
		v1beta1.ApplicationWorkflowSuspending: {c(v1beta1.ConditionDispatched, metav1.ConditionFalse, v1beta1.ReasonWorkflowSuspended)},
		v1beta1.ApplicationWorkflowTerminated: {c(v1beta1.ConditionDispatched, metav1.ConditionFalse, v1beta1.ReasonWorkflowTerminated)},
		v1beta1.ApplicationWorkflowFailed:     {c(v1beta1.ConditionDispatched, metav1.ConditionFalse, v1beta1.ReasonApplyFailed)},
		v1beta1.ApplicationUnhealthy:          {c(v1beta1.ConditionHealthy, metav1.ConditionFalse, v1beta1.ReasonUnhealthy)},
	} {
		if got := PhaseOf(conds); got != want {
			t.Errorf("phase of %v: %q, want %q", conds, got, want)
		}
	}
	// The components render but the workflow cannot run: the run failed.
	if got := PhaseOf([]v1beta1.Condition{c(v1beta1.ConditionRendered, metav1.ConditionFalse, v1beta1.ReasonUnsupportedWorkflow)}); got != v1beta1.ApplicationWorkflowFailed {
		t.Errorf("a workflow that cannot run: %q", got)
	}
	// A render that failed for good (a Helm chart, after its retries) ended the workflow.
	if got := PhaseOf([]v1beta1.Condition{c(v1beta1.ConditionRendered, metav1.ConditionFalse, v1beta1.ReasonWorkflowFailed)}); got != v1beta1.ApplicationWorkflowFailed {
		t.Errorf("a render that ended the workflow: %q", got)
	}
	if got := PhaseOf([]v1beta1.Condition{c(v1beta1.ConditionDispatched, metav1.ConditionFalse, v1beta1.ReasonWorkflowRunning)}); got != v1beta1.ApplicationRunningWorkflow {
		t.Errorf("a running workflow: %q", got)
	}
}

// TestComputeStatus_Deleting: a deletion pass shows the deletion once,
// and leaves the other conditions as the last pass left them.
func TestComputeStatus_Deleting(t *testing.T) {
	app := statusApp()
	rendered := v1beta1.Condition{Type: v1beta1.ConditionRendered, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded}
	app.Status.Conditions = []v1beta1.Condition{rendered}
	s := &facts.Pass{App: app, State: facts.State{Deleting: true}}
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	Compute(s, start)
	ready := findCondition(app.Status.Conditions, v1beta1.ConditionReady)
	if app.Status.Phase != v1beta1.ApplicationDeleting || ready == nil || ready.Reason != v1beta1.ReasonDeleting || ready.Status != metav1.ConditionFalse {
		t.Fatalf("phase %q, ready %+v", app.Status.Phase, ready)
	}
	if r := findCondition(app.Status.Conditions, v1beta1.ConditionRendered); r == nil || r.Status != metav1.ConditionTrue {
		t.Errorf("rendered changed: %+v", r)
	}
	Compute(s, start.Add(time.Minute))
	if again := findCondition(app.Status.Conditions, v1beta1.ConditionReady); !again.LastTransitionTime.Equal(&ready.LastTransitionTime) {
		t.Errorf("a later deletion pass moved Ready's transition time")
	}
}

func TestWorkflowCondition(t *testing.T) {
	run := func(phase string, steps ...v1beta1.WorkflowStepStatus) *workflow.Run {
		return &workflow.Run{Status: &v1beta1.WorkflowStatus{Phase: phase, Message: "the message", Steps: steps}}
	}
	step := func(name, phase, msg string) v1beta1.WorkflowStepStatus {
		return v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{Name: name, Phase: phase, Message: msg}}
	}
	for name, tc := range map[string]struct {
		s      facts.Pass
		reason string
		msg    string
	}{
		"no workflow":      {facts.Pass{}, "", ""},
		"cannot run":       {facts.Pass{FlowErr: errors.New("stale CRD")}, v1beta1.ReasonUnsupportedWorkflow, "stale CRD; nothing of the steps is applied"},
		"failed":           {facts.Pass{Flow: run(v1beta1.WorkflowPhaseFailed)}, v1beta1.ReasonWorkflowFailed, "steward workflow restart web"},
		"suspended":        {facts.Pass{Flow: run(v1beta1.WorkflowPhaseSuspending)}, v1beta1.ReasonWorkflowSuspended, "steward workflow resume web"},
		"terminated":       {facts.Pass{Flow: run(v1beta1.WorkflowPhaseTerminated)}, v1beta1.ReasonWorkflowTerminated, "the message"},
		"a step running":   {facts.Pass{Flow: run(v1beta1.WorkflowPhaseExecuting, step("a", v1beta1.WorkflowStepSucceeded, ""), step("b", v1beta1.WorkflowStepRunning, "waiting for health"))}, v1beta1.ReasonWorkflowRunning, `running workflow step "b": waiting for health`},
		"the next pending": {facts.Pass{Flow: run(v1beta1.WorkflowPhaseExecuting, step("a", v1beta1.WorkflowStepSucceeded, ""), step("b", v1beta1.WorkflowStepPending, ""), step("c", v1beta1.WorkflowStepPending, ""))}, v1beta1.ReasonWorkflowRunning, `running workflow step "b"`},
	} {
		t.Run(name, func(t *testing.T) {
			s := tc.s
			s.App = statusApp()
			reason, msg, ok := workflowCondition(&s)
			if reason != tc.reason || !strings.Contains(msg, tc.msg) || ok != (tc.reason != "") {
				t.Errorf("got %q %q %v, want %q containing %q", reason, msg, ok, tc.reason, tc.msg)
			}
		})
	}
}

func findCondition(conds []v1beta1.Condition, typ string) *v1beta1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
