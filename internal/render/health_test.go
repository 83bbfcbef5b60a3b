package render_test

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/render"
)

var healthCtx = render.AppContext{AppRevision: "shop-v1", AppRevisionNum: 1}

// defSets are the two sets of real definitions health is checked with:
// Steward's built-in ones and KubeVela's published ones.
func defSets(t *testing.T) map[string]render.Definitions {
	t.Helper()
	builtin, err := cli.LoadDefinitions(filepath.Join("..", "..", "config", "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	kubevela, err := cli.LoadDefinitions(filepath.Join(compatDir(t), "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]render.Definitions{"builtin": builtin, "kubevela": kubevela}
}

// liveApp renders an Application and returns the component's workload and
// outputs as the API server would return them: with a generation, and
// status set by setStatus.
func liveApp(t *testing.T, r *render.Renderer, a *v1beta1.Application, defs render.Definitions) render.Component {
	t.Helper()
	res, err := r.Render(a, defs, healthCtx)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	comp := res.Components[0]
	if comp.Workload != nil {
		// What the API server defaults and sets.
		if _, ok, _ := unstructured.NestedFieldNoCopy(comp.Workload.Object, "spec", "replicas"); !ok && comp.Workload.GetKind() == "Deployment" {
			_ = unstructured.SetNestedField(comp.Workload.Object, int64(1), "spec", "replicas")
		}
		comp.Workload.SetGeneration(1)
		comp.Workload.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "steward"}})
	}
	return comp
}

