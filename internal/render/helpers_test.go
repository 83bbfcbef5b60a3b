package render_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

// deployTemplate is a minimal component definition used by table tests.
const deployTemplate = `
parameter: {
	image: string
	replicas?: int
}
output: {
	apiVersion: "apps/v1"
	kind: "Deployment"
	spec: {
		if parameter.replicas != _|_ {
			replicas: parameter.replicas
		}
		template: spec: containers: [{name: context.name, image: parameter.image, env: [{name: "A", value: "1"}]}]
	}
}
`

func componentDef(name, tmpl string) *v1beta1.ComponentDefinition {
	return &v1beta1.ComponentDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vela-system", UID: types.UID("uid-c-" + name), ResourceVersion: "1"},
		Spec:       v1beta1.ComponentDefinitionSpec{Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: tmpl}}},
	}
}

func traitDef(name, tmpl string, stage v1beta1.TraitStage) *v1beta1.TraitDefinition {
	return &v1beta1.TraitDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vela-system", UID: types.UID("uid-t-" + name), ResourceVersion: "1"},
		Spec: v1beta1.TraitDefinitionSpec{Stage: stage,
			Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: tmpl}}},
	}
}

func props(t testing.TB, v any) *runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: b}
}

// app builds a one-component Application of type "deploy".
func app(t testing.TB, compProps any, traits ...v1beta1.ApplicationTrait) *v1beta1.Application {
	return &v1beta1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "prod", Labels: map[string]string{"team": "a"}},
		Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{{
			Name: "web", Type: "deploy", Properties: props(t, compProps), Traits: traits,
		}}},
	}
}

func trait(t testing.TB, typ string, p any) v1beta1.ApplicationTrait {
	return v1beta1.ApplicationTrait{Type: typ, Properties: props(t, p)}
}

// defsWith returns the "deploy" component plus the given traits.
func defsWith(traits ...*v1beta1.TraitDefinition) render.Definitions {
	d := render.Definitions{
		Components: map[string]*v1beta1.ComponentDefinition{"deploy": componentDef("deploy", deployTemplate)},
		Traits:     map[string]*v1beta1.TraitDefinition{},
	}
	for _, tr := range traits {
		d.Traits[tr.Name] = tr
	}
	return d
}

func mustRender(t *testing.T, a *v1beta1.Application, d render.Definitions) *render.Result {
	t.Helper()
	res, err := render.NewRenderer().Render(a, d, render.AppContext{AppRevision: "shop-v1", AppRevisionNum: 1})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return res
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func renderApp(a *v1beta1.Application, d render.Definitions) (*render.Result, error) {
	return render.NewRenderer().Render(a, d, render.AppContext{AppRevision: "shop-v1", AppRevisionNum: 1})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
