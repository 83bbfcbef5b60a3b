package facts

import (
	"maps"
	"slices"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ComponentHealth is the health of one component and its traits.
type ComponentHealth struct {
	render.Health
	Traits []v1beta1.ApplicationTraitStatus
	// WorkloadHealthy is the component's own health, its traits aside:
	// its PostDispatch traits render once it is true.
	WorkloadHealthy bool
}

// PlacedWorkload is a component's workload in one placement (health key).
type PlacedWorkload struct {
	Key, Component, Cluster, Step string
	Entry                         v1beta1.ManagedResource
}

// HealthKey identifies a component in one cluster and, in a workflow run
// step by step, one step: two steps that deliver a component to two
// namespaces of one cluster are judged each on its own objects.
func HealthKey(component, clusterName, step string) string {
	k := component + "@" + v1beta1.ClusterKey(clusterName)
	if step != "" {
		k += "/" + step
	}
	return k
}

// SplitHealthKey returns the component, cluster and step of a key.
func SplitHealthKey(k string) (component, clusterName, step string) {
	component, rest, _ := strings.Cut(k, "@")
	clusterName, step, _ = strings.Cut(rest, "/")
	return component, clusterName, step
}

// ComponentManifests returns the recorded manifests of a component, in
// entry order.
func ComponentManifests(entries []v1beta1.ManagedResource, component string) []*unstructured.Unstructured {
	out, _ := ManifestsAndWorkload(entries, component)
	return out
}

// HasManifests reports whether entries hold a manifest of component that
// manifestsAndWorkload would decode.
func HasManifests(entries []v1beta1.ManagedResource, component string) bool {
	return slices.ContainsFunc(entries, func(e v1beta1.ManagedResource) bool {
		return e.Component == component && inventory.Applies(e)
	})
}

// ManifestsAndWorkload is componentManifests with the component's
// workload entry (nil when it has none).
func ManifestsAndWorkload(entries []v1beta1.ManagedResource, component string) ([]*unstructured.Unstructured, *v1beta1.ManagedResource) {
	var out []*unstructured.Unstructured
	var workload *v1beta1.ManagedResource
	for i, e := range entries {
		if e.Component != component || e.Deleted || e.Data == nil {
			continue
		}
		m, err := tracker.Manifest(e)
		if err != nil || m == nil {
			continue
		}
		if trait, name := render.OutputOf(m); workload == nil && e.Trait == "" && trait == "" && name == "" {
			workload = &entries[i]
		}
		out = append(out, m)
	}
	return out, workload
}

// KstatusAll is healthy when every object is ready by kstatus rules. The
// message names the first object that is not, in the order given: callers
// pass a stable order so that the same facts give the same message, and a
// steady state writes no status and emits no event.
func KstatusAll(objs []*unstructured.Unstructured) render.Health {
	for _, o := range objs {
		if o == nil {
			return render.Health{Message: "an object does not exist"}
		}
		if h := render.KstatusHealth(o); !h.Healthy {
			h.Message = o.GetKind() + " " + o.GetName() + ": " + h.Message
			return h
		}
	}
	return render.Health{Healthy: true}
}

// Values returns the objects of m in key order, never in map order.
func Values(m map[string]*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