func setStatus(t *testing.T, u *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
	t.Helper()
	u = u.DeepCopy()
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func webApp(t *testing.T, typ string, p map[string]any, traits ...v1beta1.ApplicationTrait) *v1beta1.Application {
	a := app(t, p, traits...)
	a.Spec.Components[0].Type = typ
	return a
}

func TestComponentHealth_WebserviceFollowsReadyReplicas(t *testing.T) {
	for set, defs := range defSets(t) {
		r := render.NewRenderer()
		a := webApp(t, "webservice", map[string]any{"image": "nginx"})
		live := liveApp(t, r, a, defs)
		tests := []struct {
			name        string
			status      map[string]any
			wantHealthy bool
			wantMessage string
		}{
			{"rolled out", map[string]any{"observedGeneration": int64(1), "replicas": int64(1),
				"updatedReplicas": int64(1), "readyReplicas": int64(1)}, true, "Ready:1/1"},
			{"pods not ready", map[string]any{"observedGeneration": int64(1), "replicas": int64(1),
				"updatedReplicas": int64(1)}, false, "Ready:0/1"},
			{"no status yet", nil, false, "Ready:0/1"},
		}
		for _, tt := range tests {
			t.Run(set+"/"+tt.name, func(t *testing.T) {
				out := setStatus(t, live.Workload, tt.status)
				h, err := r.ComponentHealth(defs.Components["webservice"], a.Spec.Components[0], healthCtx, a, out, nil)
				if err != nil {
					t.Fatalf("ComponentHealth: %v", err)
				}
				if h.Healthy != tt.wantHealthy || h.Message != tt.wantMessage {
					t.Fatalf("got healthy=%v message=%q, want %v %q", h.Healthy, h.Message, tt.wantHealthy, tt.wantMessage)
				}
			})
		}
		t.Run(set+"/missing deployment", func(t *testing.T) {
			h, err := r.ComponentHealth(defs.Components["webservice"], a.Spec.Components[0], healthCtx, a, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if h.Healthy || h.Message != `Deployment "web" is not found` {
				t.Fatalf("got %+v", h)
			}
		})
	}
}

func TestComponentHealth_TaskWaitsForSucceededPods(t *testing.T) {
	defs := defSets(t)["kubevela"]
	r := render.NewRenderer()
	a := webApp(t, "task", map[string]any{"image": "busybox", "count": 2})
	live := liveApp(t, r, a, defs)
	for succeeded, want := range map[int64]bool{1: false, 2: true} {
		out := setStatus(t, live.Workload, map[string]any{"succeeded": succeeded, "active": 2 - succeeded})
		h, err := r.ComponentHealth(defs.Components["task"], a.Spec.Components[0], healthCtx, a, out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h.Healthy != want {
			t.Errorf("succeeded=%d: healthy=%v, want %v (%q)", succeeded, h.Healthy, want, h.Message)
		}
		if wantMsg := "Active/Failed/Succeeded:" + itoa(2-succeeded) + "/0/" + itoa(succeeded); h.Message != wantMsg {
			t.Errorf("message %q, want %q", h.Message, wantMsg)
		}
	}
}

func TestTraitHealth_ExposeServiceByType(t *testing.T) {
	for set, defs := range defSets(t) {
		r := render.NewRenderer()
		// want is healthy and message per definition set; an empty
		// message with wantErr means customStatus failed.
		type want struct {
			healthy bool
			message string
			err     string
		}
		tests := []struct {
			name, svcType string
			status        map[string]any
			want          map[string]want
		}{
			{"cluster IP", "ClusterIP", nil, map[string]want{
				"kubevela": {true, "ClusterIP: 10.0.0.7", ""},
				"builtin":  {true, "cluster IP: 10.0.0.7", ""}}},
			// KubeVela's customStatus declares message twice with two
			// defaults, so CUE has no default: KubeVela fails the same way.
			{"load balancer pending", "LoadBalancer", map[string]any{"loadBalancer": map[string]any{}}, map[string]want{
				"kubevela": {false, "", "message: non-concrete value string"},
				"builtin":  {false, "", ""}}},
			// The built-in customStatus interpolates the ingress struct,
			// which CUE refuses: a bug in config/definitions/expose.yaml.
			{"load balancer ready", "LoadBalancer", map[string]any{"loadBalancer": map[string]any{
				"ingress": []any{map[string]any{"ip": "192.0.2.1"}}}}, map[string]want{
				"kubevela": {true, "ExternalIP: 192.0.2.1", ""},
				"builtin":  {true, "", "message: invalid interpolation"}}},
		}
		for _, tt := range tests {
			t.Run(set+"/"+tt.name, func(t *testing.T) {
				w := tt.want[set]
				tr := trait(t, "expose", map[string]any{"port": []int{80}, "type": tt.svcType})
				a := webApp(t, "webservice", map[string]any{"image": "nginx"}, tr)
				live := liveApp(t, r, a, defs)
				svc := serviceOf(t, live)
				_ = unstructured.SetNestedField(svc.Object, "10.0.0.7", "spec", "clusterIP")
				svc = setStatus(t, svc, tt.status)
				h, err := r.TraitHealth(defs.Traits["expose"], tr, a.Spec.Components[0], healthCtx, a, live.Workload,
					map[string]*unstructured.Unstructured{"service": svc})
				if w.err == "" && err != nil || w.err != "" && (err == nil || !strings.Contains(err.Error(), w.err)) {
					t.Fatalf("TraitHealth error %v, want %q", err, w.err)
				}
				if w.err != "" {
					w.message = err.Error()
				}
				if h.Healthy != w.healthy || h.Message != w.message {
					t.Fatalf("got healthy=%v message=%q, want %v %q", h.Healthy, h.Message, w.healthy, w.message)
				}
			})
		}
		t.Run(set+"/missing service", func(t *testing.T) {
			tr := trait(t, "expose", map[string]any{"port": []int{80}})
			a := webApp(t, "webservice", map[string]any{"image": "nginx"}, tr)
			h, err := r.TraitHealth(defs.Traits["expose"], tr, a.Spec.Components[0], healthCtx, a, nil,
				map[string]*unstructured.Unstructured{"service": nil})
			if err != nil {
				t.Fatal(err)
			}
			if h.Healthy || h.Message != `output "service" is not found` {
				t.Fatalf("got %+v", h)
			}
		})
	}
}

func serviceOf(t *testing.T, c render.Component) *unstructured.Unstructured {
	t.Helper()
	for _, aux := range c.Auxiliaries {
		if aux.Name == "service" {
			if aux.Object.GetLabels()[v1beta1.LabelTraitResource] != "service" {
				t.Fatalf("service output is not labelled %s=service: %v", v1beta1.LabelTraitResource, aux.Object.GetLabels())
			}
			return aux.Object.DeepCopy()
		}
	}
	t.Fatalf("no service output in %+v", c.Auxiliaries)
	return nil
}

// statusDef is a component definition with the given status templates on
// the minimal deploy template, whose parameter has a default.
func statusDef(st v1beta1.Status) *v1beta1.ComponentDefinition {
	def := componentDef("deploy", deployTemplate+"\nparameter: port: *8080 | int\n")
	def.Spec.Status = &st
	return def
}

func deployment(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "prod", "generation": int64(1),
			"annotations": map[string]any{v1beta1.AnnotationLastApplied: "{}", "keep": "me"}},
		"spec": map[string]any{"replicas": int64(2)},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "steward"}})
	return u
}

