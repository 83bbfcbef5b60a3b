package order

import (
	"strings"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

func entry(component, kind, name string) v1beta1.ManagedResource {
	e := v1beta1.ManagedResource{}
	e.Component, e.Kind, e.Name = component, kind, name
	return e
}

func TestInDependencyOrder_AcrossTrackers(t *testing.T) {
	// The version's tracker lists app and db; root lists the namespace
	// both depend on, and db's volume claim.
	current := []v1beta1.ManagedResource{entry("db", "StatefulSet", "db"), entry("app", "Deployment", "app"), entry("app", "ConfigMap", "app")}
	root := []v1beta1.ManagedResource{entry("space", "Namespace", "space"), entry("db", "PersistentVolumeClaim", "data")}
	deps := map[string][]string{"app": {"db"}, "db": {"space"}}
	got := ByDependency(append(current, root...), deps)
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if want := "space,db,data,app,app"; strings.Join(names, ",") != want {
		t.Errorf("order = %s, want %s", strings.Join(names, ","), want)
	}
	// A namespace of a component goes before the rest of it; a cycle keeps
	// the order of first appearance.
	got = ByDependency([]v1beta1.ManagedResource{entry("a", "Deployment", "d"), entry("a", "Namespace", "n"), entry("b", "Service", "s")},
		map[string][]string{"a": {"b"}, "b": {"a"}})
	names = names[:0]
	for _, e := range got {
		names = append(names, e.Name)
	}
	if want := "s,n,d"; strings.Join(names, ",") != want {
		t.Errorf("order = %s, want %s", strings.Join(names, ","), want)
	}
}
