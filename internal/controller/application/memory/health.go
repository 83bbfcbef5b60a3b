package memory

import (
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/cache"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
	"k8s.io/apimachinery/pkg/types"
)

// healthCache keeps the last health of each component of each
// Application with the fingerprint of everything it was computed from:
// the objects' resourceVersions, the definitions' and the Application's
// spec and metadata. The same fingerprint gives the same health, so it is
// not evaluated again, and in watch mode unchanged objects are not read
// for it.
type healthCache struct {
	mu sync.Mutex
	// apps holds each Application's entries as a slice sized to fit: an
	// Application has a few components, and a map per Application cost
	// most of a kilobyte even for one.
	apps map[types.NamespacedName][]CachedHealth
}

type CachedHealth struct {
	Key         string
	Fingerprint uint64
	Health      facts.ComponentHealth
	// Workload is the key of the component's workload entry, kept for a
	// component with PostDispatch traits (WorkloadKey): a health reused
	// finds the workload they render over without decoding a manifest.
	Workload *tracker.Key
}

// Get returns the health kept for the component of key with the
// fingerprint fp.
func (c *healthCache) Get(app types.NamespacedName, key string, fp uint64) (CachedHealth, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.apps[app] {
		if h.Key == key {
			if h.Fingerprint != fp {
				break
			}
			return h, true
		}
	}
	return CachedHealth{}, false
}

// WorkloadKey is what CachedHealth.Workload keeps of the workload entry
// wl: its key when the component has PostDispatch traits (post), else
// nothing.
func WorkloadKey(wl *v1beta1.ManagedResource, post bool) *tracker.Key {
	if wl == nil || !post {
		return nil
	}
	k := tracker.KeyOf(*wl)
	return &k
}

// WorkloadIn returns the entry of entries h.Workload names, or nil.
func (h CachedHealth) WorkloadIn(entries []v1beta1.ManagedResource) *v1beta1.ManagedResource {
	if h.Workload == nil {
		return nil
	}
	for i := range entries {
		if tracker.KeyOf(entries[i]) == *h.Workload {
			return &entries[i]
		}
	}
	return nil
}

// Put replaces the app's cached health with the components of one pass,
// so components removed from the app do not stay. A pass that found every
// component's health kept (the same keys with the same fingerprints, so
// the same health) leaves the entries as they are: a settled pass
// allocates nothing here that outlives it.
func (c *healthCache) Put(app types.NamespacedName, entries []CachedHealth) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apps == nil {
		c.apps = map[types.NamespacedName][]CachedHealth{}
	}
	if len(entries) == 0 {
		delete(c.apps, app)
		return
	}
	if sameFingerprints(c.apps[app], entries) {
		return
	}
	c.apps[app] = cache.Fit(entries)
}

// sameFingerprints reports whether kept and entries list the same
// components, in order, with the same fingerprints.
func sameFingerprints(kept, entries []CachedHealth) bool {
	if len(kept) != len(entries) {
		return false
	}
	for i := range kept {
		if kept[i].Key != entries[i].Key || kept[i].Fingerprint != entries[i].Fingerprint {
			return false
		}
	}
	return true
}

func (c *healthCache) Forget(app types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.apps, app)
}

// HealthFingerprint identifies the inputs of one component's health in
// one cluster. An object neither read nor skipped (it could not be
// applied) counts as absent.
func HealthFingerprint(s *facts.Pass, defs render.Definitions, comp v1beta1.ApplicationComponent, entries []v1beta1.ManagedResource, unread map[tracker.Key]string) uint64 {
	parts := [][]byte{
		strconv.AppendInt(nil, s.App.Generation, 10),
		[]byte(s.Current.Name),
		strconv.AppendInt(nil, s.Current.Spec.ApplicationGeneration, 10),
		mapBytes(s.App.Labels), mapBytes(s.App.Annotations),
	}
	if d := defs.Components[comp.Type]; d != nil {
		parts = append(parts, []byte(d.ResourceVersion))
	}
	for _, t := range comp.Traits {
		if d := defs.Traits[t.Type]; d != nil {
			parts = append(parts, []byte(t.Type+"="+d.ResourceVersion))
		}
	}
	for _, e := range entries {
		if e.Component != comp.Name || e.Deleted || e.Data == nil {
			continue
		}
		key := tracker.KeyOf(e)
		rv := "absent"
		if live := s.Keep.Live[key]; live != nil {
			// As watch mode reports it when it skips the object, so
			// that a read and a skip fingerprint alike.
			rv = watch.ResourceVersionKey(live.GetResourceVersion())
		} else if v, ok := unread[key]; ok {
			rv = v
		}
		parts = append(parts, []byte(key.String()), []byte(rv))
	}
	return watch.Digest(parts...)
}

func mapBytes(m map[string]string) []byte {
	var out []byte
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(append(append(append(out, k...), '='), m[k]...), 0)
	}
	return out
}