func TestComponentHealth_NoPolicyIsHealthy(t *testing.T) {
	r := render.NewRenderer()
	a := app(t, map[string]any{"image": "nginx"})
	for name, def := range map[string]*v1beta1.ComponentDefinition{
		"no status":    componentDef("deploy", deployTemplate),
		"empty status": statusDef(v1beta1.Status{}),
	} {
		h, err := r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, deployment(nil), nil)
		if err != nil || !h.Healthy || h.Message != "" || h.Details != nil {
			t.Errorf("%s: got %+v, %v; want healthy", name, h, err)
		}
	}
}

func TestComponentHealth_SeesContextParameterDefaultsAndLiveStatus(t *testing.T) {
	r := render.NewRenderer()
	a := app(t, map[string]any{"image": "nginx"})
	def := statusDef(v1beta1.Status{
		HealthPolicy: `isHealth: context.output.status.readyReplicas == context.output.spec.replicas`,
		CustomStatus: `message: "\(context.appName)/\(context.name) in \(context.namespace) on port \(parameter.port)"`,
		Details: `
image: parameter.image
ready: context.output.status.readyReplicas
selector: {app: context.name}
annotations: context.output.metadata.annotations
managedFields: context.output.metadata.managedFields
notYet: context.output.status.availableReplicas
_hidden: "x"
local: "x" @local()
"$internal": "x"
aVeryLongDetailNameThatIsOverTheLimit: "x"
`,
	})
	h, err := r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, deployment(map[string]any{"readyReplicas": int64(2)}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Healthy || h.Message != "shop/web in prod on port 8080" {
		t.Fatalf("got %+v", h)
	}
	want := map[string]string{"image": "nginx", "ready": "2", "selector": `{"app":"web"}`, "annotations": `{"keep":"me"}`}
	if toJSON(t, h.Details) != toJSON(t, want) {
		t.Fatalf("details %v, want %v", h.Details, want)
	}

	h, err = r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, deployment(map[string]any{"readyReplicas": int64(1)}), nil)
	if err != nil || h.Healthy {
		t.Fatalf("one of two ready: got %+v, %v", h, err)
	}
}

func TestComponentHealth_BrokenTemplatesAreUnhealthyErrors(t *testing.T) {
	r := render.NewRenderer()
	a := app(t, map[string]any{"image": "nginx"})
	tests := []struct {
		name        string
		status      v1beta1.Status
		wantErr     string
		wantMessage string
		wantHealthy bool
	}{
		{"no isHealth", v1beta1.Status{HealthPolicy: `ok: true`}, "isHealth is not set", "", false},
		{"isHealth not a bool", v1beta1.Status{HealthPolicy: `isHealth: "yes"`}, "isHealth", "", false},
		{"isHealth incomplete", v1beta1.Status{HealthPolicy: `isHealth: context.output.status.missing > 0`}, "isHealth", "", false},
		{"syntax error", v1beta1.Status{HealthPolicy: `isHealth: (`}, "does not compile", "", false},
		{"message kept on health error", v1beta1.Status{HealthPolicy: `isHealth: 1`, CustomStatus: `message: "hi"`},
			"status.healthPolicy", "hi", false},
		{"bad message leaves health alone", v1beta1.Status{HealthPolicy: `isHealth: true`, CustomStatus: `message: 1`},
			"status.customStatus", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := r.ComponentHealth(statusDef(tt.status), a.Spec.Components[0], healthCtx, a, deployment(nil), nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `ComponentDefinition "deploy"`) {
				t.Fatalf("error %v, want one naming the definition and containing %q", err, tt.wantErr)
			}
			if h.Healthy != tt.wantHealthy {
				t.Errorf("healthy=%v, want %v", h.Healthy, tt.wantHealthy)
			}
			wantMsg := tt.wantMessage
			if wantMsg == "" {
				wantMsg = err.Error()
			}
			if h.Message != strings.ReplaceAll(wantMsg, "\n", "; ") {
				t.Errorf("message %q, want %q", h.Message, wantMsg)
			}
		})
	}
}

