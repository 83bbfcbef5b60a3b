package memory

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// A stored status's digest is kept for one resourceVersion of one
// Application object: another resourceVersion, or an Application of the
// same name created again, reads it anew.
func TestStoredStatus_ByResourceVersion(t *testing.T) {
	app := types.NamespacedName{Namespace: "default", Name: "app"}
	var s storedStatuses
	s.Put(app, "uid-1", "10", [32]byte{1})
	if d, ok := s.Get(app, "uid-1", "10"); !ok || d != [32]byte{1} {
		t.Errorf("Get = %v, %v; want the digest kept", d, ok)
	}
	for _, c := range []struct{ uid, rv string }{{"uid-1", "11"}, {"uid-2", "10"}, {"uid-1", ""}} {
		if _, ok := s.Get(app, types.UID(c.uid), c.rv); ok {
			t.Errorf("Get(%s, %q) answered from another object's status", c.uid, c.rv)
		}
	}
	s.Forget(app)
	if _, ok := s.Get(app, "uid-1", "10"); ok {
		t.Error("a forgotten Application's digest stayed")
	}
}
