package memory

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Memory is everything the reconciler keeps in memory about each
// Application between passes. Each part is a cache or a de-duplication:
// after a restart it starts empty and the first pass of each Application
// fills it again, so nothing in it is needed for correctness. Forget drops
// all of an Application's, once it is gone or being deleted.
type Memory struct {
	// Warned: warnings (an ignored reconcile interval, unsupported
	// features, taken fields) already emitted, so each is emitted once.
	Warned warnedIntervals
	// Unhealthy: passes in a row that found the Application unhealthy,
	// for the unhealthy back-off (the reconciler's requeue).
	Unhealthy unhealthyStreaks
	// HealthCache: each component's last health and what it was
	// computed from (health.go).
	HealthCache healthCache
	// PostDigests: what PostDispatch traits last rendered from
	// (the reconciler's postdispatch.go).
	PostDigests postDigests
	// Adopted: Applications whose trackers this process moved into its
	// shard, or found there (the reconciler's trackers.go).
	Adopted adoptedApps
	// StoredStatus: a digest of the status each Application had at the
	// resourceVersion last read (status.go).
	StoredStatus storedStatuses
}

// Forget drops what memory keeps about app.
func (m *Memory) Forget(app types.NamespacedName) {
	m.Warned.Forget(app.Namespace + "/" + app.Name)
	m.Unhealthy.Forget(app)
	m.HealthCache.Forget(app)
	m.PostDigests.Forget(app)
	m.Adopted.Forget(app)
	m.StoredStatus.Forget(app)
}

// warnedIntervals remembers the last ignored reconcile-interval annotation
// per Application so that the warning is emitted once, not every pass.
type warnedIntervals struct {
	mu   sync.Mutex
	seen map[string]string
}

// Forget drops an Application that is gone, with each of its warnings.
func (w *warnedIntervals) Forget(key string) {
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

func (w *warnedIntervals) FirstTime(key, msg string) bool {
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

// Next records one more unhealthy pass and returns the streak.
func (u *unhealthyStreaks) Next(key types.NamespacedName) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n == nil {
		u.n = map[types.NamespacedName]int{}
	}
	u.n[key]++
	return u.n[key]
}

// Forget ends the streak of an Application.
func (u *unhealthyStreaks) Forget(key types.NamespacedName) {
	u.mu.Lock()
	delete(u.n, key)
	u.mu.Unlock()
}

// postDigests remembers, per Application and placement, what its
// PostDispatch traits last rendered from (record.PostDigest), so that a steady
// state evaluates nothing and writes no tracker. It is memory only: after
// a restart each placement renders once again.
type postDigests struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]string
}

func (p *postDigests) Get(app types.NamespacedName, key string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[app][key]
}

func (p *postDigests) Put(app types.NamespacedName, key, digest string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[types.NamespacedName]map[string]string{}
	}
	if p.m[app] == nil {
		p.m[app] = map[string]string{}
	}
	if d, ok := p.m[app][key]; ok && d == digest {
		return // kept as it is: a settled pass allocates nothing that outlives it
	}
	p.m[app][key] = digest
}

func (p *postDigests) Forget(app types.NamespacedName) {
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

func (a *adoptedApps) Has(k types.NamespacedName) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.apps[k]
	return ok
}

func (a *adoptedApps) Add(k types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.apps == nil {
		a.apps = map[types.NamespacedName]struct{}{}
	}
	a.apps[k] = struct{}{}
}

func (a *adoptedApps) Forget(k types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.apps, k)
}
