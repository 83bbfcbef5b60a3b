package apply

import (
	"slices"
	"testing"
)

func TestPatchedFields(t *testing.T) {
	got := PatchedFields([]byte(`{"metadata":{"annotations":{"app.oam.dev/last-applied-configuration":"{}"},"labels":{"tier":"web"}},"spec":{"replicas":3,"template":{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"image":"x","name":"a"}]}}}}`))
	want := []string{"metadata.labels.tier", "spec.replicas", "spec.template.spec.containers"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if PatchedFields(nil) != nil {
		t.Error("no patch, no fields")
	}
}
