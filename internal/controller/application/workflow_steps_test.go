package application

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// A version whose objects do not all name a recorded deploy step (a
// ResourceTracker CRD that prunes the field) is held as a whole: its
// objects would otherwise be applied whatever the gate says.
func TestCheckRecordedSteps_FailsClosed(t *testing.T) {
	steps := workflow.Flow{Steps: []workflow.Step{{Name: "staging", Type: v1beta1.WorkflowStepTypeDeploy}, {Name: "approve", Type: v1beta1.WorkflowStepTypeSuspend},
		{Name: "regions", Type: v1beta1.WorkflowStepTypeStepGroup, Sub: []workflow.Step{{Name: "prod", Type: v1beta1.WorkflowStepTypeDeploy}}}}}
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
			s := &facts.Pass{FlowErr: err}
			if held := s.GatedEntry(tt.entries[0]); held != (tt.want != "") {
				t.Errorf("the first object held = %v", held)
			}
		})
	}
}

// Steps that run together are judged each on its own objects: a failure,
// or a component waiting for a dependency, holds only the steps it
// belongs to; an unreachable cluster holds every step with objects there.
func TestBlockedSteps_AreThoseTheFailureBelongsTo(t *testing.T) {
	entry := func(cluster, component, name, step string) v1beta1.ManagedResource {
		e := v1beta1.ManagedResource{Step: step, Data: &runtime.RawExtension{Raw: []byte(`{}`)}}
		e.Cluster, e.Component = cluster, component
		e.APIVersion, e.Kind, e.Namespace, e.Name = "v1", "ConfigMap", "ns", name
		return e
	}
	entries := []v1beta1.ManagedResource{
		entry("", "api", "eu-api", "deploy-eu"), entry("us-1", "api", "us-api", "deploy-us"),
		entry("", "worker", "eu-worker", "deploy-eu"), entry("us-1", "db", "us-db", "deploy-us"),
	}
	rt := &v1beta1.ResourceTracker{}
	if err := tracker.Encode(&rt.Spec, entries, ""); err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		keep facts.KeepReport
		want []string // nil: every step
	}{
		"nothing failed":           {keep: facts.KeepReport{Ran: true}, want: []string{}},
		"an object of one step":    {keep: facts.KeepReport{Ran: true, Failures: []facts.Failure{{Key: tracker.KeyOf(entries[1])}}}, want: []string{"deploy-us"}},
		"a component waiting":      {keep: facts.KeepReport{Ran: true, Waiting: []string{"worker"}}, want: []string{"deploy-eu"}},
		"a cluster out of reach":   {keep: facts.KeepReport{Ran: true, Failures: []facts.Failure{facts.ClusterFailure("us-1", errNotYet)}}, want: []string{"deploy-us"}},
		"the hub out of reach":     {keep: facts.KeepReport{Ran: true, Failures: []facts.Failure{facts.ClusterFailure("", errNotYet)}}, want: []string{"deploy-eu"}},
		"an object of no step":     {keep: facts.KeepReport{Ran: true, Failures: []facts.Failure{{Key: tracker.Key{Kind: "Secret", Name: "x"}}}}},
		"nothing could be applied": {keep: facts.KeepReport{}},
	} {
		t.Run(name, func(t *testing.T) {
			sc := &facts.Pass{Keep: tt.keep, Trackers: facts.Trackers{Current: rt}}
			live, err := inventory.AppliedOf(sc.Current, sc.Root)
			got := blockedSteps(sc, live, err)
			if tt.want == nil {
				if got != nil {
					t.Fatalf("blocked %v, want every step", got)
				}
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("blocked %v, want %v", got, tt.want)
			}
			for _, step := range tt.want {
				if !got[step] {
					t.Fatalf("blocked %v, want %v", got, tt.want)
				}
			}
		})
	}
}
