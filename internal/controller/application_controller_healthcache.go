package controller

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
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
	apps map[types.NamespacedName][]cachedHealth
}

type cachedHealth struct {
	key         string
	fingerprint uint64
	health      componentHealth
}

func (c *healthCache) get(app types.NamespacedName, key string, fp uint64) (componentHealth, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.apps[app] {
		if h.key == key {
			if h.fingerprint != fp {
				break
			}
			return h.health, true
		}
	}
	return componentHealth{}, false
}

// put replaces the app's cached health with the components of one pass,
// so components removed from the app do not stay.
func (c *healthCache) put(app types.NamespacedName, entries []cachedHealth) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apps == nil {
		c.apps = map[types.NamespacedName][]cachedHealth{}
	}
	if len(entries) == 0 {
		delete(c.apps, app)
		return
	}
	c.apps[app] = fit(entries)
}

func (c *healthCache) forget(app types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.apps, app)
}

// healthFingerprint identifies the inputs of one component's health in
// one cluster. An object neither read nor skipped (it could not be
// applied) counts as absent.
func healthFingerprint(s *scope, defs render.Definitions, comp v1beta1.ApplicationComponent, entries []v1beta1.ManagedResource, unread map[tracker.Key]string) uint64 {
	parts := [][]byte{
		strconv.AppendInt(nil, s.app.Generation, 10),
		[]byte(s.current.Name),
		strconv.AppendInt(nil, s.current.Spec.ApplicationGeneration, 10),
		mapBytes(s.app.Labels), mapBytes(s.app.Annotations),
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
		if live := s.keep.live[key]; live != nil {
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

// getLive reads the live object of an entry.
func getLive(ctx context.Context, c client.Client, e v1beta1.ManagedResource) (*unstructured.Unstructured, error) {
	live := tracker.Ref(e)
	if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
		return nil, err
	}
	return live, nil
}

// readUnread reads the objects of a component that watch mode skipped,
// because its health must be evaluated again, and returns how many it
// read. complete is false when one could not be read: the health is then
// not cached.
func (r *ApplicationReconciler) readUnread(ctx context.Context, s *scope, comp string, entries []v1beta1.ManagedResource, unread map[tracker.Key]string) (read int, complete bool) {
	ok := true
	for _, e := range entries {
		key := tracker.KeyOf(e)
		if _, skipped := unread[key]; !skipped || e.Component != comp || s.keep.live[key] != nil {
			continue
		}
		c, err := s.clients.GetClient(ctx, e.Cluster)
		if err != nil {
			ok = false
			continue
		}
		live, err := getLive(ctx, c, e)
		if err != nil {
			ok = false
			continue
		}
		s.keep.remember(key, live)
		read++
	}
	return read, ok
}
