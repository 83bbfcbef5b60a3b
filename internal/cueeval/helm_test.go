package cueeval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/internal/helm/chart"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
)

// helmTemplate reads a helmchart definition's template.
func helmTemplate(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("%s is absent (the compatibility corpus, ../shared/compat, for KubeVela's): %v", path, err)
	}
	var def struct {
		Spec struct {
			Schematic struct{ Cue struct{ Template string } }
		}
	}
	if err := yaml.Unmarshal(b, &def); err != nil {
		t.Fatal(err)
	}
	return def.Spec.Schematic.Cue.Template
}

// A helmchart template asks for its chart first (vela/helm's #Render,
// with its parameters concrete), then renders the chart it is given into
// outputs: Steward's built-in definition and KubeVela's published one.
func TestHelmRender_AsksForTheChartThenRendersIt(t *testing.T) {
	for _, path := range []string{
		filepath.Join("..", "..", "config", "definitions", "helmchart.yaml"),
		filepath.Join(compatRoot(), "definitions", "helmchart.yaml"),
	} {
		t.Run(map[bool]string{true: "steward", false: "kubevela"}[strings.Contains(path, "config")], func(t *testing.T) {
			l := NewLocal(0)
			in := &TemplateInput{Source: Source{Kind: KindComponent, Name: "helmchart", Text: helmTemplate(t, path), Version: "1"},
				Context: json.RawMessage(`{"name":"web","namespace":"team","appName":"app","appRevision":"app-v1"}`),
				Params:  json.RawMessage(`{"chart":{"source":"demo","repoURL":"http://127.0.0.1:1","version":"1.0.0"},"values":{"greeting":"hi"},"valuesFrom":[{"kind":"ConfigMap","name":"vals"}]}`)}
			res, err := l.Evaluate(&Request{Render: in})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil || res.Render == nil || len(res.Render.Actions) != 1 {
				t.Fatalf("first evaluation: want one action, got %+v", res)
			}
			a := res.Render.Actions[0]
			var p struct {
				Chart      struct{ Source, RepoURL, Version string }
				Release    struct{ Name, Namespace string }
				ValuesFrom []struct{ Kind, Name string }
			}
			if err := json.Unmarshal(a.Params, &p); err != nil {
				t.Fatal(err)
			}
			if a.Provider != "helm" || a.Do != "render" || p.Chart.Source != "demo" || p.Release.Name != "web" || p.Release.Namespace != "team" || len(p.ValuesFrom) != 1 {
				t.Fatalf("action = %s.%s %s", a.Provider, a.Do, a.Params)
			}
			in.Actions = []ActionResult{{Path: a.Path, Chart: &ChartAction{Archive: charttest.ConfigMapChart("demo", "1.0.0"),
				Values: json.RawMessage(`{"greeting":"hi"}`)}}}
			in.Actions[0].Chart.Options.ReleaseName, in.Actions[0].Chart.Options.Namespace = "web", "team"
			res, err = l.Evaluate(&Request{Render: in})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil {
				t.Fatalf("second evaluation: %v", res.Err)
			}
			r := res.Render
			if len(r.Outputs) != 2 || len(r.Charts) != 1 || r.Charts[0].Chart != "demo" {
				t.Fatalf("rendered %d outputs, charts %+v", len(r.Outputs), r.Charts)
			}
			if !strings.Contains(string(r.Outputs[0].Object), `"greeting":"hi"`) || !strings.Contains(string(r.Outputs[0].Object), `"namespace":"team"`) {
				t.Errorf("first object: %s", r.Outputs[0].Object)
			}
			if !strings.Contains(string(r.Output), `"resourceCount":"2"`) {
				t.Errorf("output: %s", r.Output)
			}
		})
	}
}

// A chart that does not render fails the render naming the chart; an
// action other than vela/helm's in a component template is refused.
func TestHelmRender_Errors(t *testing.T) {
	l := NewLocal(0)
	tmpl := helmTemplate(t, filepath.Join("..", "..", "config", "definitions", "helmchart.yaml"))
	in := &TemplateInput{Source: Source{Kind: KindComponent, Name: "helmchart", Text: tmpl, Version: "1"},
		Context: json.RawMessage(`{"name":"web","namespace":"team","appName":"app"}`),
		Params:  json.RawMessage(`{"chart":{"source":"bad","repoURL":"http://127.0.0.1:1"}}`),
		Actions: []ActionResult{{Path: "_chart", Chart: &ChartAction{Archive: charttest.Archive("bad", "0.1.0", map[string]string{
			"templates/x.yaml": `{{ required "image.tag is required" .Values.tag }}`}),
			Options: chart.Options{ReleaseName: "web", Namespace: "team"}}}}}
	_, err := l.Evaluate(&Request{Render: in})
	if err == nil || !strings.Contains(err.Error(), "bad-0.1.0") || !strings.Contains(err.Error(), "image.tag is required") {
		t.Fatalf("err = %v, want the chart and its message", err)
	}
	kube := &TemplateInput{Source: Source{Kind: KindComponent, Name: "k", Version: "1", Text: "import \"vela/kube\"\n_a: kube.#Apply & {$params: value: {kind: \"ConfigMap\"}}\noutput: {kind: \"ConfigMap\"}\n"},
		Context: json.RawMessage(`{}`), Params: json.RawMessage(`{}`)}
	_, err = l.Evaluate(&Request{Render: kube})
	if err == nil || !strings.Contains(err.Error(), "may only use vela/helm") {
		t.Fatalf("err = %v, want vela/kube refused in a component template", err)
	}
}

// compatRoot is the KubeVela compatibility corpus: $STEWARD_COMPAT_DIR,
// else ../shared/compat beside the repository.
func compatRoot() string {
	if dir := os.Getenv("STEWARD_COMPAT_DIR"); dir != "" {
		return dir
	}
	return filepath.Join("..", "..", "..", "shared", "compat")
}
