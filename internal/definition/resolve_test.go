package definition

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestResolve_AppNamespaceFirstThenSystem(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	comp := func(ns, name, marker string) *v1beta1.ComponentDefinition {
		return &v1beta1.ComponentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{"marker": marker}}}
	}
	trait := &v1beta1.TraitDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: "vela-system", Name: "scaler"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		comp("vela-system", "webservice", "system"),
		comp("team", "webservice", "team"),
		comp("vela-system", "worker", "system"),
		trait,
	).Build()
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a"}, Spec: v1beta1.ApplicationSpec{
		Components: []v1beta1.ApplicationComponent{
			{Name: "web", Type: "webservice", Traits: []v1beta1.ApplicationTrait{{Type: "scaler"}, {Type: "missing"}}},
			{Name: "bg", Type: "worker"},
			{Name: "x", Type: "unknown"},
		},
	}}
	defs, err := Resolve(context.Background(), c, app, "vela-system")
	if err != nil {
		t.Fatal(err)
	}
	if got := defs.Components["webservice"].Annotations["marker"]; got != "team" {
		t.Errorf("webservice from %q, want the app's namespace to win", got)
	}
	if got := defs.Components["worker"].Annotations["marker"]; got != "system" {
		t.Errorf("worker from %q, want the system namespace", got)
	}
	if defs.Traits["scaler"] == nil {
		t.Error("trait not found in the system namespace")
	}
	if _, ok := defs.Components["unknown"]; ok {
		t.Error("an unknown type got a definition")
	}
	if _, ok := defs.Traits["missing"]; ok {
		t.Error("an unknown trait got a definition")
	}
}

func TestResolveSteps_AppNamespaceFirstThenSystem(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	step := func(ns, name string) *v1beta1.WorkflowStepDefinition {
		return &v1beta1.WorkflowStepDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{"marker": ns}}}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		step("vela-system", "notification"),
		step("team", "notification"),
		step("vela-system", "apply-deployment"),
		step("vela-system", "webhook"),
		step("other", "export2config"),
		// KubeVela installs definitions named after the native types.
		step("vela-system", "deploy"),
		step("vela-system", "suspend"),
		step("vela-system", "step-group"),
	).Build()
	base := func(typ string) v1beta1.WorkflowStepBase { return v1beta1.WorkflowStepBase{Name: typ, Type: typ} }
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a"}, Spec: v1beta1.ApplicationSpec{
		Workflow: &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
			{WorkflowStepBase: base("deploy")},
			{WorkflowStepBase: base("notification")},
			{WorkflowStepBase: base("step-group"), SubSteps: []v1beta1.WorkflowStepBase{
				base("apply-deployment"), base("suspend"), base("missing"), base("notification"),
			}},
			{WorkflowStepBase: base("export2config")},
			{WorkflowStepBase: base("webhook")},
		}},
	}}
	steps, err := ResolveSteps(context.Background(), c, app, "vela-system")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"notification": "team", "apply-deployment": "vela-system", "webhook": "vela-system"}
	for typ, ns := range want {
		d := steps[typ]
		if d == nil {
			t.Errorf("step type %q: no definition, want the one of %s", typ, ns)
			continue
		}
		if got := d.Annotations["marker"]; got != ns {
			t.Errorf("step type %q: definition of %s, want %s", typ, got, ns)
		}
	}
	for _, typ := range []string{"deploy", "suspend", "step-group", "missing", "export2config"} {
		if _, ok := steps[typ]; ok {
			t.Errorf("step type %q got a definition; want none (native, unknown, or in another namespace)", typ)
		}
	}
	if len(steps) != len(want) {
		t.Errorf("got %d definitions, want %d", len(steps), len(want))
	}

	none, err := ResolveSteps(context.Background(), c, &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "b"}}, "vela-system")
	if err != nil || len(none) != 0 {
		t.Errorf("an Application without a workflow: got %v, %v; want no definitions", none, err)
	}
}
