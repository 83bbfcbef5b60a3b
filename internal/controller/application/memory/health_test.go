package memory

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
)

func entry(kind, apiVersion, name, trait string) v1beta1.ManagedResource {
	e := v1beta1.ManagedResource{Data: &runtime.RawExtension{Raw: []byte(`{}`)}}
	e.APIVersion, e.Kind, e.Namespace, e.Name = apiVersion, kind, "default", name
	e.Component, e.Trait = "web", trait
	return e
}

// A health reused from the cache names the workload a PostDispatch trait
// renders over, found in the pass's own entries (with their manifests),
// without a manifest decoded; a component without such traits keeps no
// key.
func TestHealthCache_KeepsTheWorkloadOfPostDispatchComponents(t *testing.T) {
	app := types.NamespacedName{Namespace: "default", Name: "app"}
	dep, svc := entry("Deployment", "apps/v1", "web", ""), entry("Service", "v1", "web", "expose")
	var c healthCache
	c.Put(app, []CachedHealth{
		{Key: "web", Fingerprint: 7, Health: facts.ComponentHealth{WorkloadHealthy: true}, Workload: WorkloadKey(&dep, true)},
		{Key: "plain", Fingerprint: 8, Workload: WorkloadKey(&dep, false)},
	})

	h, ok := c.Get(app, "web", 7)
	if !ok || !h.Health.WorkloadHealthy {
		t.Fatalf("Get = %+v, %v; want the healthy entry kept", h, ok)
	}
	// The next pass decodes its tracker anew: other slices, same keys.
	next := []v1beta1.ManagedResource{svc, dep}
	next[1].Data = &runtime.RawExtension{Raw: []byte(`{"kind":"Deployment"}`)}
	wl := h.WorkloadIn(next)
	if wl != &next[1] {
		t.Fatalf("WorkloadIn = %+v; want the Deployment entry of this pass", wl)
	}
	if got := h.WorkloadIn([]v1beta1.ManagedResource{svc}); got != nil {
		t.Errorf("WorkloadIn without the workload = %+v; want nil", got)
	}
	if _, ok := c.Get(app, "web", 9); ok {
		t.Error("a health was reused for another fingerprint")
	}
	plain, _ := c.Get(app, "plain", 8)
	if plain.Workload != nil || plain.WorkloadIn(next) != nil {
		t.Errorf("a component without PostDispatch traits kept a workload: %+v", plain.Workload)
	}
}

// A pass that found every health kept leaves the entries as they are; a
// changed fingerprint, or a component gone, replaces them.
func TestHealthCache_PutKeepsWhatASettledPassFound(t *testing.T) {
	app := types.NamespacedName{Namespace: "default", Name: "app"}
	var c healthCache
	c.Put(app, []CachedHealth{{Key: "web", Fingerprint: 7, Health: facts.ComponentHealth{WorkloadHealthy: true}}, {Key: "db", Fingerprint: 8}})
	kept := &c.apps[app][0]
	c.Put(app, []CachedHealth{{Key: "web", Fingerprint: 7, Health: facts.ComponentHealth{WorkloadHealthy: true}}, {Key: "db", Fingerprint: 8}})
	if &c.apps[app][0] != kept {
		t.Error("a settled pass replaced the kept entries")
	}
	c.Put(app, []CachedHealth{{Key: "web", Fingerprint: 9}, {Key: "db", Fingerprint: 8}})
	if h, ok := c.Get(app, "web", 9); !ok || h.Health.WorkloadHealthy {
		t.Errorf("a new fingerprint's health = %+v, %v; want the new one", h, ok)
	}
	c.Put(app, []CachedHealth{{Key: "web", Fingerprint: 9}})
	if _, ok := c.Get(app, "db", 8); ok {
		t.Error("a component gone from the pass stayed kept")
	}
}
