package inventory

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
)

// The tables below describe trackers as the controller writes them, for
// an Application "app" in namespace "ns" of UID "uid-1".

const uid = "uid-1"

// cm is the entry of a ConfigMap named after its component (k8s-objects),
// with its manifest holding data.v = value.
func cm(component, value string) v1beta1.ManagedResource {
	raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": component, "namespace": "ns"}, "data": map[string]any{"v": value}})
	return v1beta1.ManagedResource{
		ClusterObjectReference: v1beta1.ClusterObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: component},
		OAMObjectReference:     v1beta1.OAMObjectReference{Component: component},
		Data:                   &runtime.RawExtension{Raw: raw},
	}
}

// meta is e without its manifest: listed, not applied.
func meta(e v1beta1.ManagedResource) v1beta1.ManagedResource { e.Data = nil; return e }

// marked is e marked deleted.
func marked(e v1beta1.ManagedResource) v1beta1.ManagedResource { e.Deleted = true; return e }

// skip is e marked skipGC (recorded under a never or read-only rule).
func skip(e v1beta1.ManagedResource) v1beta1.ManagedResource { e.SkipGC = true; return e }

// version is the versioned tracker of publishVersion (or "v<gen>") pv at
// generation gen, recorded by a Steward that records root objects in
// versions.
func version(pv string, gen int64, entries ...v1beta1.ManagedResource) *v1beta1.ResourceTracker {
	rt := earlierVersion(pv, gen, entries...)
	rt.Annotations = map[string]string{tracker.AnnotationRootObjects: tracker.RootObjectsRecorded}
	return rt
}

// earlierVersion is a versioned tracker recorded before versions recorded
// root objects.
func earlierVersion(pv string, gen int64, entries ...v1beta1.ManagedResource) *v1beta1.ResourceTracker {
	return trackerOf("app.ns."+pv, v1beta1.ResourceTrackerTypeVersioned, uid, gen, entries)
}

func root(entries ...v1beta1.ManagedResource) *v1beta1.ResourceTracker {
	return trackerOf("app.ns.root", v1beta1.ResourceTrackerTypeRoot, uid, 1, entries)
}

// earlierApp is a versioned tracker an earlier Application of the same
// name left.
func earlierApp(name string, gen int64, entries ...v1beta1.ManagedResource) *v1beta1.ResourceTracker {
	return trackerOf(name, v1beta1.ResourceTrackerTypeVersioned, "uid-0", gen, entries)
}

// kubevela is a versioned tracker KubeVela left: no tracker type label.
func kubevela(name string, gen int64, entries ...v1beta1.ManagedResource) *v1beta1.ResourceTracker {
	rt := trackerOf(name, v1beta1.ResourceTrackerTypeVersioned, uid, gen, entries)
	delete(rt.Labels, v1beta1.LabelTrackerType)
	return rt
}

func trackerOf(name string, typ v1beta1.ResourceTrackerType, appUID string, gen int64, entries []v1beta1.ManagedResource) *v1beta1.ResourceTracker {
	return &v1beta1.ResourceTracker{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			v1beta1.LabelAppName: "app", v1beta1.LabelAppNamespace: "ns", v1beta1.LabelAppUID: appUID,
			v1beta1.LabelTrackerType: string(typ)}},
		Spec: v1beta1.ResourceTrackerSpec{Type: typ, ApplicationGeneration: gen, ManagedResources: entries},
	}
}

// spec is the part of an Application the Keeper reads: its components
// (k8s-objects each, unless named "type:name") and its policies as JSON
// ("" for none).
func keeper(t *testing.T, components []string, policies string) Keeper {
	t.Helper()
	app := &v1beta1.Application{}
	for _, c := range components {
		typ, name, ok := strings.Cut(c, ":")
		if !ok {
			typ, name = "k8s-objects", c
		}
		app.Spec.Components = append(app.Spec.Components, v1beta1.ApplicationComponent{Name: name, Type: typ})
	}
	if policies != "" {
		if err := json.Unmarshal([]byte(policies), &app.Spec.Policies); err != nil {
			t.Fatalf("policies %s: %v", policies, err)
		}
	}
	rules, err := policy.Parse(app)
	if err != nil {
		t.Fatal(err)
	}
	return KeeperOf(app, rules)
}

// gc is a garbage-collect policy with one rule per component name:
// gc("a", "onAppDelete", "b", "never").
func gc(pairs ...string) string {
	var rules []string
	for i := 0; i+1 < len(pairs); i += 2 {
		rules = append(rules, fmt.Sprintf(`{"selector": {"componentNames": [%q]}, "strategy": %q}`, pairs[i], pairs[i+1]))
	}
	return `[{"name": "gc", "type": "garbage-collect", "properties": {"rules": [` + strings.Join(rules, ", ") + `]}}]`
}

// readOnly is a read-only policy for the given components.
func readOnly(components ...string) string {
	raw, _ := json.Marshal(components)
	return `[{"name": "ro", "type": "read-only", "properties": {"rules": [{"selector": {"componentNames": ` + string(raw) + `}}]}}]`
}

// shown renders decisions as "tracker: object (why)", sorted, for
// comparing with a table.
func shown(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s: %s (%s)", d.Tracker.Name, d.Entry.Name, d.Why))
	}
	slices.Sort(out)
	return out
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}
