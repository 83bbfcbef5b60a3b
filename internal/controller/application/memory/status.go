package memory

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/status"
)

// storedStatuses keeps, per Application, a digest of the status stored
// at one resourceVersion (status.Digest), so that a settled pass, which
// compares the status it computed with the one it read, encodes one
// status and not two. An object's status at a resourceVersion never
// changes; a write moves the resourceVersion, and the next pass's read
// replaces the entry.
type storedStatuses struct {
	mu   sync.Mutex
	apps map[types.NamespacedName]storedStatus
}

type storedStatus struct {
	uid    types.UID
	rv     string
	digest [32]byte
}

// Get returns the digest kept for app's status at uid and rv.
func (s *storedStatuses) Get(app types.NamespacedName, uid types.UID, rv string) ([32]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.apps[app]
	if !ok || st.uid != uid || st.rv != rv || rv == "" {
		return [32]byte{}, false
	}
	return st.digest, true
}

// Put keeps the digest of app's status at uid and rv, replacing any
// other.
func (s *storedStatuses) Put(app types.NamespacedName, uid types.UID, rv string, digest [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apps == nil {
		s.apps = map[types.NamespacedName]storedStatus{}
	}
	s.apps[app] = storedStatus{uid: uid, rv: rv, digest: digest}
}

func (s *storedStatuses) Forget(app types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.apps, app)
}

// Same is status.Same over the status a pass read (before) and the one it
// computed, with the digest of the one read kept per resourceVersion: a
// settled pass encodes only the status it computed.
func (s *storedStatuses) Same(before, computed *v1beta1.Application) bool {
	digest, ok := status.Digest(&computed.Status)
	if !ok {
		return status.Same(&before.Status, &computed.Status)
	}
	app := types.NamespacedName{Namespace: before.Namespace, Name: before.Name}
	stored, known := s.Get(app, before.UID, before.ResourceVersion)
	if !known {
		if stored, ok = status.Digest(&before.Status); !ok {
			return status.Same(&before.Status, &computed.Status)
		}
		s.Put(app, before.UID, before.ResourceVersion, stored)
	}
	return stored == digest
}
