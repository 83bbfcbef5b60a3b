package render_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

func TestRender_ContextHasApplicationAndCluster(t *testing.T) {
	d := render.Definitions{Components: map[string]*v1beta1.ComponentDefinition{"ctx": componentDef("ctx", `
output: {
	apiVersion: "v1"
	kind: "ConfigMap"
	data: {
		name: context.name
		appName: context.appName
		namespace: context.namespace
		appRevision: context.appRevision
		appRevisionNum: "\(context.appRevisionNum)"
		team: context.appLabels.team
		publish: context.publishVersion
		minor: "\(context.clusterVersion.minor)"
		newAPI: "\(context.clusterVersion.minor >= 23)"
		git: context.clusterVersion.gitVersion
	}
}`)}}
	a := app(t, map[string]any{})
	a.Spec.Components[0].Type = "ctx"
	a.Annotations = map[string]string{v1beta1.AnnotationPublishVersion: "alpha"}
	res, err := render.NewRenderer().Render(a, d, render.AppContext{
		AppRevision: "shop-v3", AppRevisionNum: 3,
		ClusterVersion: render.ClusterVersion{Major: "1", Minor: "30+", GitVersion: "v1.30.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Components[0].Workload
	want := `{"appName":"shop","appRevision":"shop-v3","appRevisionNum":"3","git":"v1.30.1","minor":"30","name":"web","namespace":"prod","newAPI":"true","publish":"alpha","team":"a"}`
	if got := toJSON(t, w.Object["data"]); got != want {
		t.Errorf("context\n got %s\nwant %s", got, want)
	}
	labels := w.GetLabels()
	for k, v := range map[string]string{
		v1beta1.LabelAppName: "shop", v1beta1.LabelAppNamespace: "prod", v1beta1.LabelAppComponent: "web",
		v1beta1.LabelAppRevision: "shop-v3", v1beta1.LabelWorkloadType: "ctx",
	} {
		if labels[k] != v {
			t.Errorf("label %s: got %q want %q", k, labels[k], v)
		}
	}
	if w.GetName() != "web" || w.GetNamespace() != "prod" {
		t.Errorf("want web in prod, got %s/%s", w.GetNamespace(), w.GetName())
	}
}

func TestRender_UnknownClusterVersionTakesFallback(t *testing.T) {
	d := render.Definitions{Components: map[string]*v1beta1.ComponentDefinition{"v": componentDef("v", `
output: {
	if context.clusterVersion.minor < 23 {apiVersion: "autoscaling/v2beta2"}
	if context.clusterVersion.minor >= 23 {apiVersion: "autoscaling/v2"}
	kind: "HorizontalPodAutoscaler"
}`)}}
	a := app(t, map[string]any{})
	a.Spec.Components[0].Type = "v"
	res := mustRender(t, a, d)
	if got := res.Components[0].Workload.GetAPIVersion(); got != "autoscaling/v2beta2" {
		t.Errorf("got %s", got)
	}
}

func TestRender_TemplateNamespaceWins(t *testing.T) {
	d := render.Definitions{Components: map[string]*v1beta1.ComponentDefinition{"ns": componentDef("ns",
		`output: {apiVersion: "v1", kind: "ConfigMap", metadata: {name: "x", namespace: "other"}}`)}}
	a := app(t, map[string]any{})
	a.Spec.Components[0].Type = "ns"
	res := mustRender(t, a, d)
	if got := res.Components[0].Workload.GetNamespace(); got != "other" {
		t.Errorf("got %s", got)
	}
}

func TestRender_TraitOutputsAreLabelled(t *testing.T) {
	d := defsWith(traitDef("svc", `outputs: service: {apiVersion: "v1", kind: "Service", metadata: name: context.name}`, ""))
	res := mustRender(t, app(t, map[string]any{"image": "nginx"}, trait(t, "svc", nil)), d)
	aux := res.Components[0].Auxiliaries
	if len(aux) != 1 || aux[0].Trait != "svc" || aux[0].Name != "service" {
		t.Fatalf("got %+v", aux)
	}
	l := aux[0].Object.GetLabels()
	if l[v1beta1.LabelTraitType] != "svc" || l[v1beta1.LabelTraitResource] != "service" || l[v1beta1.LabelAppName] != "shop" {
		t.Errorf("labels %v", l)
	}
}

func TestRender_Errors(t *testing.T) {
	errsTrait := traitDef("guard", `parameter: {mode: string}
errs: [if parameter.mode != "safe" {"mode must be safe, got \(parameter.mode)"}]`, "")
	scaler := traitDef("scaler", `parameter: replicas: *1 | int
patch: spec: {
	// +patchStrategy=retainKeys
	replicas: parameter.replicas
}`, "")
	regex := traitDef("named", `parameter: {name: =~"^[a-z]+$", ports?: [...{port: int & >0}]}`, "")
	tests := []struct {
		name   string
		app    *v1beta1.Application
		reason string
		trait  string
		path   string
		msg    string
	}{{
		name:   "unknown component type",
		app:    func() *v1beta1.Application { a := app(t, nil); a.Spec.Components[0].Type = "nope"; return a }(),
		reason: v1beta1.ReasonDefinitionNotFound,
		msg:    `component "web": component type "nope" has no ComponentDefinition`,
	}, {
		name:   "unknown trait type",
		app:    app(t, map[string]any{"image": "x"}, trait(t, "nope", nil)),
		reason: v1beta1.ReasonDefinitionNotFound, trait: "nope",
		msg: `component "web" trait "nope": trait type "nope" has no TraitDefinition`,
	}, {
		name:   "property of the wrong type",
		app:    app(t, map[string]any{"image": "x"}, trait(t, "scaler", map[string]any{"replicas": "x"})),
		reason: v1beta1.ReasonInvalidProperties, trait: "scaler", path: "replicas",
		msg: `component "web" trait "scaler": properties do not fit parameter: replicas: conflicting values "x" and int`,
	}, {
		name:   "missing required property",
		app:    app(t, map[string]any{}),
		reason: v1beta1.ReasonInvalidProperties, path: "image",
		msg: `component "web": properties do not fit parameter: image: required property is missing (want string)`,
	}, {
		name:   "regex constraint",
		app:    app(t, map[string]any{"image": "x"}, trait(t, "named", map[string]any{"name": "Bad"})),
		reason: v1beta1.ReasonInvalidProperties, trait: "named", path: "name",
		msg: `properties do not fit parameter: name: invalid value "Bad"`,
	}, {
		name:   "bound in a list element",
		app:    app(t, map[string]any{"image": "x"}, trait(t, "named", map[string]any{"name": "ok", "ports": []any{map[string]any{"port": 0}}})),
		reason: v1beta1.ReasonInvalidProperties, trait: "named", path: "ports[0].port",
		msg: `ports[0].port: invalid value 0 (out of bound >0)`,
	}, {
		name:   "errs from the definition",
		app:    app(t, map[string]any{"image": "x"}, trait(t, "guard", map[string]any{"mode": "fast"})),
		reason: v1beta1.ReasonRenderFailed, trait: "guard", path: "errs",
		msg: `component "web" trait "guard": mode must be safe, got fast`,
	}}
	d := defsWith(errsTrait, scaler, regex)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := renderApp(tt.app, d)
			var rerr *render.Error
			if !errors.As(err, &rerr) {
				t.Fatalf("want *render.Error, got %v", err)
			}
			if rerr.Reason != tt.reason || rerr.Trait != tt.trait || rerr.Component != "web" || rerr.Path != tt.path {
				t.Errorf("got reason=%s trait=%q component=%q path=%q", rerr.Reason, rerr.Trait, rerr.Component, rerr.Path)
			}
			if !contains(err.Error(), tt.msg) {
				t.Errorf("message\n got %s\nwant containing %s", err, tt.msg)
			}
		})
	}
}

