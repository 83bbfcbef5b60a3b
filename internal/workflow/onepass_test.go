package workflow

import (
	"strings"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The steps reported for a version delivered in one pass are those
// KubeVela generates (pkg/workflow/step/generator.go).
func TestOnePass_StepsKubeVelaGenerates(t *testing.T) {
	comps := []v1beta1.ApplicationComponent{{Name: "db", Type: "worker"}, {Name: "api", Type: "webservice", DependsOn: []string{"db"}}}
	pol := func(name, typ string) v1beta1.AppPolicy { return v1beta1.AppPolicy{Name: name, Type: typ} }
	for name, tt := range map[string]struct {
		app  v1beta1.ApplicationSpec
		want string
		mode string
	}{
		"one apply-component step per component": {app: v1beta1.ApplicationSpec{Components: comps},
			want: "db:apply-component api:apply-component<db", mode: "DAG-DAG"},
		"an override policy: one deploy step": {app: v1beta1.ApplicationSpec{Components: comps, Policies: []v1beta1.AppPolicy{pol("o", "override")}},
			want: "deploy:deploy", mode: "DAG-DAG"},
		"a topology policy": {app: v1beta1.ApplicationSpec{Components: comps, Policies: []v1beta1.AppPolicy{pol("eu", "topology")}},
			want: "deploy-eu:deploy", mode: "DAG-DAG"},
		"the workflow's own steps": {app: v1beta1.ApplicationSpec{Components: comps, Workflow: &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
			{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "all", Type: "deploy"}}}}},
			want: "all:deploy", mode: "StepByStep-DAG"},
	} {
		t.Run(name, func(t *testing.T) {
			steps, mode := OnePass(&v1beta1.Application{Spec: tt.app})
			var got []string
			for _, s := range steps {
				g := s.Name + ":" + s.Type
				if len(s.DependsOn) > 0 {
					g += "<" + strings.Join(s.DependsOn, ",")
				}
				got = append(got, g)
			}
			if strings.Join(got, " ") != tt.want || mode != tt.mode {
				t.Fatalf("steps %q mode %q, want %q %q", got, mode, tt.want, tt.mode)
			}
		})
	}
}

// phasesOf is a run's steps as "name=phase[: message]", in order.
func phasesOf(st *v1beta1.WorkflowStatus) string {
	var out []string
	for _, s := range st.Steps {
		g := s.Name + "=" + s.Phase
		if s.Message != "" {
			g += ": " + s.Message
		}
		out = append(out, g)
	}
	return strings.Join(out, " | ")
}

// Each step of a one-pass run takes the worst phase of the components it
// delivers, from what the pass found of them.
func TestOnePassRun_StepPhasesFromTheDelivery(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	perComponent := &v1beta1.Application{Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{
		{Name: "db", Type: "worker"}, {Name: "api", Type: "webservice", DependsOn: []string{"db"}}}}}
	oneDeploy := perComponent.DeepCopy()
	oneDeploy.Spec.Policies = []v1beta1.AppPolicy{{Name: "o", Type: "override"}}
	for name, tt := range map[string]struct {
		app      *v1beta1.Application
		d        Delivery
		want     string
		finished bool
	}{
		"nothing kept yet: pending": {app: perComponent, d: Delivery{},
			want: "db=pending | api=pending"},
		"a failed object fails its component's step": {app: perComponent,
			d:    Delivery{Kept: true, Failed: []Note{{Component: "db", Message: "forbidden"}}, Waiting: []string{"api"}},
			want: "db=failed: forbidden | api=pending: waiting for the components it depends on"},
		"a failure of no component is no step's": {app: perComponent,
			d:    Delivery{Kept: true, Failed: []Note{{Message: "tracker"}}},
			want: "db=succeeded | api=succeeded", finished: true},
		"unhealthy: running, messages sorted, empty ones dropped": {app: perComponent,
			d:    Delivery{Kept: true, Unhealthy: []Note{{Component: "db", Message: "ready 0/2"}, {Component: "db"}, {Component: "api", Message: "ready 1/3"}}},
			want: "db=running: waiting for components to become healthy: ready 0/2 | api=running: waiting for components to become healthy: ready 1/3"},
		"a deploy step is judged by every component": {app: oneDeploy,
			d:    Delivery{Kept: true, Unhealthy: []Note{{Component: "db", Message: "b"}, {Component: "api", Message: "a"}}},
			want: "deploy=running: waiting for components to become healthy: a; b"},
		"every component healthy: the run succeeded": {app: oneDeploy, d: Delivery{Kept: true},
			want: "deploy=succeeded", finished: true},
	} {
		t.Run(name, func(t *testing.T) {
			r := OnePassRun(tt.app, nil, "web-v1", now)
			if r.Gated() {
				t.Fatal("a one-pass run is gated")
			}
			r.Finish(deliver(tt.d), now)
			st := r.Report()
			if got := phasesOf(st); got != tt.want {
				t.Fatalf("steps %q, want %q", got, tt.want)
			}
			if st.Finished != tt.finished || st.AppRevision != "web-v1" || !st.StartTime.Time.Equal(now) {
				t.Fatalf("run %+v", st)
			}
			if len(r.Dispatching()) > 0 || r.Waiting() || r.Next || r.Requeue != 0 || r.Started {
				t.Fatalf("a one-pass run drives the pass: %+v", r)
			}
		})
	}
}

// deliver is a Judge of one-pass runs.
type deliver Delivery

func (d deliver) Done(string) (bool, string) { return false, "not a gated run" }
func (d deliver) Delivery() Delivery         { return Delivery(d) }

// A pass that changes no phase changes no time; a finished run of the
// revision stays as it is.
func TestOnePassRun_TimesCarryOverAndAFinishedRunStays(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	app := &v1beta1.Application{Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{{Name: "db", Type: "worker"}}}}
	sick := Delivery{Kept: true, Unhealthy: []Note{{Component: "db", Message: "ready 0/2"}}}

	r := OnePassRun(app, nil, "web-v1", start)
	r.Finish(deliver(sick), start)
	first := r.Report()

	later := start.Add(time.Minute)
	r = OnePassRun(app, first, "web-v1", later)
	r.Finish(deliver(sick), later)
	if got := r.Report(); !got.StartTime.Equal(&first.StartTime) || !got.Steps[0].LastExecuteTime.Equal(&first.Steps[0].LastExecuteTime) {
		t.Fatalf("times moved without a change: %+v", got)
	}

	r = OnePassRun(app, first, "web-v1", later)
	r.Finish(deliver(Delivery{Kept: true}), later)
	done := r.Report()
	if !done.Finished || !done.Steps[0].FirstExecuteTime.Equal(&first.Steps[0].FirstExecuteTime) || !done.Steps[0].LastExecuteTime.Time.Equal(later) {
		t.Fatalf("succeeded run %+v", done)
	}

	r = OnePassRun(app, done, "web-v1", later.Add(time.Hour))
	r.Finish(deliver(sick), later.Add(time.Hour))
	if r.Report() != done {
		t.Fatalf("a finished run was judged again: %+v", r.Report())
	}
	r = OnePassRun(app, done, "web-v2", later)
	if got := r.Report(); got.AppRevision != "web-v2" || got.Finished || !got.StartTime.Time.Equal(later) {
		t.Fatalf("a new revision did not start over: %+v", got)
	}
}
