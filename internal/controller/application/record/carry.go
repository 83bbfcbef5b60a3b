package record

import (
	"encoding/json"
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CarryPostTraits adds to a new render the objects the kept version's
// PostDispatch traits rendered, for components that still have those
// traits: they are rendered again only once the workload is healthy, and
// must not be deleted (a Service re-created) in between.
func CarryPostTraits(s *facts.Pass, defs render.Definitions, versioned, root []v1beta1.ManagedResource) ([]v1beta1.ManagedResource, []v1beta1.ManagedResource) {
	post := map[string]map[string]bool{}
	for _, c := range s.App.Spec.Components {
		if p := PostDispatchTraits(c, defs); p != nil {
			post[c.Name] = p
		}
	}
	if len(post) == 0 {
		return versioned, root
	}
	carry := func(rt *v1beta1.ResourceTracker, into []v1beta1.ManagedResource) []v1beta1.ManagedResource {
		if rt == nil {
			return into
		}
		existing, err := tracker.Entries(rt)
		if err != nil {
			return into
		}
		have := tracker.IndexOf(into)
		for _, e := range existing {
			if e.Deleted || e.Data == nil || !post[e.Component][e.Trait] {
				continue
			}
			if _, ok := have[tracker.KeyOf(e)]; ok {
				continue
			}
			into = append(into, e)
		}
		return into
	}
	return carry(s.Current, versioned), carry(s.Root, root)
}

// CarryStepEntries adds to a new render of a version the entries its
// custom steps recorded (by the flow the version records), which no
// render produces: recording the render alone would mark them deleted.
func CarryStepEntries(rt *v1beta1.ResourceTracker, versioned []v1beta1.ManagedResource) ([]v1beta1.ManagedResource, error) {
	raw := tracker.Mark(rt, tracker.AnnotationWorkflowSteps)
	if raw == "" {
		return versioned, nil
	}
	flow, err := workflow.Decode(raw)
	if err != nil {
		return nil, err
	}
	custom := map[string]bool{}
	for st := range flow.All() {
		if st.Custom {
			custom[st.Name] = true
		}
	}
	if len(custom) == 0 {
		return versioned, nil
	}
	recorded, err := tracker.Entries(rt)
	if err != nil {
		return nil, err
	}
	have := inventory.Wanted(versioned)
	for _, e := range recorded {
		if custom[e.Step] && !e.Deleted && e.Data != nil && !have.Has(tracker.KeyOf(e)) {
			versioned = append(versioned, e)
		}
	}
	return versioned, nil
}

// SameManifest reports whether an entry records obj as it is.
func SameManifest(e v1beta1.ManagedResource, obj *unstructured.Unstructured) bool {
	recorded, err := tracker.Manifest(e)
	if err != nil || recorded == nil {
		return false
	}
	a, _ := json.Marshal(recorded.Object)
	b, _ := json.Marshal(obj.Object)
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return equality.Semantic.DeepEqual(x, y)
}

// EntrySource names what records an entry, for messages.
func EntrySource(e v1beta1.ManagedResource) string {
	switch {
	case e.Component != "":
		return fmt.Sprintf("component %q", e.Component)
	case e.Step != "":
		return fmt.Sprintf("step %q", e.Step)
	}
	return "the Application"
}
