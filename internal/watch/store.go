package watch

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/steward-oam/steward/api/v1beta1"
)

// store is the reflector's store of one kind in one cluster: for every
// object the label selector lets through, only what judging an event and
// Unchanged read. It replaces a client-go informer (its DeltaFIFO, its
// indexer of whole objects and string keys, its listeners' buffers):
// changes are judged as the reflector hands them over, and an object costs
// one map entry and its name (about 110 bytes).
//
// The reflector calls Add, Update, Delete and Replace from its one
// goroutine; resourceVersion may be called from any.
type store struct {
	// changed is called, without mu held, for every change the store
	// sees: an object added, updated to another resourceVersion, or gone,
	// with the Applications it concerns.
	changed func(ref storeKey, rv version, apps []types.NamespacedName, gone bool)

	mu      sync.RWMutex
	objects map[storeKey]cached
	// synced is set by a Replace and cleared when a list begins: the
	// store holds every object only between a list and the next (a relist
	// comes after a gap, and one that keeps failing must not leave the
	// store trusted).
	synced bool
}

// storeKey names one object of the store's kind.
type storeKey struct {
	namespace unique.Handle[string]
	name      string
}

// cached is what the store keeps of one object: its resourceVersion, the
// Application its ownership labels name and, for a shared resource, its
// sharers, interned so that the objects of one app share them.
type cached struct {
	rv  version
	app unique.Handle[types.NamespacedName]
	// sharers is the shared-by annotation of a shared resource (zero for
	// any other object): every sharer is woken, not only the owner the
	// labels name.
	sharers unique.Handle[string]
}

var _ cache.TransformingStore = (*store)(nil)

// newStore returns a store that starts from seed (what a stopped store of
// the same kind held, or nil), so that objects deleted while no watch ran
// are found gone by the first list.
func newStore(changed func(storeKey, version, []types.NamespacedName, bool), seed map[storeKey]cached) *store {
	if seed == nil {
		seed = map[storeKey]cached{}
	}
	return &store{changed: changed, objects: seed}
}

// listing marks the store untrusted until the list that begins has been
// handed over (Replace).
func (s *store) listing() {
	s.mu.Lock()
	s.synced = false
	s.mu.Unlock()
}

// held returns a copy of the store's objects, to seed a store that
// replaces it.
func (s *store) held() map[storeKey]cached {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.objects)
}

// notify hands on a change of c (old, when had, is what the store held
// before): every Application either names is concerned, so an owner or
// sharer that the change removed is woken too.
func (s *store) notify(k storeKey, c, old cached, had, gone bool) {
	apps := c.apps()
	if had && (old.app != c.app || old.sharers != c.sharers) {
		for _, a := range old.apps() {
			if !slices.Contains(apps, a) {
				apps = append(apps, a)
			}
		}
	}
	s.changed(k, c.rv, apps, gone)
}

// entryOf returns the key and entry of an object the reflector hands over.
func entryOf(obj any) (storeKey, cached, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return storeKey{}, cached{}, false
	}
	labels := m.GetLabels()
	c := cached{
		rv: versionOf(m.GetResourceVersion()),
		app: unique.Make(types.NamespacedName{
			Namespace: labels[v1beta1.LabelAppNamespace],
			Name:      labels[v1beta1.LabelAppName],
		}),
	}
	if v := m.GetAnnotations()[v1beta1.AnnotationSharedBy]; v != "" {
		c.sharers = unique.Make(v)
	}
	return storeKey{namespace: unique.Make(m.GetNamespace()), name: m.GetName()}, c, true
}

// Add records an object the watch reports added.
func (s *store) Add(obj any) error { return s.Update(obj) }

// Update records an object the watch reports added or modified; one
// whose resourceVersion the store already holds is no change.
func (s *store) Update(obj any) error {
	k, c, ok := entryOf(obj)
	if !ok {
		return nil
	}
	s.mu.Lock()
	old, had := s.objects[k]
	s.objects[k] = c
	s.mu.Unlock()
	if !had || old.rv != c.rv {
		s.notify(k, c, old, had, false)
	}
	return nil
}

// Delete drops an object the watch reports deleted, or gone from the
// label selector.
func (s *store) Delete(obj any) error {
	k, c, ok := entryOf(obj)
	if !ok {
		return nil
	}
	s.mu.Lock()
	old, had := s.objects[k]
	delete(s.objects, k)
	s.mu.Unlock()
	// The event's object may carry other ownership labels than the store
	// knew, or none (an object that left the selector): both are woken.
	s.notify(k, c, old, had, true)
	return nil
}

// Replace takes a whole list (the first one, or a relist after a watch
// gap): objects new or at another resourceVersion are changes, objects
// missing from it are gone.
func (s *store) Replace(list []any, _ string) error {
	next := make(map[storeKey]cached, len(list))
	for _, obj := range list {
		if k, c, ok := entryOf(obj); ok {
			next[k] = c
		}
	}
	s.mu.Lock()
	old := s.objects
	s.objects, s.synced = next, true
	s.mu.Unlock()
	for k, c := range next {
		if o, had := old[k]; !had || o.rv != c.rv {
			s.notify(k, c, o, had, false)
		}
	}
	for k, c := range old {
		if _, ok := next[k]; !ok {
			s.notify(k, c, c, false, true)
		}
	}
	return nil
}

// Resync does nothing: the store has no listeners to replay to.
func (s *store) Resync() error { return nil }

// Transformer trims what a streaming list (WatchList) holds until its
// Replace to what the store keeps.
func (s *store) Transformer() cache.TransformFunc { return trim }

// trim returns a metadata object with only the name, namespace,
// resourceVersion, ownership labels and shared-by annotation of obj. It is
// idempotent, as a transform must be.
func trim(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	t := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, ResourceVersion: m.ResourceVersion,
	}}
	for _, l := range []string{v1beta1.LabelAppName, v1beta1.LabelAppNamespace} {
		if v, ok := m.Labels[l]; ok {
			if t.Labels == nil {
				t.Labels = map[string]string{}
			}
			t.Labels[l] = v
		}
	}
	if v, ok := m.Annotations[v1beta1.AnnotationSharedBy]; ok {
		t.Annotations = map[string]string{v1beta1.AnnotationSharedBy: v}
	}
	return t, nil
}

// resourceVersion returns the resourceVersion of an object, once the
// store holds the whole list.
func (s *store) resourceVersion(namespace, name string) (version, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.synced {
		return none, false
	}
	c, ok := s.objects[storeKey{namespace: unique.Make(namespace), name: name}]
	return c.rv, ok
}

// len is the number of objects held; for tests.
func (s *store) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.objects)
}

// apps returns the Applications an event on the object concerns: the
// owner its labels name and every other sharer of a shared resource.
func (c cached) apps() []types.NamespacedName {
	owner := c.app.Value()
	apps := []types.NamespacedName{owner}
	if c.sharers == (unique.Handle[string]{}) {
		return apps
	}
	for _, s := range strings.Split(c.sharers.Value(), ",") {
		ns, name, ok := strings.Cut(s, "/")
		if app := (types.NamespacedName{Namespace: ns, Name: name}); ok && app != owner {
			apps = append(apps, app)
		}
	}
	return apps
}