func TestComponentHealth_NoWorkloadIsNotMissing(t *testing.T) {
	r := render.NewRenderer()
	a := app(t, map[string]any{})
	def := componentDef("deploy", `
parameter: {}
outputs: cm: {apiVersion: "v1", kind: "ConfigMap"}
`)
	def.Spec.Status = &v1beta1.Status{HealthPolicy: `isHealth: context.outputs.cm.data.ok == "yes"`}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web-cm"}, "data": map[string]any{"ok": "yes"}}}
	h, err := r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, nil, map[string]*unstructured.Unstructured{"cm": cm})
	if err != nil || !h.Healthy {
		t.Fatalf("got %+v, %v", h, err)
	}
	h, _ = r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, nil, map[string]*unstructured.Unstructured{"cm": nil})
	if h.Healthy || h.Message != `output "cm" is not found` {
		t.Fatalf("missing output: got %+v", h)
	}
}

func TestComponentHealth_DoesNotModifyLiveObjects(t *testing.T) {
	r := render.NewRenderer()
	a := app(t, map[string]any{"image": "nginx"})
	def := statusDef(v1beta1.Status{HealthPolicy: `isHealth: true`})
	live := deployment(nil)
	before := toJSON(t, live.Object)
	if _, err := r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, live, nil); err != nil {
		t.Fatal(err)
	}
	if after := toJSON(t, live.Object); after != before {
		t.Fatalf("live object changed:\n%s\n%s", before, after)
	}
}

