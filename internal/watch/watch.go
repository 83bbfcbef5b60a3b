package watch

import (
	"context"
	"hash/fnv"
	"sync"
	"time"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/metrics"
	"github.com/steward-oam/steward/internal/tracker"
)

// Modes of --drift-detection.
const (
	// ModeTimer repairs drift on the re-sync period only, reading every
	// object once per pass.
	ModeTimer = "timer"
	// ModeWatch also repairs on watch events and skips unchanged objects.
	ModeWatch = "watch"
)

// Clusters gives the connection of each cluster and its reachability;
// cluster.Manager implements it.
type Clusters interface {
	Connection(ctx context.Context, cluster string) (cluster.Connection, error)
	LastProbe(cluster string) (cluster.ProbeResult, bool)
}

// Options configure a Watcher. Zero values take the defaults noted.
type Options struct {
	Clusters Clusters
	// Selector is the label selector of every list and watch (default:
	// the ownership label app.oam.dev/name exists).
	Selector string
	// Supervise is how often informers are checked against detached,
	// unreachable and re-credentialed clusters (default 10s).
	Supervise time.Duration
	// Metrics records informers, events and skipped objects; nil records
	// nothing.
	Metrics *metrics.Metrics
	// FullReadPeriod is how often a pass of one Application reads every
	// object even when the cache shows it unchanged: a safety net under
	// the watch (an event lost to a bug, a cache that went wrong). Zero
	// never does beyond the first pass of each process.
	FullReadPeriod time.Duration
	// Timer is timer mode (--drift-detection=timer): no informer runs
	// (Start returns at once) and Unchanged reads an
	// object's metadata from the API server instead of a watch cache.
	Timer bool
	// Owns, when set, says whether this replica reconciles an
	// Application; a change to another's object enqueues nothing (with
	// sharding, the objects of other shards' Applications carry the same
	// ownership label).
	Owns func(types.NamespacedName) bool
	// now is the clock (time.Now); tests set it.
	now func() time.Time
}

// Watcher runs watch mode, and in timer mode (Options.Timer) keeps what
// Steward last wrote or read per object for Unchanged's metadata-only
// reads. Its methods are safe for concurrent use, and do nothing on a nil
// *Watcher.
type Watcher struct {
	opts Options

	mu sync.Mutex
	// apps holds, per Application, the kinds its trackers list and the
	// objects Steward applied for it in this process.
	apps map[types.NamespacedName]*appState
	// refs counts the Applications listing each kind.
	refs map[kindKey]int
	// informers run for kinds in use, in reachable clusters.
	informers map[kindKey]*informer
	// paused holds what the stores of stopped informers of kinds still in
	// use held (an unreachable cluster, changed credentials); only the
	// supervising goroutine uses it.
	paused map[kindKey]map[storeKey]cached
	queue  workqueue.TypedRateLimitingInterface[reconcile.Request]

	wake chan struct{}
}

// kindKey names one kind in one cluster ("" is the hub).
type kindKey struct {
	Cluster, Group, Kind string
}

// objectKey names one object of an app: tracker.Key with the kind and the
// namespace interned, 32 bytes where a tracker.Key is 80 and holds five
// strings.
type objectKey struct {
	kind      unique.Handle[kindKey]
	namespace unique.Handle[string]
	name      string
}

// objectKeyOf returns the objectKey of a normalized key.
func objectKeyOf(k tracker.Key) objectKey {
	return objectKey{kind: unique.Make(kindOf(k)), namespace: unique.Make(k.Namespace), name: k.Name}
}

type appState struct {
	kinds   map[unique.Handle[kindKey]]struct{}
	objects map[objectKey]*objState
	// fullRead is when a pass last read every object (FullReadDue).
	fullRead time.Time
}

// objState is what Steward knows of one object it applied.
type objState struct {
	// rv is the resourceVersion Steward's last write or read returned;
	// none when it must be read again.
	rv version
	// digest identifies the manifest and options rv was reached with.
	digest uint64
	// seen is the resourceVersion of an event that arrived while a write
	// was in flight (deleted for a delete): it is judged when the write
	// returns its resourceVersion.
	seen version
	// writing counts writes in flight.
	writing int32
}

