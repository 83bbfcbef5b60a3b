package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	got := inDependencyOrder(append(current, root...), deps)
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	if want := "space,db,data,app,app"; strings.Join(names, ",") != want {
		t.Errorf("order = %s, want %s", strings.Join(names, ","), want)
	}
	// A namespace of a component goes before the rest of it; a cycle keeps
	// the order of first appearance.
	got = inDependencyOrder([]v1beta1.ManagedResource{entry("a", "Deployment", "d"), entry("a", "Namespace", "n"), entry("b", "Service", "s")},
		map[string][]string{"a": {"b"}, "b": {"a"}})
	names = names[:0]
	for _, e := range got {
		names = append(names, e.Name)
	}
	if want := "s,n,d"; strings.Join(names, ",") != want {
		t.Errorf("order = %s, want %s", strings.Join(names, ","), want)
	}
}

func TestNewestFirst_CurrentThenRootThenNewerVersions(t *testing.T) {
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "new", Generation: 3}}
	rt := func(name string, typ v1beta1.ResourceTrackerType, gen int64, uid string) v1beta1.ResourceTracker {
		return v1beta1.ResourceTracker{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1beta1.LabelAppUID: uid}},
			Spec:       v1beta1.ResourceTrackerSpec{Type: typ, ApplicationGeneration: gen},
		}
	}
	v := v1beta1.ResourceTrackerTypeVersioned
	trackers := []v1beta1.ResourceTracker{
		rt("web.ns.v1", v, 1, "new"), rt("web.ns.v9", v, 9, "old"), rt("web.ns.root", v1beta1.ResourceTrackerTypeRoot, 3, "new"),
		rt("web.ns.v2", v, 2, "new"), rt("web.ns.v3", v, 3, "new"),
	}
	var names []string
	for _, t := range newestFirst(app, trackers) {
		names = append(names, t.Name)
	}
	if want := "web.ns.v3,web.ns.root,web.ns.v2,web.ns.v1,web.ns.v9"; strings.Join(names, ",") != want {
		t.Errorf("order = %s, want %s", strings.Join(names, ","), want)
	}
}