func TestCheckTemplate_ReportsPosition(t *testing.T) {
	r := render.NewRenderer()
	if err := r.CheckTemplate(render.KindTrait, "vela-system", "ok", `parameter: x: int`); err != nil {
		t.Fatal(err)
	}
	err := r.CheckTemplate(render.KindTrait, "vela-system", "bad", "parameter: x: int\noutput: {a: 1} & {a: 2}\n")
	if err == nil || !contains(err.Error(), `TraitDefinition "bad"`) || !contains(err.Error(), "line 2") {
		t.Errorf("want an error naming the definition and line 2, got %v", err)
	}
	err = r.CheckTemplate(render.KindComponent, "vela-system", "syntax", "output: {\n")
	if err == nil || !contains(err.Error(), "line") {
		t.Errorf("want a syntax error with its position, got %v", err)
	}
}

func TestRenderer_CacheFollowsDefinitionChanges(t *testing.T) {
	r := render.NewRenderer()
	d := defsWith()
	a := app(t, map[string]any{"image": "nginx"})
	if _, err := r.Render(a, d, render.AppContext{}); err != nil {
		t.Fatal(err)
	}
	changed := componentDef("deploy", `parameter: {...}
output: {apiVersion: "v1", kind: "ConfigMap"}`)
	changed.ResourceVersion = "2"
	d.Components["deploy"] = changed
	res, err := r.Render(a, d, render.AppContext{})
	if err != nil {
		t.Fatal(err)
	}
	if k := res.Components[0].Workload.GetKind(); k != "ConfigMap" {
		t.Errorf("cache kept the old template: kind %s", k)
	}
}

