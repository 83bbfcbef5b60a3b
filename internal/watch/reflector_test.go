package watch

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// fakeAPI answers a Reflector's lists from a channel the test feeds and
// hands the test every watch it opens.
type fakeAPI struct {
	lists    chan runtime.Object // a *PartialObjectMetadataList, or an errorObject
	watches  chan *watchapi.FakeWatcher
	selected chan string // the label selector of each request
	// noStreaming reports that the "server" cannot stream lists (WatchList).
	noStreaming bool
}

type errorObject struct {
	runtime.Object
	err error
}

func newFakeAPI(streaming bool) *fakeAPI {
	return &fakeAPI{lists: make(chan runtime.Object, 4), watches: make(chan *watchapi.FakeWatcher, 4),
		selected: make(chan string, 16), noStreaming: !streaming}
}

func (f *fakeAPI) IsWatchListSemanticsUnSupported() bool { return f.noStreaming }

func (f *fakeAPI) listWatch() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			f.selected <- o.LabelSelector
			select {
			case l := <-f.lists:
				if e, ok := l.(errorObject); ok {
					return nil, e.err
				}
				return l, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watchapi.Interface, error) {
			f.selected <- o.LabelSelector
			w := watchapi.NewFakeWithChanSize(8, false)
			f.watches <- w
			return w, nil
		},
	}
}

func listOf(rv string, items ...*metav1.PartialObjectMetadata) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, i := range items {
		l.Items = append(l.Items, *i)
	}
	return l
}

func webAt(rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "web", Namespace: "team", ResourceVersion: rv,
		Labels:      map[string]string{v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "team"},
		Annotations: map[string]string{v1beta1.AnnotationLastApplied: "{}"},
	}}
}

func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// runReflector runs the Reflector watch mode builds, over api, into a store
// whose changes reach w.
func runReflector(t *testing.T, w *Watcher, api *fakeAPI) *store {
	t.Helper()
	s := depStore(w, nil)
	r := reflector(s, "app.oam.dev/name", api.listWatch(), api, cache.ReflectorOptions{
		Backoff: &wait.Backoff{Duration: 10 * time.Millisecond, Cap: 50 * time.Millisecond, Factor: 2},
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go r.RunWithContext(ctx)
	return s
}

// Through a real Reflector: someone else's edit wakes the owner; once the
// watch expires the store is not trusted until the relist is handed over,
// however long the relist keeps failing; an object gone meanwhile wakes
// its owner. Every request carries the ownership selector.
func TestReflector_RelistAfterAGapIsNotTrustedUntilHandedOver(t *testing.T) {
	w, q := newQueued(t)
	w.Use(app, []tracker.Key{depKey})
	w.Begin(app, depKey)(obj("7"), 1)
	api := newFakeAPI(false)
	api.lists <- listOf("10", webAt("7"))
	s := runReflector(t, w, api)
	until(t, "the first list", func() bool { rv, ok := s.resourceVersion("team", "web"); return ok && rv == versionOf("7") })
	if q.Len() != 0 {
		t.Fatal("the first list of an object as Steward left it woke its app")
	}

	fw := <-api.watches
	fw.Modify(webAt("8"))
	until(t, "the edit to wake the app", func() bool { return q.Len() == 1 })
	r, _ := q.Get()
	q.Done(r)
	q.Forget(r)
	w.Begin(app, depKey)(obj("9"), 1) // the pass that repaired it

	fw.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"})
	until(t, "the store to stop vouching while the relist runs", func() bool {
		_, ok := s.resourceVersion("team", "web")
		return !ok
	})
	api.lists <- errorObject{err: errors.New("the API server is overloaded")}
	time.Sleep(100 * time.Millisecond) // a retry or two
	if _, ok := s.resourceVersion("team", "web"); ok {
		t.Fatal("a failing relist left the store trusted")
	}
	api.lists <- listOf("20") // web was deleted during the gap
	until(t, "the relist to be handed over", func() bool {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.synced
	})
	until(t, "the delete in the gap to wake the app", func() bool { return q.Len() == 1 })
	if _, ok := s.resourceVersion("team", "web"); ok {
		t.Fatal("the store still holds the object deleted in the gap")
	}
	for len(api.selected) > 0 {
		if sel := <-api.selected; sel != "app.oam.dev/name" {
			t.Fatalf("a request selected %q", sel)
		}
	}
}

// A streaming list (WatchList) is trusted only once its initial events end,
// and is trimmed to what the store keeps.
func TestReflector_StreamingListIsTrustedOnceItsInitialEventsEnd(t *testing.T) {
	w, q := newQueued(t)
	w.Use(app, []tracker.Key{depKey})
	w.Begin(app, depKey)(obj("7"), 1)
	api := newFakeAPI(true)
	s := runReflector(t, w, api)
	fw := <-api.watches
	fw.Add(webAt("7"))
	time.Sleep(50 * time.Millisecond)
	if _, ok := s.resourceVersion("team", "web"); ok {
		t.Fatal("the store vouched for an object before the initial events ended")
	}
	fw.Action(watchapi.Bookmark, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: "10", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}})
	until(t, "the streamed list", func() bool { rv, ok := s.resourceVersion("team", "web"); return ok && rv == versionOf("7") })
	fw.Modify(webAt("11"))
	until(t, "the edit to wake the app", func() bool { return q.Len() == 1 })
}
