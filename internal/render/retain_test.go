package render

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// heapAfterGC is the heap in use once everything unreachable is collected.
func heapAfterGC() uint64 {
	for range 5 {
		runtime.GC() // objects with finalizers take more than one cycle
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// renderAndCheck is one re-sync pass of a webservice app with three
// traits: a render, then the component's health over its live workload.
// Names and revisions vary the way a fleet's do.
func renderAndCheck(tb testing.TB, r *Renderer, i int) {
	tb.Helper()
	app, defs := benchFixture(tb)
	app.Name = fmt.Sprintf("shop-%d", i%100)
	actx := AppContext{AppRevision: fmt.Sprintf("%s-v%d", app.Name, i), AppRevisionNum: int64(i)}
	res, err := r.Render(app, defs, actx)
	if err != nil {
		tb.Fatal(err)
	}
	live := res.Components[0].Workload.DeepCopy()
	_ = unstructured.SetNestedField(live.Object, int64(1), "spec", "replicas")
	live.SetGeneration(1)
	live.Object["status"] = map[string]any{"replicas": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(1)}
	if _, err := r.ComponentHealth(defs.Components["webservice"], app.Spec.Components[0], actx, app, live, nil); err != nil {
		tb.Fatal(err)
	}
}

// TestRenderer_RetainsNothingPerEvaluation renders and health-checks the
// same definitions many times: the heap after a collection must not grow
// with the number of passes, or a controller re-syncing its fleet runs
// out of memory over time.
func TestRenderer_RetainsNothingPerEvaluation(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap over hundreds of renders")
	}
	r := NewRenderer()
	for i := range 50 { // compile and warm every cache first
		renderAndCheck(t, r, i)
	}
	before := heapAfterGC()
	const passes = 200
	for i := range passes {
		renderAndCheck(t, r, i)
	}
	after := heapAfterGC()
	runtime.KeepAlive(r) // the compiled templates count in both readings
	growth := int64(after) - int64(before)
	t.Logf("live heap after GC: %.2f MiB before, %.2f MiB after %d more passes (%+d B per pass)",
		float64(before)/(1<<20), float64(after)/(1<<20), passes, growth/passes)
	// Allow noise of a few KiB per pass: a leak of one compiled document
	// per evaluation is tens of KiB per pass.
	if growth > passes*2<<10 {
		t.Errorf("heap grew by %d KiB over %d passes (%d B per pass): render or health keeps per-evaluation state alive",
			growth>>10, passes, growth/passes)
	}
}

// BenchmarkRenderer_Retained reports the bytes still reachable after each
// render plus health check (retained-B/op), next to the usual allocation
// figures. A bounded renderer reports about zero.
func BenchmarkRenderer_Retained(b *testing.B) {
	r := NewRenderer()
	for i := range 20 {
		renderAndCheck(b, r, i)
	}
	before := heapAfterGC()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		renderAndCheck(b, r, i)
		i++
	}
	b.StopTimer()
	after := heapAfterGC()
	runtime.KeepAlive(r)
	b.ReportMetric(float64(int64(after)-int64(before))/float64(i), "retained-B/op")
}
