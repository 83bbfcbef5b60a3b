package tracker

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
)

// benchTracker is a zstd tracker of n Deployments, as the API server
// returns it (with a UID and a resourceVersion).
func benchTracker(b testing.TB, n int, compression v1beta1.CompressionType) *v1beta1.ResourceTracker {
	b.Helper()
	entries := make([]v1beta1.ManagedResource, 0, n)
	for i := range n {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": fmt.Sprintf("web-%d", i), "namespace": "default", "labels": map[string]any{"app.oam.dev/name": "web"}},
			"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27", "resources": map[string]any{"limits": map[string]any{"cpu": "500m"}}}},
			}}},
		}}
		e, err := Entry("", "web", "", obj)
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, e)
	}
	rt := &v1beta1.ResourceTracker{}
	rt.Name, rt.UID, rt.ResourceVersion = "web-v1", types.UID("uid-web-v1"), "1"
	if err := Encode(&rt.Spec, entries, compression); err != nil {
		b.Fatal(err)
	}
	return rt
}

// BenchmarkEncode_Zstd measures writing a tracker's entries.
func BenchmarkEncode_Zstd(b *testing.B) {
	rt := benchTracker(b, 100, v1beta1.CompressionZstd)
	entries, err := Entries(rt)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var spec v1beta1.ResourceTrackerSpec
		if err := Encode(&spec, entries, v1beta1.CompressionZstd); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEntries_ZstdPass measures the reads of one reconcile pass:
// the controller reads the current tracker's entries six times (reuse,
// apply, health, garbage collection, status, size metrics). Each
// iteration is a new resourceVersion, as after a write.
func BenchmarkEntries_ZstdPass(b *testing.B) {
	rt := benchTracker(b, 100, v1beta1.CompressionZstd)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		rt.ResourceVersion = fmt.Sprint(i)
		for range 5 {
			if _, err := Entries(rt); err != nil {
				b.Fatal(err)
			}
		}
		Sizes(rt)
	}
}
