package render_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

func extension(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

// legacyComponent is a ComponentDefinition written before KubeVela v1.0:
// its template in spec.extension.template.
func legacyComponent(name, tmpl string) *v1beta1.ComponentDefinition {
	def := componentDef(name, "")
	def.Spec.Schematic = nil
	def.Spec.Extension = extension(`{"template":` + toJSONString(tmpl) + `}`)
	return def
}

func toJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestDefinitionTemplate_ReadsTheSchematicElseTheExtension(t *testing.T) {
	cue := func(s string) *v1beta1.Schematic { return &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: s}} }
	tests := []struct {
		name      string
		schematic *v1beta1.Schematic
		ext       *runtime.RawExtension
		want      render.Template
		err       bool
	}{
		{"schematic", cue("a: 1"), extension(`{"template":"b: 2"}`), render.Template{Text: "a: 1", Field: render.FieldSchematicTemplate}, false},
		{"extension", nil, extension(`{"template":"b: 2"}`), render.Template{Text: "b: 2", Field: render.FieldExtensionTemplate}, false},
		{"empty schematic falls back", cue(""), extension(`{"template":"b: 2"}`), render.Template{Text: "b: 2", Field: render.FieldExtensionTemplate}, false},
		{"empty schematic alone", cue(""), nil, render.Template{Field: render.FieldSchematicTemplate}, false},
		{"template not a string", nil, extension(`{"template":{"a":1}}`), render.Template{}, false},
		{"nothing", nil, nil, render.Template{}, false},
		{"extension not an object", nil, extension(`"template"`), render.Template{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &v1beta1.ComponentDefinition{Spec: v1beta1.ComponentDefinitionSpec{Schematic: tt.schematic, Extension: tt.ext}}
			got, err := render.ComponentTemplate(c)
			if got != tt.want || (err != nil) != tt.err {
				t.Errorf("component: got %+v, %v; want %+v, error %v", got, err, tt.want, tt.err)
			}
			tr := &v1beta1.TraitDefinition{Spec: v1beta1.TraitDefinitionSpec{Schematic: tt.schematic, Extension: tt.ext}}
			if got, err := render.TraitTemplate(tr); got != tt.want || (err != nil) != tt.err {
				t.Errorf("trait: got %+v, %v; want %+v, error %v", got, err, tt.want, tt.err)
			}
		})
	}
	if got := render.IgnoredExtensionFields(extension(`{"template":"x","healthPolicy":"isHealth: true","customStatus":"message: \"m\""}`)); !reflect.DeepEqual(got, []string{"healthPolicy", "customStatus"}) {
		t.Errorf("ignored %v", got)
	}
	if got := render.IgnoredExtensionFields(extension(`{"template":"x"}`)); got != nil {
		t.Errorf("ignored %v", got)
	}
}

// TestRender_LegacyExtensionTemplates: a component and a trait whose
// templates are in spec.extension.template render as KubeVela renders
// them.
func TestRender_LegacyExtensionTemplates(t *testing.T) {
	d := defsWith()
	d.Components["deploy"] = legacyComponent("deploy", deployTemplate)
	scaler := traitDef("scaler", "", "")
	scaler.Spec.Schematic = nil
	scaler.Spec.Extension = extension(`{"template":"patch: spec: replicas: parameter.replicas\nparameter: replicas: *1 | int\n"}`)
	d.Traits["scaler"] = scaler
	res := mustRender(t, app(t, map[string]any{"image": "nginx"}, trait(t, "scaler", map[string]any{"replicas": 3})), d)
	w := res.Components[0].Workload
	if w.GetKind() != "Deployment" {
		t.Fatalf("workload %v", w)
	}
	if n, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas"); n != 3 {
		t.Errorf("replicas %d: want the extension trait's patch", n)
	}
}

func TestRender_ADefinitionWithoutTemplateIsARenderError(t *testing.T) {
	d := defsWith()
	def := componentDef("deploy", "")
	def.Spec.Schematic = nil
	d.Components["deploy"] = def
	_, err := renderApp(app(t, map[string]any{"image": "nginx"}), d)
	var rerr *render.Error
	if !errors.As(err, &rerr) || rerr.Reason != v1beta1.ReasonRenderFailed || !contains(err.Error(), "spec.extension.template") {
		t.Fatalf("got %v", err)
	}
	def.Spec.Extension = extension(`[1]`)
	_, err = renderApp(app(t, map[string]any{"image": "nginx"}), d)
	if !errors.As(err, &rerr) || !contains(err.Error(), "spec.extension is not an object") {
		t.Fatalf("got %v", err)
	}
}

// TestComponentHealth_LegacyExtensionTemplate: health reads the template
// where render does: a missing workload is named from the extension's
// template, and spec.status, not spec.extension.healthPolicy, judges.
func TestComponentHealth_LegacyExtensionTemplate(t *testing.T) {
	def := legacyComponent("deploy", deployTemplate)
	def.Spec.Extension = extension(`{"template":` + toJSONString(deployTemplate) + `,"healthPolicy":"isHealth: false"}`)
	def.Spec.Status = &v1beta1.Status{HealthPolicy: `isHealth: context.output.status.readyReplicas == parameter.replicas`}
	r := render.NewRenderer()
	a := app(t, map[string]any{"image": "nginx", "replicas": 2})
	comp := a.Spec.Components[0]
	h, _ := r.ComponentHealth(def, comp, healthCtx, a, nil, nil)
	if h.Healthy || h.Message != `Deployment "web" is not found` {
		t.Errorf("no workload: %+v", h)
	}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"}, "status": map[string]any{"readyReplicas": int64(2)}}}
	h, err := r.ComponentHealth(def, comp, healthCtx, a, live, nil)
	if err != nil || !h.Healthy {
		t.Errorf("ready: %+v, %v", h, err)
	}
}
