package application

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

func TestApplicationsUsingStep_WorkflowStepsAndSubSteps(t *testing.T) {
	app := func(ns, name string, steps ...v1beta1.WorkflowStep) *v1beta1.Application {
		a := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if steps != nil {
			a.Spec.Workflow = &v1beta1.Workflow{Steps: steps}
		}
		return a
	}
	step := func(typ string, subs ...string) v1beta1.WorkflowStep {
		s := v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: typ, Type: typ}}
		for _, sub := range subs {
			s.SubSteps = append(s.SubSteps, v1beta1.WorkflowStepBase{Name: sub, Type: sub})
		}
		return s
	}
	c := fake.NewClientBuilder().WithScheme(controllertest.Scheme()).WithObjects(
		app("team", "top", step("deploy"), step("notification")),
		app("team", "sub", step("step-group", "suspend", "notification")),
		app("team", "other", step("deploy"), step("webhook")),
		app("team", "none"),
		app("elsewhere", "far", step("notification")),
	).Build()
	r := &Reconciler{Client: c, Options: Options{SystemDefinitionNS: "vela-system"}}
	names := func(def *v1beta1.WorkflowStepDefinition) []string {
		var out []string
		for _, req := range r.applicationsUsingStep(t.Context(), def) {
			out = append(out, req.Namespace+"/"+req.Name)
		}
		slices.Sort(out)
		return out
	}
	def := func(ns, name string) *v1beta1.WorkflowStepDefinition {
		return &v1beta1.WorkflowStepDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	for _, tt := range []struct {
		def  *v1beta1.WorkflowStepDefinition
		want []string
	}{
		{def("team", "notification"), []string{"team/sub", "team/top"}},
		{def("vela-system", "notification"), []string{"elsewhere/far", "team/sub", "team/top"}},
		{def("team", "webhook"), []string{"team/other"}},
		{def("team", "unused"), nil},
		// Native types never read a definition.
		{def("vela-system", "deploy"), nil},
		{def("vela-system", "suspend"), nil},
	} {
		if got := names(tt.def); !slices.Equal(got, tt.want) {
			t.Errorf("%s/%s changed: enqueued %v, want %v", tt.def.Namespace, tt.def.Name, got, tt.want)
		}
	}
}
