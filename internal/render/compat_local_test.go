package render_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/render"
)

// localCases is the corpus of cases kept in this repository
// (testdata/compat/README.md): each brings its own definitions.
const localCases = "testdata/compat/cases"

// TestCompat_InRepoCasesRenderLikeKubeVela renders every in-repo case with
// its own definitions and compares the objects with KubeVela's, then,
// when the case has live objects, the health KubeVela reports for them.
func TestCompat_InRepoCasesRenderLikeKubeVela(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(localCases, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases in %s: %v", localCases, err)
	}
	r := budgetedRenderer(t)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			defs, err := cli.LoadDefinitions(filepath.Join(dir, "definitions.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			checkCase(t, r, defs, dir)
			if _, err := os.Stat(filepath.Join(dir, "live.yaml")); err == nil {
				checkCaseHealth(t, r, defs, dir)
			}
		})
	}
}

// serviceStatus is one entry of status.services as KubeVela reports it.
type serviceStatus struct {
	Name    string            `json:"name,omitempty"`
	Healthy bool              `json:"healthy"`
	Message string            `json:"message,omitempty"`
	Details map[string]string `json:"details,omitempty"`
	Traits  []traitStatus     `json:"traits,omitempty"`
}

type traitStatus struct {
	Type    string            `json:"type"`
	Healthy bool              `json:"healthy"`
	Message string            `json:"message,omitempty"`
	Details map[string]string `json:"details,omitempty"`
}

// checkCaseHealth evaluates the health of every component and trait of
// the case against its live objects, as the controller does after a
// pass, and compares it with expected-status.yaml.
func checkCaseHealth(t *testing.T, r *render.Renderer, defs render.Definitions, dir string) {
	t.Helper()
	app, err := cli.LoadApplication(filepath.Join(dir, "app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Render(app, defs, render.AppContext{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	live := readLive(t, filepath.Join(dir, "live.yaml"))
	find := func(o *unstructured.Unstructured) *unstructured.Unstructured { return live[objectID(o.Object)] }
	var got []serviceStatus
	for i, comp := range res.Components {
		ac := app.Spec.Components[i]
		var output *unstructured.Unstructured
		if comp.Workload != nil {
			output = find(comp.Workload)
		}
		outputs := map[string]map[string]*unstructured.Unstructured{}
		for _, a := range comp.Auxiliaries {
			if outputs[a.Trait] == nil {
				outputs[a.Trait] = map[string]*unstructured.Unstructured{}
			}
			outputs[a.Trait][a.Name] = find(a.Object)
		}
		h, err := r.ComponentHealth(defs.Components[ac.Type], ac, render.AppContext{}, app, output, outputs[""])
		if err != nil {
			t.Errorf("component %s: %v", ac.Name, err)
		}
		s := serviceStatus{Name: ac.Name, Healthy: h.Healthy, Message: h.Message, Details: h.Details}
		for _, tr := range ac.Traits {
			th, err := r.TraitHealth(defs.Traits[tr.Type], tr, ac, render.AppContext{}, app, output, outputs[tr.Type])
			if err != nil {
				t.Errorf("component %s trait %s: %v", ac.Name, tr.Type, err)
			}
			s.Traits = append(s.Traits, traitStatus{Type: tr.Type, Healthy: th.Healthy, Message: th.Message, Details: th.Details})
		}
		got = append(got, s)
	}
	data, err := os.ReadFile(filepath.Join(dir, "expected-status.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want []serviceStatus
	if err := yaml.UnmarshalStrict(data, &want); err != nil {
		t.Fatalf("expected-status.yaml: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		gy, _ := yaml.Marshal(got)
		wy, _ := yaml.Marshal(want)
		t.Errorf("status.services differ\n--- got\n%s--- want\n%s", gy, wy)
	}
}

// readLive reads the live objects of a case by identity.
func readLive(t *testing.T, path string) map[string]*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[objectID(u.Object)] = u
	}
	return out
}