func TestComponentHealth_CachesCompiledStatusTemplates(t *testing.T) {
	var mu sync.Mutex
	counts := map[bool]int{}
	r := render.NewRenderer(render.WithCacheObserver(func(kind string, hit bool) {
		if kind != render.KindComponent {
			t.Errorf("kind %q", kind)
		}
		mu.Lock()
		counts[hit]++
		mu.Unlock()
	}))
	a := app(t, map[string]any{"image": "nginx"})
	def := statusDef(v1beta1.Status{HealthPolicy: `isHealth: true`, CustomStatus: `message: "m"`, Details: `d: "x"`})
	check := func(wantHits, wantMisses int) {
		t.Helper()
		if _, err := r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, deployment(nil), nil); err != nil {
			t.Fatal(err)
		}
		if counts[true] != wantHits || counts[false] != wantMisses {
			t.Fatalf("hits=%d misses=%d, want %d %d", counts[true], counts[false], wantHits, wantMisses)
		}
	}
	check(0, 3) // the three status parts
	check(3, 3)
	def.ResourceVersion = "2"
	check(3, 6)
	def.Spec.Status.CustomStatus = `_p: parameter.port, message: "m"`
	check(5, 8) // customStatus and the template (for parameter defaults) miss
	check(9, 8)

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if h, err := r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, deployment(nil), nil); err != nil || h.Message != "m" {
				t.Errorf("concurrent: %+v %v", h, err)
			}
		}()
	}
	wg.Wait()
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func BenchmarkComponentHealth_Webservice(b *testing.B) {
	defs, err := cli.LoadDefinitions(filepath.Join("..", "..", "config", "definitions"))
	if err != nil {
		b.Fatal(err)
	}
	r := render.NewRenderer()
	a := webApp(&testing.T{}, "webservice", map[string]any{"image": "nginx", "ports": []any{map[string]any{"port": 80}}})
	res, err := r.Render(a, defs, healthCtx)
	if err != nil {
		b.Fatal(err)
	}
	live := res.Components[0].Workload.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, int64(1), "spec", "replicas")
	live.SetGeneration(1)
	live.Object["status"] = map[string]any{"replicas": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(1)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.ComponentHealth(defs.Components["webservice"], a.Spec.Components[0], healthCtx, a, live, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCheckStatus_ReportsSyntaxErrors(t *testing.T) {
	r := render.NewRenderer()
	for _, defs := range defSets(t) {
		for name, def := range defs.Components {
			if err := r.CheckStatus(render.KindComponent, name, def.Spec.Status); err != nil {
				t.Errorf("published definition: %v", err)
			}
		}
		for name, def := range defs.Traits {
			if err := r.CheckStatus(render.KindTrait, name, def.Spec.Status); err != nil {
				t.Errorf("published definition: %v", err)
			}
		}
	}
	err := r.CheckStatus(render.KindTrait, "bad", &v1beta1.Status{CustomStatus: "message: (", HealthPolicy: "isHealth: true"})
	if err == nil || !strings.Contains(err.Error(), `TraitDefinition "bad": status.customStatus:`) {
		t.Fatalf("got %v", err)
	}
}

func TestOutputOf_MapsRenderedObjectsToOutputsKeys(t *testing.T) {
	def := componentDef("deploy", deployTemplate+`
outputs: config: {apiVersion: "v1", kind: "ConfigMap"}
`)
	svc := traitDef("svc", `
parameter: {}
outputs: service: {apiVersion: "v1", kind: "Service", spec: ports: [{port: 80}]}
`, "")
	defs := defsWith(svc)
	defs.Components["deploy"] = def
	res := mustRender(t, app(t, map[string]any{"image": "nginx"}, trait(t, "svc", map[string]any{})), defs)
	comp := res.Components[0]
	if tr, name := render.OutputOf(comp.Workload); tr != "" || name != "" {
		t.Errorf("workload: %q %q", tr, name)
	}
	got := map[string]string{}
	for _, aux := range comp.Auxiliaries {
		tr, name := render.OutputOf(aux.Object)
		got[name] = tr
	}
	if want := map[string]string{"config": "", "service": "svc"}; toJSON(t, got) != toJSON(t, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestComponentHealth_StatusPartsSeeContextStatus: details' fields reach
// healthPolicy and customStatus as context.status.details, and
// healthPolicy's result reaches customStatus as context.status.healthy.
func TestComponentHealth_StatusPartsSeeContextStatus(t *testing.T) {
	def := componentDef("deploy", deployTemplate)
	def.Spec.Status = &v1beta1.Status{
		Details:      "ready: context.output.status.readyReplicas\n$want: parameter.replicas\n",
		HealthPolicy: "isHealth: context.status.details.ready >= context.status.details.$want\n",
		CustomStatus: `message: "\(context.status.details.ready)/\(context.status.details.$want), healthy: \(context.status.healthy)"`,
	}
	r := render.NewRenderer()
	a := app(t, map[string]any{"image": "nginx", "replicas": 3})
	live := func(ready int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web"}, "status": map[string]any{"readyReplicas": ready}}}
	}
	for _, tt := range []struct {
		ready   int64
		healthy bool
		message string
	}{{1, false, "1/3, healthy: false"}, {3, true, "3/3, healthy: true"}} {
		h, err := r.ComponentHealth(def, a.Spec.Components[0], healthCtx, a, live(tt.ready), nil)
		if err != nil || h.Healthy != tt.healthy || h.Message != tt.message || !reflect.DeepEqual(h.Details, map[string]string{"ready": toJSON(t, tt.ready)}) {
			t.Errorf("ready %d: %+v, %v", tt.ready, h, err)
		}
	}
}
