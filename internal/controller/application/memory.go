package application

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/cache"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// memory is everything the reconciler keeps in memory about each
// Application between passes. Each part is a cache or a de-duplication:
// after a restart it starts empty and the first pass of each Application
// fills it again, so nothing in it is needed for correctness. forget drops
// all of an Application's, once it is gone or being deleted.
type memory struct {
	// warned: warnings (an ignored reconcile interval, unsupported
	// features, taken fields) already emitted, so each is emitted once.
	warned warnedIntervals
	// unhealthy: passes in a row that found the Application unhealthy,
	// for the unhealthy back-off (wake.go).
	unhealthy unhealthyStreaks
	// health: each component's last health and what it was computed
	// from (health.go).
	health healthCache
	// postDigests: what PostDispatch traits last rendered from
	// (postdispatch.go).
	postDigests postDigests
	// adopted: Applications whose trackers this process moved into its
	// shard, or found there (shard.go).
	adopted adoptedApps
}

// forget drops what memory keeps about app.
func (m *memory) forget(app types.NamespacedName) {
	m.warned.forget(app.Namespace + "/" + app.Name)
	m.unhealthy.forget(app)
	m.health.forget(app)
	m.postDigests.forget(app)
	m.adopted.forget(app)
}

// warnedIntervals remembers the last ignored reconcile-interval annotation
// per Application so that the warning is emitted once, not every pass.
type warnedIntervals struct {
	mu   sync.Mutex
	seen map[string]string
}

// forget drops an Application that is gone, with each of its warnings.
func (w *warnedIntervals) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.seen, key)
	// Its other warnings are keyed key#what (#features, #conflicts,
	// #hooks/<component>).
	for k := range w.seen {
		if strings.HasPrefix(k, key+"#") {
			delete(w.seen, k)
		}
	}
}

func (w *warnedIntervals) firstTime(key, msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]string{}
	}
	if w.seen[key] == msg {
		return false
	}
	w.seen[key] = msg
	return true
}

// unhealthyStreaks counts, per Application, the passes in a row that found
// it unhealthy. An entry lives while its Application is unhealthy and is
// dropped when it is healthy again or deleted, so the map holds at most
// one entry per unhealthy Application.
type unhealthyStreaks struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

// next records one more unhealthy pass and returns the streak.
func (u *unhealthyStreaks) next(key types.NamespacedName) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n == nil {
		u.n = map[types.NamespacedName]int{}
	}
	u.n[key]++
	return u.n[key]
}

// forget ends the streak of an Application.
func (u *unhealthyStreaks) forget(key types.NamespacedName) {
	u.mu.Lock()
	delete(u.n, key)
	u.mu.Unlock()
}

// postDigests remembers, per Application and placement, what its
// PostDispatch traits last rendered from (postDigest), so that a steady
// state evaluates nothing and writes no tracker. It is memory only: after
// a restart each placement renders once again.
type postDigests struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]string
}

func (p *postDigests) get(app types.NamespacedName, key string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[app][key]
}

func (p *postDigests) put(app types.NamespacedName, key, digest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[types.NamespacedName]map[string]string{}
	}
	if p.m[app] == nil {
		p.m[app] = map[string]string{}
	}
	p.m[app][key] = digest
}

func (p *postDigests) forget(app types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, app)
}

// adoptedApps are the Applications whose trackers this process has moved
// into its shard (or found there).
type adoptedApps struct {
	mu   sync.Mutex
	apps map[types.NamespacedName]struct{}
}

func (a *adoptedApps) has(k types.NamespacedName) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.apps[k]
	return ok
}

func (a *adoptedApps) add(k types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.apps == nil {
		a.apps = map[types.NamespacedName]struct{}{}
	}
	a.apps[k] = struct{}{}
}

func (a *adoptedApps) forget(k types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.apps, k)
}

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
	c.apps[app] = cache.Fit(entries)
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
func (r *Reconciler) readUnread(ctx context.Context, s *scope, comp string, entries []v1beta1.ManagedResource, unread map[tracker.Key]string) (read int, complete bool) {
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