// New returns a Watcher; add it to the manager to run its informers.
func New(opts Options) *Watcher {
	if opts.Selector == "" {
		opts.Selector = v1beta1.LabelAppName
	}
	if opts.Supervise <= 0 {
		opts.Supervise = 10 * time.Second
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	return &Watcher{
		opts:      opts,
		apps:      map[types.NamespacedName]*appState{},
		refs:      map[kindKey]int{},
		informers: map[kindKey]*informer{},
		paused:    map[kindKey]map[storeKey]cached{},
		wake:      make(chan struct{}, 1),
	}
}

// normalize keys the hub's objects by its one cluster key.
func normalize(k tracker.Key) tracker.Key {
	k.Cluster = v1beta1.ClusterKey(k.Cluster)
	return k
}

func kindOf(k tracker.Key) kindKey { return kindKey{Cluster: k.Cluster, Group: k.Group, Kind: k.Kind} }

// Use records the objects app's trackers want to exist, in every cluster.
// Informers start for kinds no Application listed before and stop for
// kinds none lists any longer; what Steward knew of objects no longer
// listed is dropped, so that deleting them (garbage collection) does not
// wake app.
func (w *Watcher) Use(app types.NamespacedName, keys []tracker.Key) {
	if w == nil {
		return
	}
	want := make(map[objectKey]struct{}, len(keys))
	kinds := map[unique.Handle[kindKey]]struct{}{}
	for _, k := range keys {
		ref := objectKeyOf(normalize(k))
		want[ref] = struct{}{}
		kinds[ref.kind] = struct{}{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.apps[app]
	if st == nil {
		st = &appState{objects: map[objectKey]*objState{}}
		w.apps[app] = st
	}
	for k := range st.objects {
		if _, ok := want[k]; !ok {
			delete(st.objects, k)
		}
	}
	changed := w.retain(kinds, st.kinds)
	st.kinds = kinds
	if changed {
		w.signal()
	}
}

// Forget drops app: it was deleted, or is being deleted.
func (w *Watcher) Forget(app types.NamespacedName) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.apps[app]
	if st == nil {
		return
	}
	delete(w.apps, app)
	if w.retain(nil, st.kinds) {
		w.signal()
	}
}

// retain moves the kind references of one app from old to next and
// reports whether a kind came into or went out of use. Called with mu
// held.
func (w *Watcher) retain(next, old map[unique.Handle[kindKey]]struct{}) bool {
	changed := false
	for h := range next {
		if _, ok := old[h]; ok {
			continue
		}
		k := h.Value()
		w.refs[k]++
		changed = changed || w.refs[k] == 1
	}
	for h := range old {
		if _, ok := next[h]; ok {
			continue
		}
		k := h.Value()
		if w.refs[k]--; w.refs[k] <= 0 {
			delete(w.refs, k)
			changed = true
		}
	}
	return changed
}

func (w *Watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Unchanged reports whether the object of key is exactly as Steward last
// wrote or read it for app with the manifest and options of digest, and
// returns its resourceVersion: a pass need neither read nor patch it. In
// watch mode the watch cache says so; it is false whenever the cache
// cannot tell (informer not running or not synced, object not cached,
// write in flight). In timer mode (Options.Timer) one metadata-only read
// with c asks the API server for the object's resourceVersion
// (apiVersion and the key's kind name its type): one request per object,
// as a whole read would cost, without decoding the whole object or
// comparing it with the manifest. A failed read (the object is gone, the
// cluster cannot be reached) is false; the apply that follows meets it.
func (w *Watcher) Unchanged(ctx context.Context, c client.Reader, app types.NamespacedName, key tracker.Key, apiVersion string, digest uint64) (string, bool) {
	if w == nil {
		return "", false
	}
	key = normalize(key)
	w.mu.Lock()
	st := w.apps[app]
	var o *objState
	if st != nil {
		o = st.objects[objectKeyOf(key)]
	}
	if o == nil || o.rv == none || o.writing > 0 || o.digest != digest {
		w.mu.Unlock()
		return "", false
	}
	recorded := o.rv
	if w.opts.Timer {
		w.mu.Unlock()
		return liveVersion(ctx, c, key, apiVersion, recorded)
	}
	defer w.mu.Unlock()
	inf := w.informers[kindOf(key)]
	if inf == nil {
		return "", false
	}
	rv, ok := inf.resourceVersion(key.Namespace, key.Name)
	if !ok || rv != recorded {
		return "", false
	}
	return rv.String(), true
}

// liveVersion reads the metadata of the object of key and reports whether
// its resourceVersion is recorded.
func liveVersion(ctx context.Context, c client.Reader, key tracker.Key, apiVersion string, recorded version) (string, bool) {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, key.Kind))
	if err := c.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: key.Name}, meta); err != nil {
		return "", false
	}
	if versionOf(meta.ResourceVersion) != recorded {
		return "", false
	}
	return recorded.String(), true
}

