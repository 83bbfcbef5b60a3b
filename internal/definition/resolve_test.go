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
