package watch

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

var (
	app    = types.NamespacedName{Namespace: "team", Name: "web"}
	depKey = tracker.Key{Cluster: "local", Group: "apps", Kind: "Deployment", Namespace: "team", Name: "web"}
)

// newQueued returns a watcher whose source feeds a real work queue.
func newQueued(t *testing.T) (*Watcher, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	t.Helper()
	w := New(Options{})
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	if err := w.Source().Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	return w, q
}

func obj(rv string) *metav1.ObjectMeta { return &metav1.ObjectMeta{ResourceVersion: rv, UID: "u1"} }

// depStore returns the store of depKey's kind, whose changes reach w.
func depStore(w *Watcher, seed map[storeKey]cached) *store {
	return newStore(w.changed(kindOf(normalize(depKey))), seed)
}

func dep(w *Watcher, rv string, gone bool) {
	w.event(objectKeyOf(normalize(depKey)), versionOf(rv), app, gone)
}

func TestEvents_OwnWritesAreDroppedAndOthersEnqueueTheApp(t *testing.T) {
	w, q := newQueued(t)
	w.Use(app, []tracker.Key{depKey})

	// Not applied yet in this process: nothing to compare with.
	dep(w, "1", false)
	if q.Len() != 0 {
		t.Fatal("an object Steward has not applied yet enqueued its app")
	}

	done := w.Begin(app, depKey)
	// The watch delivers Steward's own write before the write returned.
	dep(w, "2", false)
	done(obj("2"), 7)
	if q.Len() != 0 {
		t.Fatal("Steward's own write, seen while in flight, enqueued the app")
	}
	dep(w, "2", false)
	if q.Len() != 0 {
		t.Fatal("Steward's own write enqueued the app")
	}

	dep(w, "3", false)
	if q.Len() != 1 {
		t.Fatal("someone else's change did not enqueue the app")
	}
	// A burst coalesces into one reconcile.
	dep(w, "4", false)
	dep(w, "4", true)
	if q.Len() != 1 {
		t.Fatalf("a burst queued %d requests, want 1", q.Len())
	}
}

func TestEvents_ChangeDuringAWriteIsLookedAtAgain(t *testing.T) {
	w, q := newQueued(t)
	w.Use(app, []tracker.Key{depKey})
	done := w.Begin(app, depKey)
	dep(w, "5", true) // deleted while Steward wrote
	done(obj("6"), 1)
	if q.Len() != 1 {
		t.Fatal("a delete during Steward's write was lost")
	}
}

func TestEvents_DeleteOfAnObjectNoLongerListedIsIgnored(t *testing.T) {
	w, q := newQueued(t)
	w.Use(app, []tracker.Key{depKey})
	w.Begin(app, depKey)(obj("2"), 1)
	// The next version no longer has it: garbage collection deletes it.
	w.Use(app, nil)
	dep(w, "2", true)
	if q.Len() != 0 {
		t.Fatal("garbage collection's own delete enqueued the app")
	}
}

func TestUse_KindsAreCountedOverApplications(t *testing.T) {
	w := New(Options{})
	other := types.NamespacedName{Namespace: "team", Name: "api"}
	w.Use(app, []tracker.Key{depKey})
	w.Use(other, []tracker.Key{{Group: "apps", Kind: "Deployment", Namespace: "team", Name: "api"}})
	k := kindKey{Group: "apps", Kind: "Deployment"}
	if w.refs[k] != 2 {
		t.Fatalf("refs = %d, want 2 (local and \"\" are the same cluster)", w.refs[k])
	}
	w.Forget(app)
	w.Use(other, nil)
	if _, ok := w.refs[k]; ok {
		t.Fatal("a kind no app lists is still referenced")
	}
	if len(w.apps) != 1 || len(w.apps[other].objects) != 0 {
		t.Fatalf("state left behind: %+v", w.apps)
	}
}

func TestUnchanged_NeedsARunningInformer(t *testing.T) {
	w := New(Options{})
	w.Use(app, []tracker.Key{depKey})
	w.Begin(app, depKey)(obj("2"), 1)
	if _, ok := w.Unchanged(context.Background(), nil, app, depKey, "apps/v1", 1); ok {
		t.Fatal("unchanged without an informer to tell")
	}
	var nilWatcher *Watcher
	if _, ok := nilWatcher.Unchanged(context.Background(), nil, app, depKey, "apps/v1", 1); ok {
		t.Fatal("a nil Watcher skipped an object")
	}
}