// Informs reports whether the Watcher runs informers (watch mode): only
// then does its Source enqueue anything.
func (w *Watcher) Informs() bool { return w != nil && !w.opts.Timer }

// FullReadDue reports whether this pass of app must read every object,
// trusting no cached resourceVersion: the first pass in this process, and
// then once per FullReadPeriod. It counts the pass as that read. It is
// false on a nil *Watcher, which trusts nothing it recorded anyway.
func (w *Watcher) FullReadDue(app types.NamespacedName) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.apps[app]
	if st == nil {
		return true
	}
	now := w.opts.now()
	if !st.fullRead.IsZero() && (w.opts.FullReadPeriod <= 0 || now.Sub(st.fullRead) < w.opts.FullReadPeriod) {
		return false
	}
	st.fullRead = now
	return true
}

// Begin marks a write (or read) of key for app in flight. Call the
// function it returns with the object as the request returned it and the
// digest of what was applied, or with nil when it failed or left the
// object different from the manifest: the next pass reads it again.
func (w *Watcher) Begin(app types.NamespacedName, key tracker.Key) func(live metav1.Object, digest uint64) {
	if w == nil {
		return func(metav1.Object, uint64) {}
	}
	key = normalize(key)
	w.mu.Lock()
	st := w.apps[app]
	if st == nil {
		w.mu.Unlock()
		return func(metav1.Object, uint64) {}
	}
	ref := objectKeyOf(key)
	o := st.objects[ref]
	if o == nil {
		o = &objState{}
		st.objects[ref] = o
	}
	o.writing++
	w.mu.Unlock()
	return func(live metav1.Object, digest uint64) {
		rv := none
		if live != nil {
			rv = versionOf(live.GetResourceVersion())
		}
		w.mu.Lock()
		o.writing--
		o.rv, o.digest = rv, digest
		seen := o.seen
		if o.writing == 0 {
			o.seen = none
		}
		w.mu.Unlock()
		if seen != none && seen != rv {
			// Something else happened to the object around Steward's
			// write: look again.
			w.enqueue(app)
		}
	}
}

// event judges one watch event on the object of key, owned by app as its
// labels say.
func (w *Watcher) event(key objectKey, rv version, app types.NamespacedName, gone bool) {
	if gone {
		rv = deleted
	}
	result := metrics.WatchUntracked
	w.mu.Lock()
	var o *objState
	if st := w.apps[app]; st != nil {
		o = st.objects[key]
	}
	switch {
	case o == nil || (o.rv == none && o.writing == 0):
	case o.writing > 0:
		o.seen, result = rv, metrics.WatchOwn
	case rv == o.rv:
		result = metrics.WatchOwn
	default:
		// Changed or deleted by someone else: the next pass reads it.
		o.rv, result = none, metrics.WatchChanged
	}
	w.mu.Unlock()
	w.opts.Metrics.WatchEvent(result)
	if result == metrics.WatchChanged {
		w.enqueue(app)
	}
}

func (w *Watcher) enqueue(app types.NamespacedName) {
	if w.opts.Owns != nil && !w.opts.Owns(app) {
		return
	}
	w.mu.Lock()
	q := w.queue
	w.mu.Unlock()
	if q != nil {
		q.Add(reconcile.Request{NamespacedName: app})
	}
}

// Source returns the source that feeds the Application controller's work
// queue with the Applications whose objects changed.
func (w *Watcher) Source() source.Source { return watcherSource{w} }

type watcherSource struct{ w *Watcher }

func (s watcherSource) Start(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	s.w.mu.Lock()
	s.w.queue = q
	s.w.mu.Unlock()
	return nil
}

func (s watcherSource) String() string { return "managed objects (metadata-only, label-selected)" }

// Digest identifies what an object is applied from: its manifest and
// everything else that changes the request (options, identity), so that a
// recorded resourceVersion is only trusted for the same apply.
func Digest(parts ...[]byte) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write(p)
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}
