package order

import (
	"slices"
	"sort"

	"github.com/steward-oam/steward/api/v1beta1"
)

// ByDependency orders the entries of several trackers so that each
// component's objects come after those of the components it depends on
// (deps, from the Application's spec); otherwise components keep the order
// in which they first appear, and entries of one component their recorded
// order, except that Namespaces and CustomResourceDefinitions go first
// (the rest of the component may live in them). A cycle is broken where
// it is first entered, as when the version was rendered.
func ByDependency(entries []v1beta1.ManagedResource, deps map[string][]string) []v1beta1.ManagedResource {
	present := map[string]bool{}
	var names []string
	for _, e := range entries {
		if !present[e.Component] {
			present[e.Component] = true
			names = append(names, e.Component)
		}
	}
	rank := make(map[string]int, len(names))
	visiting := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if _, done := rank[name]; done || visiting[name] {
			return
		}
		visiting[name] = true
		for _, d := range deps[name] {
			if present[d] {
				visit(d)
			}
		}
		visiting[name] = false
		rank[name] = len(rank)
	}
	for _, n := range names {
		visit(n)
	}
	container := func(e v1beta1.ManagedResource) int {
		if KindClass(e.Kind) == LastClass {
			return 0
		}
		return 1
	}
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b v1beta1.ManagedResource) int {
		if ra, rb := rank[a.Component], rank[b.Component]; ra != rb {
			return ra - rb
		}
		return container(a) - container(b)
	})
	return out
}

// Dependencies maps each component to the components it depends on.
func Dependencies(app *v1beta1.Application) map[string][]string {
	out := make(map[string][]string, len(app.Spec.Components))
	for _, c := range app.Spec.Components {
		out[c.Name] = c.DependsOn
	}
	return out
}

func FailedDependency(deps []string, failed map[string]bool) string {
	for _, d := range deps {
		if failed[d] {
			return d
		}
	}
	return ""
}

func AppendOnce(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// KindClass orders deletions: workloads first (they use the rest), then
// what exposes them, then configuration, and Namespaces and
// CustomResourceDefinitions last, once everything else is gone (deleting
// them first would delete their contents behind the tracker's back).
func KindClass(kind string) int {
	switch kind {
	case "Namespace", "CustomResourceDefinition":
		return 3
	case "ConfigMap", "Secret", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
		"PersistentVolumeClaim", "PersistentVolume", "StorageClass", "PriorityClass":
		return 2
	case "Service", "Ingress", "HTTPRoute", "Gateway", "NetworkPolicy", "HorizontalPodAutoscaler", "PodDisruptionBudget":
		return 1
	default:
		return 0
	}
}

const LastClass = 3

// ForDeletion sorts entries for deletion: by kind class, and within a
// class in reverse dependency order (entries are recorded in dependency
// order, so a component's position in the list stands for its place).
func ForDeletion(entries []v1beta1.ManagedResource) []v1beta1.ManagedResource {
	pos := map[string]int{}
	for i, e := range entries {
		if _, ok := pos[e.Component]; !ok {
			pos[e.Component] = i
		}
	}
	out := append([]v1beta1.ManagedResource(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := KindClass(out[i].Kind), KindClass(out[j].Kind)
		if ci != cj {
			return ci < cj
		}
		return pos[out[i].Component] > pos[out[j].Component]
	})
	return out
}
