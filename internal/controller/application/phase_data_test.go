package application

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/tracker"
)

// When values arrive, only the steps taking them are taken from the new
// render: every other step keeps the manifests its version recorded,
// whatever a definition upgraded since would render now.
func TestRefilled_TakesOnlyTheStepsWhoseValuesArrived(t *testing.T) {
	entry := func(step, name, data string) v1beta1.ManagedResource {
		e := v1beta1.ManagedResource{Step: step, Data: &runtime.RawExtension{Raw: []byte(data)}}
		e.APIVersion, e.Kind, e.Namespace, e.Name = "v1", "ConfigMap", "ns", name
		return e
	}
	recorded := []v1beta1.ManagedResource{
		entry("a", "a", `{"data":{"v":"recorded"}}`),
		entry("c", "c-old", `{"data":{"host":"10.0.0.1"}}`),
	}
	s := &facts.Pass{Trackers: facts.Trackers{Current: &v1beta1.ResourceTracker{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{tracker.AnnotationWorkflowInputs: `{"spec":"x","steps":{"c":"old","d":"kept"}}`}},
		Spec:       v1beta1.ResourceTrackerSpec{ManagedResources: recorded},
	}}, RenderReport: facts.RenderReport{Refill: map[string]bool{"c": true}, Rendered: &facts.RenderedInputs{Spec: "x", Steps: map[string]string{"c": "new", "d": "other"}}}}
	rendered := []v1beta1.ManagedResource{
		entry("a", "a", `{"data":{"v":"upgraded definition"}}`),
		entry("c", "c", `{"data":{"host":"10.0.0.7"}}`),
	}
	root := []v1beta1.ManagedResource{entry("a", "a-root", `{}`), entry("c", "c-root", `{}`)}
	v, r, err := record.Refilled(s, rendered, root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range v {
		got[e.Name] = string(e.Data.Raw)
	}
	want := map[string]string{"a": `{"data":{"v":"recorded"}}`, "c": `{"data":{"host":"10.0.0.7"}}`}
	if len(got) != len(want) || got["a"] != want["a"] || got["c"] != want["c"] {
		t.Fatalf("versioned entries %v, want %v (c-old left out: it is marked deleted when recorded)", got, want)
	}
	if len(r) != 1 || r[0].Name != "c-root" {
		t.Fatalf("root entries %+v, want c-root alone", r)
	}
	if s.Rendered.Steps["c"] != "new" || s.Rendered.Steps["d"] != "kept" {
		t.Fatalf("rendered steps %v: c is rendered anew, d keeps what was recorded", s.Rendered.Steps)
	}
}

func entry(component, kind, name string) v1beta1.ManagedResource {
	e := v1beta1.ManagedResource{}
	e.Component, e.Kind, e.Name = component, kind, name
	return e
}
