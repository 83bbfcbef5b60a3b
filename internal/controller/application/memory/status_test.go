package memory

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
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

// A status computed alike the one read is the same, one that differs is
// not, whether the digest of the one read is kept yet or not.
func TestStoredStatus_Same(t *testing.T) {
	var s storedStatuses
	read := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app", UID: "uid-1", ResourceVersion: "10"},
		Status: v1beta1.ApplicationStatus{Phase: v1beta1.ApplicationRunning}}
	for range 2 { // the second time from the digest kept
		if computed := read.DeepCopy(); !s.Same(read, computed) {
			t.Error("an unchanged status is not the same")
		}
		changed := read.DeepCopy()
		changed.Status.Phase = v1beta1.ApplicationDeleting
		if s.Same(read, changed) {
			t.Error("a changed phase is the same")
		}
	}
}
