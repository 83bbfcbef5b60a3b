package tracker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// One read of the indexed cache gives a pass its Application's trackers
// and rescue copies: the trackers come back oldest first, without the
// copies or another Application's trackers, and a copy whose tracker is
// gone is restored (named in the result, its tracker created on the API
// server and the copy removed); a copy whose tracker exists is removed.
func TestListRestoring_OneCacheReadForTrackersAndRescueCopies(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := controllertest.Client(t)
	ns := controllertest.NewNamespace(t)
	c, err := cache.New(controllertest.Config(t), cache.Options{Scheme: controllertest.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.IndexField(ctx, &v1beta1.ResourceTracker{}, tracker.IndexApp, tracker.AppIndex); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache not synced")
	}

	labels := func(app string) map[string]string {
		return map[string]string{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: ns}
	}
	create := func(rt *v1beta1.ResourceTracker) {
		t.Helper()
		if err := admin.Create(ctx, rt); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			rt.Finalizers = nil
			_ = admin.Update(context.Background(), rt)
			_ = admin.Delete(context.Background(), rt)
		})
	}
	versioned := func(app string, gen int64) *v1beta1.ResourceTracker {
		return &v1beta1.ResourceTracker{
			ObjectMeta: metav1.ObjectMeta{Name: tracker.Name(app, ns, tracker.Versioned(gen)), Labels: labels(app)},
			Spec:       v1beta1.ResourceTrackerSpec{Type: v1beta1.ResourceTrackerTypeVersioned, ApplicationGeneration: gen},
		}
	}
	v2, v1, lost := versioned("web", 2), versioned("web", 1), versioned("web", 3)
	create(v2)
	create(v1)
	create(versioned("other", 1))
	store := &tracker.Store{Client: cachedClient{Reader: c, Client: admin}, Reader: admin, Indexed: true}
	for _, rt := range []*v1beta1.ResourceTracker{v1, lost} { // v1 exists: its copy only goes; lost is restored
		if err := store.KeepRescue(ctx, rt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		rt := &v1beta1.ResourceTracker{}
		if admin.Get(context.Background(), client.ObjectKey{Name: lost.Name}, rt) == nil {
			rt.Finalizers = nil
			_ = admin.Update(context.Background(), rt)
			_ = admin.Delete(context.Background(), rt)
		}
	})
	controllertest.Eventually(t, 10*time.Second, "the cache to hold web's trackers and copies", func() error {
		var list v1beta1.ResourceTrackerList
		if err := c.List(ctx, &list, client.MatchingFields{tracker.IndexApp: ns + "/web"}); err != nil {
			return err
		}
		if len(list.Items) != 4 {
			return controllertest.ErrNotYet
		}
		return nil
	})

	got, restored, err := store.ListRestoring(ctx, tracker.AppRef{Name: "web", Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rt := range got {
		names = append(names, rt.Name)
	}
	if want := []string{v1.Name, v2.Name}; !slices.Equal(names, want) {
		t.Errorf("trackers %v, want %v (oldest first, no rescue copy, no other app's)", names, want)
	}
	if want := []string{lost.Name}; !slices.Equal(restored, want) {
		t.Errorf("restored %v, want %v", restored, want)
	}
	if err := admin.Get(ctx, client.ObjectKey{Name: lost.Name}, &v1beta1.ResourceTracker{}); err != nil {
		t.Errorf("the lost tracker was not re-created: %v", err)
	}
	var left v1beta1.ResourceTrackerList
	if err := admin.List(ctx, &left, client.MatchingLabels{v1beta1.LabelRescueOfNamespace: ns}); err != nil {
		t.Fatal(err)
	}
	if n := len(left.Items); n > 0 {
		t.Errorf("%d rescue copies left", n)
	}
}

// cachedClient reads from a cache and writes to the API server, as the
// manager's client does.
type cachedClient struct {
	client.Reader
	client.Client
}

func (c cachedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c cachedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Reader.List(ctx, list, opts...)
}