// The store keeps an object's resourceVersion and owner, and hands on
// every change: a resync of the same resourceVersion is none.
func TestStore_ChangesOfOthersEnqueueTheOwner(t *testing.T) {
	w, q := newQueued(t)
	w.Use(app, []tracker.Key{depKey})
	w.Begin(app, depKey)(obj("7"), 1)
	s := depStore(w, nil)
	live := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "web", Namespace: "team", ResourceVersion: "7", UID: "u1",
		Labels:      map[string]string{v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "team", "tier": "front"},
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"},
	}}
	if _, ok := s.resourceVersion("team", "web"); ok {
		t.Fatal("a store that has not listed yet answered")
	}
	if err := s.Replace([]any{live}, "7"); err != nil {
		t.Fatal(err)
	}
	if rv, ok := s.resourceVersion("team", "web"); !ok || rv.String() != "7" {
		t.Fatalf("resourceVersion = %v, %v; want 7", rv, ok)
	}
	if err := s.Update(live); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 {
		t.Fatal("Steward's own resourceVersion, or a resync, enqueued the app")
	}
	changed := live.DeepCopy()
	changed.ResourceVersion = "8"
	if err := s.Update(changed); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 1 {
		t.Fatal("someone else's change did not enqueue the app")
	}
	got, _ := q.Get()
	if got.NamespacedName != app {
		t.Fatalf("enqueued %v, want %v", got, app)
	}
	q.Done(got)
	q.Forget(got)
}

// A delete whose object no longer carries the ownership labels (the
// labels were removed, so the object left the selector) wakes the owner
// the store knew; so does an object missing from a relist.
func TestStore_GoneObjectsWakeTheOwnerTheStoreKnew(t *testing.T) {
	for name, remove := range map[string]func(*store, *metav1.PartialObjectMetadata) error{
		"delete without labels": func(s *store, live *metav1.PartialObjectMetadata) error {
			unlabelled := live.DeepCopy()
			unlabelled.Labels, unlabelled.ResourceVersion = nil, "9"
			return s.Delete(unlabelled)
		},
		"missing from a relist": func(s *store, _ *metav1.PartialObjectMetadata) error {
			return s.Replace(nil, "9")
		},
	} {
		t.Run(name, func(t *testing.T) {
			w, q := newQueued(t)
			w.Use(app, []tracker.Key{depKey})
			w.Begin(app, depKey)(obj("7"), 1)
			s := depStore(w, nil)
			live := webAt("7")
			if err := s.Replace([]any{live}, "7"); err != nil {
				t.Fatal(err)
			}
			if err := remove(s, live); err != nil {
				t.Fatal(err)
			}
			if q.Len() != 1 {
				t.Fatal("the owner was not woken")
			}
			if _, ok := s.resourceVersion("team", "web"); ok || s.len() != 0 {
				t.Fatal("the store still holds the object")
			}
		})
	}
}

// What a streaming list holds until its Replace is trimmed to what the
// store reads, and trimming twice changes nothing.
func TestTrim_KeepsWhatTheStoreReads(t *testing.T) {
	live := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "web", Namespace: "team", ResourceVersion: "7", UID: "u1",
		Labels:      map[string]string{v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "team", "tier": "front"},
		Annotations: map[string]string{"app.oam.dev/shared-by": "team/web", v1beta1.AnnotationLastApplied: "{}"},
	}}
	once, err := trim(live)
	if err != nil {
		t.Fatal(err)
	}
	twice, _ := trim(once)
	m := twice.(*metav1.PartialObjectMetadata)
	if m.Name != "web" || m.Namespace != "team" || m.ResourceVersion != "7" || m.UID != "" ||
		len(m.Labels) != 2 || len(m.Annotations) != 1 {
		t.Fatalf("trimmed to %+v", m.ObjectMeta)
	}
	k1, c1, _ := entryOf(live)
	k2, c2, _ := entryOf(twice)
	if k1 != k2 || c1 != c2 {
		t.Fatal("the store keeps something else of a trimmed object")
	}
}

