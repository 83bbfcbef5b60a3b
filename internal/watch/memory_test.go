package watch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// managedObjects is the number of objects the memory benchmarks hold, in
// apps of objectsPerApp like the bench's managed scenario.
const (
	managedObjects = 8000
	objectsPerApp  = 8
)

// decoded returns object i as the metadata informer decodes it: every
// string its own allocation, labels and annotations as Steward writes
// them.
func decoded(i int) *metav1.PartialObjectMetadata {
	app := i / objectsPerApp
	s := func(format string, a ...any) string { return strings.Clone(fmt.Sprintf(format, a...)) }
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: s("apps/v1"), Kind: s("Deployment")},
		ObjectMeta: metav1.ObjectMeta{
			Name:              s("bench-app-%05d-part-%d", app, i%objectsPerApp),
			Namespace:         s("bench"),
			UID:               types.UID(s("6d1c2b7e-3f4a-4c8e-9b1d-%012d", i)),
			ResourceVersion:   s("%d", 100000+i),
			Generation:        1,
			CreationTimestamp: metav1.NewTime(time.Unix(1700000000, 0)),
			Labels: map[string]string{
				s(v1beta1.LabelAppName):      s("bench-app-%05d", app),
				s(v1beta1.LabelAppNamespace): s("bench"),
				s("app.oam.dev/component"):   s("part-%d", i%objectsPerApp),
			},
			Annotations: map[string]string{s("app.oam.dev/last-applied"): s("%0600d", i)},
		},
	}
}

func trackerKeyOf(i int) tracker.Key {
	m := decoded(i)
	group, kind := "", "ConfigMap"
	switch i % objectsPerApp {
	case 0:
		group, kind = "apps", "Deployment"
	case 1:
		kind = "Service"
	}
	return tracker.Key{Group: strings.Clone(group), Kind: strings.Clone(kind), Namespace: m.Namespace, Name: m.Name}
}

func appOf(i int) types.NamespacedName {
	return types.NamespacedName{Namespace: strings.Clone("bench"), Name: fmt.Sprintf("bench-app-%05d", i/objectsPerApp)}
}

// heapPerObject reports the heap that fill keeps per managed object.
func heapPerObject(b *testing.B, fill func() any) {
	b.Helper()
	var perObject float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := fill()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(kept)
		perObject = float64(after.HeapAlloc-before.HeapAlloc) / managedObjects
	}
	b.ReportMetric(perObject, "B/object")
}

// BenchmarkMemory_CacheEntry is the heap a kind's store keeps per object:
// its key, resourceVersion and owner.
func BenchmarkMemory_CacheEntry(b *testing.B) {
	heapPerObject(b, func() any {
		s := newStore(func(storeKey, version, []types.NamespacedName, bool) {}, nil)
		for i := range managedObjects {
			if err := s.Add(decoded(i)); err != nil {
				b.Fatal(err)
			}
		}
		return s
	})
}

// BenchmarkMemory_AppliedState is the heap the Watcher keeps per object
// Steward applied: its key, resourceVersion, UID and digest, and the kinds
// of each app.
func BenchmarkMemory_AppliedState(b *testing.B) {
	heapPerObject(b, func() any {
		w := New(Options{})
		for a := 0; a < managedObjects; a += objectsPerApp {
			keys := make([]tracker.Key, 0, objectsPerApp)
			for i := a; i < a+objectsPerApp; i++ {
				keys = append(keys, trackerKeyOf(i))
			}
			app := appOf(a)
			w.Use(app, keys)
			for i, k := range keys {
				w.Begin(app, k)(&decoded(a+i).ObjectMeta, uint64(i))
			}
		}
		return w
	})
}
