package controller

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// A version whose objects do not all name a recorded deploy step (a
// ResourceTracker CRD that prunes the field) is held as a whole: its
// objects would otherwise be applied whatever the gate says.
func TestCheckRecordedSteps_FailsClosed(t *testing.T) {
	steps := []workflow.Step{{Name: "staging", Type: workflow.TypeDeploy}, {Name: "approve", Type: workflow.TypeSuspend}, {Name: "prod", Type: workflow.TypeDeploy}}
	entry := func(name, step string) v1beta1.ManagedResource {
		e := v1beta1.ManagedResource{Step: step, Data: &runtime.RawExtension{Raw: []byte(`{}`)}}
		e.APIVersion, e.Kind, e.Namespace, e.Name = "v1", "ConfigMap", "ns", name
		return e
	}
	for name, tt := range map[string]struct {
		entries []v1beta1.ManagedResource
		want    string
	}{
		"every object names its step": {entries: []v1beta1.ManagedResource{entry("a", "staging"), entry("b", "prod")}},
		"a step pruned":               {entries: []v1beta1.ManagedResource{entry("a", "staging"), entry("b", "")}, want: "without its workflow step"},
		"a step not recorded":         {entries: []v1beta1.ManagedResource{entry("a", "approve")}, want: "upgrade the CRDs"},
	} {
		t.Run(name, func(t *testing.T) {
			rt := &v1beta1.ResourceTracker{}
			rt.Name = "gate-v1"
			if err := tracker.Encode(&rt.Spec, tt.entries, ""); err != nil {
				t.Fatal(err)
			}
			err := checkRecordedSteps(rt, steps)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			s := &scope{flowErr: err}
			if held := s.gatedEntry(tt.entries[0]); held != (tt.want != "") {
				t.Errorf("the first object held = %v", held)
			}
		})
	}
}
