package memory

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
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
