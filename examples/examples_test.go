package examples

import (
	"io"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
)

// definitionsDir holds the definitions `make run` installs.
const definitionsDir = "../config/definitions"

func exampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found %d examples, want at least 3 (`steward dev` lists the first three)", len(files))
	}
	sort.Strings(files)
	return files
}

func TestExamples_RenderWithBuiltinDefinitions(t *testing.T) {
	defs, err := cli.LoadDefinitions(definitionsDir)
	if err != nil {
		t.Fatal(err)
	}
	apps := map[string]string{}
	for _, file := range exampleFiles(t) {
		t.Run(file, func(t *testing.T) {
			app, err := cli.LoadApplication(file)
			if err != nil {
				t.Fatal(err)
			}
			key := app.Namespace + "/" + app.Name
			if other, dup := apps[key]; dup {
				t.Errorf("Application %s is also defined in %s: applying both would replace one with the other", key, other)
			}
			apps[key] = file

			// The steps of `steward render` (cli.Render), kept apart so
			// that the result can be inspected.
			res, err := render.NewRenderer().Render(app, defs, render.AppContext{})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			objs := cli.Objects(res)
			if err := cli.WriteObjects(io.Discard, objs); err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Error("renders no objects")
			}

			if _, err := policy.Parse(app); err != nil {
				t.Errorf("policies: %v", err)
			}
			checkDependencies(t, app)
			checkDistinctObjects(t, objs)
			for _, obj := range objs {
				checkSteadyState(t, obj)
			}
		})
	}
}

// checkDependencies fails on dependsOn naming a component the Application
// does not have.
func checkDependencies(t *testing.T, app *v1beta1.Application) {
	t.Helper()
	names := map[string]bool{}
	for _, c := range app.Spec.Components {
		names[c.Name] = true
	}
	for _, c := range app.Spec.Components {
		for _, d := range c.DependsOn {
			if !names[d] {
				t.Errorf("component %q depends on %q, which is not a component of the application", c.Name, d)
			}
		}
	}
}

// checkDistinctObjects fails when two rendered objects are the same object
// (for example webservice's `expose: true` port and the expose trait both
// rendering a Service named after the component).
func checkDistinctObjects(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	seen := map[string]bool{}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		key := gvk.Kind
		if gvk.Group != "" {
			key += "." + gvk.Group
		}
		key += " " + obj.GetNamespace() + "/" + obj.GetName()
		if seen[key] {
			t.Errorf("%s is rendered twice", key)
		}
		seen[key] = true
	}
}

// checkSteadyState fails on values the API server stores differently from
// how they are written: Steward would find them changed and re-apply them
// on every pass.
func checkSteadyState(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if obj.GetKind() == "Secret" {
		if _, ok := obj.Object["stringData"]; ok {
			t.Errorf("Secret %s uses stringData, which the API server never returns; use data", obj.GetName())
		}
	}
	walkQuantities(obj.Object, func(path, v string) {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			t.Errorf("%s %s: %s=%q is not a quantity: %v", obj.GetKind(), obj.GetName(), path, v, err)
			return
		}
		if q.String() != v {
			t.Errorf("%s %s: %s=%q is stored as %q; write %q", obj.GetKind(), obj.GetName(), path, v, q.String(), q.String())
		}
	})
}

// walkQuantities calls fn for every string under a "requests" or "limits"
// map, where Kubernetes keeps resource quantities.
func walkQuantities(v any, fn func(path, value string)) {
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				if q, ok := child.(map[string]any); ok && (k == "requests" || k == "limits") {
					for name, value := range q {
						if s, ok := value.(string); ok {
							fn(path+"."+k+"."+name, s)
						}
					}
					continue
				}
				walk(child, path+"."+k)
			}
		case []any:
			for _, child := range x {
				walk(child, path+"[]")
			}
		}
	}
	walk(v, "")
}
