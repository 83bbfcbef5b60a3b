package tracker

import (
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Callers change the entries they read and then save them; the save's
// patch is computed against the tracker as read. Changing the slice
// Entries returned must not change the tracker, or the patch misses the
// change (a rollback's cleared deletion marks never reach the API server,
// and the next pass deletes what the live version wants).
func TestEntries_UncompressedAreACopy(t *testing.T) {
	rt := &v1beta1.ResourceTracker{Spec: v1beta1.ResourceTrackerSpec{
		ManagedResources: []v1beta1.ManagedResource{{Deleted: true}},
	}}
	for name, read := range map[string]func() ([]v1beta1.ManagedResource, error){
		"Entries": func() ([]v1beta1.ManagedResource, error) { return Entries(rt) },
		"Decode":  func() ([]v1beta1.ManagedResource, error) { return Decode(&rt.Spec) },
	} {
		entries, err := read()
		if err != nil {
			t.Fatal(err)
		}
		entries[0].Deleted = false
		if !rt.Spec.ManagedResources[0].Deleted {
			t.Errorf("%s returned the tracker's own entries: changing them changed the tracker", name)
			rt.Spec.ManagedResources[0].Deleted = true
		}
	}
}
