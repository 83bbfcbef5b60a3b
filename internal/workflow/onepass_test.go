package workflow

import (
	"strings"
	"testing"

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
