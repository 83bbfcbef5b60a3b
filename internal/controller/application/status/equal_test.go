package status

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// settledStatus is the status of a delivered Application of 8 objects,
// as a settled pass computes it again.
func settledStatus(at time.Time) *v1beta1.ApplicationStatus {
	st := &v1beta1.ApplicationStatus{ObservedGeneration: 3, Phase: v1beta1.ApplicationRunning,
		LatestRevision: &v1beta1.Revision{Name: "shop-v3", Revision: 3}}
	for _, c := range []string{"Ready", "Rendered", "Dispatched", "StateKept", "Healthy", "GarbageCollected"} {
		st.Conditions = append(st.Conditions, v1beta1.Condition{Type: c, Status: metav1.ConditionTrue, ObservedGeneration: 3,
			LastTransitionTime: metav1.NewTime(at), Reason: "Succeeded", Message: c + " as the spec asks"})
	}
	for i := range 8 {
		st.AppliedResources = append(st.AppliedResources, v1beta1.ClusterObjectReference{APIVersion: "v1", Kind: "ConfigMap",
			Namespace: "shop", Name: fmt.Sprintf("shop-%d", i)})
	}
	st.Services = []v1beta1.ApplicationComponentStatus{{Name: "shop", Namespace: "shop", Healthy: true, Message: "Ready:2/2",
		Traits: []v1beta1.ApplicationTraitStatus{{Type: "scaler", Healthy: true}, {Type: "expose", Healthy: true}}}}
	return st
}

// Same says what a status write would change: nothing for the same
// status computed again (nil and empty lists alike, times within the
// second the API server stores), something for any field that moved.
func TestSame(t *testing.T) {
	at := time.Date(2026, 12, 7, 15, 0, 0, 100, time.UTC)
	base := settledStatus(at)
	for _, tc := range []struct {
		name   string
		change func(*v1beta1.ApplicationStatus)
		same   bool
	}{
		{"computed again", func(*v1beta1.ApplicationStatus) {}, true},
		{"a nil map read back as empty", func(s *v1beta1.ApplicationStatus) { s.Services[0].Details = map[string]string{} }, true},
		{"a transition time within its second", func(s *v1beta1.ApplicationStatus) {
			s.Conditions[2].LastTransitionTime = metav1.NewTime(at.Add(500 * time.Millisecond))
		}, true},
		{"the phase", func(s *v1beta1.ApplicationStatus) { s.Phase = v1beta1.ApplicationUnhealthy }, false},
		{"a condition's reason", func(s *v1beta1.ApplicationStatus) { s.Conditions[4].Reason = "Unhealthy" }, false},
		{"a transition time a second later", func(s *v1beta1.ApplicationStatus) {
			s.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(time.Second))
		}, false},
		{"a transition time less than a second later, in the next second", func(s *v1beta1.ApplicationStatus) {
			s.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(time.Second - 100*time.Nanosecond))
		}, false},
		{"an applied resource", func(s *v1beta1.ApplicationStatus) { s.AppliedResources[7].Name = "shop-8" }, false},
		{"a trait's health", func(s *v1beta1.ApplicationStatus) { s.Services[0].Traits[1].Healthy = false }, false},
		{"the revision", func(s *v1beta1.ApplicationStatus) { s.LatestRevision = &v1beta1.Revision{Name: "shop-v4", Revision: 4} }, false},
		{"the workflow", func(s *v1beta1.ApplicationStatus) { s.Workflow = &v1beta1.WorkflowStatus{Mode: "StepByStep"} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := settledStatus(at)
			tc.change(after)
			if got := Same(base, after); got != tc.same {
				t.Errorf("Same = %v, want %v", got, tc.same)
			}
		})
	}
}

// The comparison of a settled pass: Same against the reflection walk it
// replaced.
func BenchmarkSettledStatusCompare(b *testing.B) {
	at := time.Now()
	before, after := settledStatus(at), settledStatus(at)
	b.Run("Same", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !Same(before, after) {
				b.Fatal("not the same")
			}
		}
	})
	b.Run("SemanticDeepEqual", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !equality.Semantic.DeepEqual(before, after) {
				b.Fatal("not equal")
			}
		}
	})
}