// A shared resource names its first sharer in its labels and every sharer
// in its shared-by annotation: an edit by someone else wakes each sharer
// that applied it, not only the owner.
func TestEvents_EverySharerOfASharedResourceIsWoken(t *testing.T) {
	w, q := newQueued(t)
	other := types.NamespacedName{Namespace: "team", Name: "api"}
	for _, a := range []types.NamespacedName{app, other} {
		w.Use(a, []tracker.Key{depKey})
		w.Begin(a, depKey)(obj("5"), 1)
	}
	s := depStore(w, nil)
	if err := s.Add(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team", Name: "web", ResourceVersion: "6",
		Labels:      map[string]string{v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "team"},
		Annotations: map[string]string{"app.oam.dev/shared-by": "team/web,team/api", v1beta1.AnnotationLastApplied: "{}"},
	}}); err != nil {
		t.Fatal(err)
	}
	woken := map[types.NamespacedName]bool{}
	for q.Len() > 0 {
		r, _ := q.Get()
		woken[r.NamespacedName] = true
		q.Done(r)
	}
	if !woken[app] || !woken[other] || len(woken) != 2 {
		t.Errorf("woken %v, want both sharers", woken)
	}
}

// The cache is trusted between full reads only: the first pass of each
// Application in a process reads everything, and so does the first pass
// once FullReadPeriod has passed since the last full read.
func TestFullReadDue_FirstPassThenOncePerPeriod(t *testing.T) {
	now := time.Unix(1000, 0)
	w := New(Options{FullReadPeriod: time.Hour, now: func() time.Time { return now }})
	w.Use(app, []tracker.Key{depKey})
	steps := []struct {
		after time.Duration
		want  bool
	}{{0, true}, {time.Minute, false}, {58 * time.Minute, false}, {time.Minute, true}, {time.Second, false}}
	for i, s := range steps {
		now = now.Add(s.after)
		if got := w.FullReadDue(app); got != s.want {
			t.Errorf("pass %d (+%s): full read %v, want %v", i, s.after, got, s.want)
		}
	}
	never := New(Options{now: func() time.Time { return now }})
	never.Use(app, []tracker.Key{depKey})
	if !never.FullReadDue(app) {
		t.Error("the first pass of a process did not read everything")
	}
	now = now.Add(100 * time.Hour)
	if never.FullReadDue(app) {
		t.Error("with no period, a later pass read everything")
	}
	var timer *Watcher
	if timer.FullReadDue(app) {
		t.Error("timer mode asked for a full read (it reads everything anyway)")
	}
}

// A store that replaces a stopped one (the cluster was unreachable, its
// credentials changed) starts from what that one held: an object deleted
// while no watch ran is found gone by the first list, and wakes its owner.
func TestStore_ObjectsDeletedWhileStoppedWakeTheirOwner(t *testing.T) {
	w, q := newQueued(t)
	w.Use(app, []tracker.Key{depKey})
	w.Begin(app, depKey)(obj("7"), 1)
	first := depStore(w, nil)
	if err := first.Replace([]any{webAt("7")}, "7"); err != nil {
		t.Fatal(err)
	}
	next := depStore(w, first.held())
	if _, ok := next.resourceVersion("team", "web"); ok {
		t.Fatal("a seeded store vouched for an object before its first list")
	}
	if err := next.Replace(nil, "9"); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 1 {
		t.Fatal("the object deleted while no watch ran did not wake its owner")
	}
}

// An object relabelled for another Application wakes both: the one it was
// taken from, and the one it now names.
func TestStore_ChangedOwnerWakesTheOldAndTheNew(t *testing.T) {
	w, q := newQueued(t)
	other := types.NamespacedName{Namespace: "team", Name: "api"}
	for _, a := range []types.NamespacedName{app, other} {
		w.Use(a, []tracker.Key{depKey})
		w.Begin(a, depKey)(obj("7"), 1)
	}
	s := depStore(w, nil)
	if err := s.Replace([]any{webAt("7")}, "7"); err != nil {
		t.Fatal(err)
	}
	moved := webAt("8")
	moved.Labels[v1beta1.LabelAppName] = "api"
	if err := s.Update(moved); err != nil {
		t.Fatal(err)
	}
	woken := map[types.NamespacedName]bool{}
	for q.Len() > 0 {
		r, _ := q.Get()
		woken[r.NamespacedName] = true
		q.Done(r)
	}
	if !woken[app] || !woken[other] {
		t.Errorf("woken %v, want both the old and the new owner", woken)
	}
}
