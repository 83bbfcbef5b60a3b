package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/sandbox"
)

// benchFixture is a webservice with scaler, labels and expose, rendered
// with the built-in definitions.
func benchFixture(b testing.TB) (*v1beta1.Application, Definitions) {
	b.Helper()
	defs := Definitions{Components: map[string]*v1beta1.ComponentDefinition{}, Traits: map[string]*v1beta1.TraitDefinition{}}
	read := func(name string, into any) {
		data, err := os.ReadFile(filepath.Join("..", "..", "config", "definitions", name+".yaml"))
		if err != nil {
			b.Fatal(err)
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			b.Fatal(err)
		}
	}
	web := &v1beta1.ComponentDefinition{}
	read("webservice", web)
	web.UID, web.ResourceVersion = types.UID("web"), "1"
	defs.Components["webservice"] = web
	for _, n := range []string{"scaler", "labels", "expose"} {
		td := &v1beta1.TraitDefinition{}
		read(n, td)
		td.UID, td.ResourceVersion = types.UID(n), "1"
		defs.Traits[n] = td
	}
	raw := func(v any) *runtime.RawExtension {
		data, _ := json.Marshal(v)
		return &runtime.RawExtension{Raw: data}
	}
	app := &v1beta1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "prod"},
		Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{{
			Name: "web", Type: "webservice",
			Properties: raw(map[string]any{"image": "nginx:1.27", "ports": []any{map[string]any{"port": 80, "expose": true}}, "cpu": "0.5"}),
			Traits: []v1beta1.ApplicationTrait{
				{Type: "scaler", Properties: raw(map[string]any{"replicas": 3})},
				{Type: "labels", Properties: raw(map[string]any{"tier": "web"})},
				{Type: "expose", Properties: raw(map[string]any{"ports": []any{map[string]any{"port": 8080}}})},
			},
		}}},
	}
	return app, defs
}

func BenchmarkRender_WarmCache(b *testing.B) {
	app, defs := benchFixture(b)
	r := NewRenderer()
	if _, err := r.Render(app, defs, AppContext{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Render(app, defs, AppContext{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRender_Recompile(b *testing.B) {
	app, defs := benchFixture(b)
	r := NewRenderer()
	r.noCache = true
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Render(app, defs, AppContext{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender_WarmCache_Sandbox is BenchmarkRender_WarmCache through
// the controller's evaluator pool (one child process): the cost of the
// budget on a normal render. parent-cpu-ns/op and evaluator-cpu-ns/op
// split the CPU between the two processes.
func BenchmarkRender_WarmCache_Sandbox(b *testing.B) {
	app, defs := benchFixture(b)
	pool, err := sandbox.New(sandbox.Options{Evaluators: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	r := NewRenderer(WithEvaluator(pool))
	if _, err := r.Render(app, defs, AppContext{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0, child0 := processCPU(), pool.CPUTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Render(app, defs, AppContext{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "parent-cpu-ns/op")
	b.ReportMetric(float64(pool.CPUTime()-child0)/float64(b.N), "evaluator-cpu-ns/op")
}

// BenchmarkRender_WarmCache_CPU is BenchmarkRender_WarmCache with the
// process's CPU per render, to compare with the sandbox's.
func BenchmarkRender_WarmCache_CPU(b *testing.B) {
	app, defs := benchFixture(b)
	r := NewRenderer()
	if _, err := r.Render(app, defs, AppContext{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Render(app, defs, AppContext{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "parent-cpu-ns/op")
}

// processCPU is this process's CPU time (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