func TestRenderer_ConcurrentRendersShareTheCache(t *testing.T) {
	r := render.NewRenderer()
	d := defsWith(traitDef("svc", `outputs: service: {apiVersion: "v1", kind: "Service"}`, ""))
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			a := app(t, map[string]any{"image": "nginx", "replicas": i}, trait(t, "svc", nil))
			res, err := r.Render(a, d, render.AppContext{})
			if err == nil && res.Components[0].Workload.Object["spec"].(map[string]any)["replicas"] != int64(i) {
				err = errors.New("renders mixed up their properties")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestCheckTemplate_AcceptsConditionsOnParameters(t *testing.T) {
	// KubeVela accepts templates whose top-level comprehensions read
	// parameters that are only known once properties are filled in.
	r := render.NewRenderer()
	src := `
output: {apiVersion: "v1", kind: "ConfigMap", metadata: name: context.name}
if parameter.replicas > 1 {
	outputs: extra: {apiVersion: "v1", kind: "ConfigMap", metadata: name: context.name + "-extra"}
}
parameter: replicas: int
`
	if err := r.CheckTemplate(render.KindComponent, "vela-system", "cond", src); err != nil {
		t.Fatalf("valid template rejected: %v", err)
	}
	if err := r.CheckTemplate(render.KindComponent, "vela-system", "broken", "output: {apiVersion: \"v1\"\n"); err == nil {
		t.Fatal("a syntax error was accepted")
	}
	if err := r.CheckTemplate(render.KindComponent, "vela-system", "conflict", "output: {a: 1, a: 2}\n"); err == nil {
		t.Fatal("a conflict was accepted")
	}
}

// TestCheckTemplate_AcceptsListArithmetic: a template adding lists, as
// written for KubeVela before CUE v0.11, compiles.
func TestCheckTemplate_AcceptsListArithmetic(t *testing.T) {
	r := render.NewRenderer()
	src := "parameter: env: [...{name: string, value: string}]\noutput: spec: env: [{name: \"A\", value: \"1\"}] + parameter.env\n"
	if err := r.CheckTemplate(render.KindComponent, "vela-system", "lists", src); err != nil {
		t.Fatalf("rejected: %v", err)
	}
}

// A type pinned to a definition revision (KubeVela's type@v2) that was
// not found is refused naming the revision, or saying revisions are
// turned off; never rendered with the current definition.
func TestRender_APinnedDefinitionRevisionNotFoundIsRefused(t *testing.T) {
	app := &v1beta1.Application{}
	app.Name, app.Namespace = "web", "default"
	app.Spec.Components = []v1beta1.ApplicationComponent{{Name: "web", Type: "webservice@v2"}}
	for _, tc := range []struct {
		off  bool
		want string
	}{{false, `no DefinitionRevision "webservice-v2"`}, {true, "definition revisions are turned off"}} {
		_, err := budgetedRenderer(t).Render(app, render.Definitions{NoRevisions: tc.off}, render.AppContext{})
		var re *render.Error
		if !errors.As(err, &re) || re.Reason != v1beta1.ReasonDefinitionNotFound || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("render of webservice@v2 (revisions off: %v): %v", tc.off, err)
		}
	}
}
