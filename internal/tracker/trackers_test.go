package tracker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// deleteTrackerByHand deletes a tracker as a user would, and waits until
// a live tracker of that name (another object) replaces it.
func deleteTrackerByHand(t *testing.T, ns, app, name string) *v1beta1.ResourceTracker {
	t.Helper()
	old := controllertest.TrackerNamed(t, ns, app, name)
	if old == nil {
		t.Fatalf("no tracker %s", name)
	}
	if err := controllertest.Client(t).Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	var fresh *v1beta1.ResourceTracker
	controllertest.Eventually(t, 15*time.Second, "tracker "+name+" re-created", func() error {
		fresh = controllertest.TrackerNamed(t, ns, app, name)
		switch {
		case fresh == nil:
			return fmt.Errorf("tracker %s is gone", name)
		case fresh.UID == old.UID || !fresh.DeletionTimestamp.IsZero():
			return controllertest.ErrNotYet
		}
		return nil
	})
	return fresh
}

func TestTrackers_HandDeletedRootIsRecreatedAndItsObjectsGoWithTheApp(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateApp(t, ns, "metadata: {name: web}\nspec:"+controllertest.Indent(controllertest.V1Spec+keepServiceOnAppDelete))
	controllertest.WaitReady(t, ns, "web")
	root := deleteTrackerByHand(t, ns, "web", tracker.Name("web", ns, tracker.Root()))
	entries, err := tracker.Entries(root)
	if err != nil || len(entries) != 1 || entries[0].Kind != "Service" {
		t.Fatalf("the re-created root tracker lists %v (%v), want the Service", entries, err)
	}
	controllertest.DeleteApp(t, ns, "web")
	if controllertest.Exists(t, &corev1.Service{}, ns, "web") {
		t.Error("the Service the root tracker listed was orphaned: it survived the app's deletion")
	}
}

// garbageWaitingInV1 delivers v1 of an app "web" in a new namespace, then
// v2, which drops the Service; deleting it is refused, so v1's tracker
// keeps the Service marked for deletion. lift allows deletes again.
func garbageWaitingInV1(t *testing.T) (ns string, lift func()) {
	t.Helper()
	ns = controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateApp(t, ns, "metadata: {name: web}\nspec:"+controllertest.Indent(controllertest.V1Spec))
	controllertest.WaitReady(t, ns, "web")
	lift = controllertest.DenyServiceDeletes(t, ns)
	controllertest.SetSpec(t, ns, "web", controllertest.V2Spec, nil)
	controllertest.Eventually(t, 20*time.Second, "the Service marked for deletion", func() error {
		if !controllertest.AnyEntry(t, ns, "web", func(e v1beta1.ManagedResource) bool { return e.Kind == "Service" && e.Deleted }) {
			return controllertest.ErrNotYet
		}
		return nil
	})
	return ns, lift
}

func TestTrackers_HandDeletedOlderTrackerStillCollectsItsGarbage(t *testing.T) {
	ns, lift := garbageWaitingInV1(t)
	deleteTrackerByHand(t, ns, "web", tracker.Name("web", ns, tracker.Versioned(1)))
	lift()
	controllertest.Eventually(t, 30*time.Second, "the Service collected once deletes are allowed", func() error {
		if controllertest.Exists(t, &corev1.Service{}, ns, "web") {
			return controllertest.ErrNotYet
		}
		return nil
	})
	controllertest.WaitEvent(t, ns, "web", v1beta1.EventResourceTrackerRecreated)
}

func TestTrackers_OfAGoneApplicationCanBeDeleted(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	ctx := context.Background()
	controllertest.CreateApp(t, ns, "metadata: {name: web}\nspec:"+controllertest.Indent(controllertest.V2Spec))
	controllertest.WaitReady(t, ns, "web")
	// The app is force-deleted: its trackers stay behind, protected.
	controllertest.ForceDelete(t, ns, "web")
	left := controllertest.TrackersOf(t, ns, "web")
	if len(left) == 0 {
		t.Fatal("expected trackers left behind for this story")
	}
	// Deleting them by hand must work: there is no app to re-create them
	// for.
	for i := range left {
		if err := controllertest.Client(t).Delete(ctx, &left[i]); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.Eventually(t, 15*time.Second, "the trackers gone", func() error {
		if n := len(controllertest.TrackersOf(t, ns, "web")); n > 0 {
			return fmt.Errorf("%d trackers left", n)
		}
		return nil
	})
}

// keepServiceOnAppDelete keeps the Service across versions: it is listed
// by the root tracker and deleted with the Application.
const keepServiceOnAppDelete = `
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {resourceTypes: [Service]}, strategy: onAppDelete}
`

// failingCreates is a client whose creates of one tracker name fail, as if
// the process had died right before it could write them.
type failingCreates struct {
	client.Client
	name string
}

func (c failingCreates) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if obj.GetName() == c.name {
		return fmt.Errorf("killed before creating %s", c.name)
	}
	return c.Client.Create(ctx, obj, opts...)
}

func TestTrackers_StoppedHalfwayThroughARecreationLosesNothing(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	stop := managertest.Start(t, nil, managertest.Options())
	controllertest.CreateApp(t, ns, "metadata: {name: web}\nspec:"+controllertest.Indent(controllertest.V1Spec+keepServiceOnAppDelete))
	controllertest.WaitReady(t, ns, "web")
	stop()
	ctx := context.Background()
	rootName := tracker.Name("web", ns, tracker.Root())
	root := controllertest.TrackerNamed(t, ns, "web", rootName)
	if root == nil {
		t.Fatal("no root tracker")
	}
	// Someone deletes the root tracker by hand; the controller lets the
	// doomed tracker go and is killed before it can create the copy.
	if err := admin.Delete(ctx, root); err != nil {
		t.Fatal(err)
	}
	doomed := controllertest.TrackerNamed(t, ns, "web", rootName)
	store := &tracker.Store{Client: failingCreates{Client: admin, name: rootName}}
	if _, err := store.Recreate(ctx, doomed); err == nil {
		t.Fatal("the re-creation was expected to fail")
	}
	controllertest.Eventually(t, 10*time.Second, "the doomed root tracker gone", func() error {
		if controllertest.TrackerNamed(t, ns, "web", rootName) != nil {
			return controllertest.ErrNotYet
		}
		return nil
	})

	// The restarted controller finishes the re-creation: the Service the
	// root tracker listed is deleted with the app, not orphaned.
	managertest.Start(t, nil, managertest.Options())
	controllertest.Eventually(t, 20*time.Second, "the root tracker restored", func() error {
		rt := controllertest.TrackerNamed(t, ns, "web", rootName)
		if rt == nil {
			return controllertest.ErrNotYet
		}
		entries, err := tracker.Entries(rt)
		if err != nil || len(entries) != 1 || entries[0].Kind != "Service" {
			return fmt.Errorf("restored root tracker lists %v (%v), want the Service", entries, err)
		}
		return nil
	})
	controllertest.WaitEvent(t, ns, "web", v1beta1.EventResourceTrackerRecreated)
	controllertest.DeleteApp(t, ns, "web")
	if controllertest.Exists(t, &corev1.Service{}, ns, "web") {
		t.Error("the Service the lost root tracker listed was orphaned: it survived the app's deletion")
	}
	var left v1beta1.ResourceTrackerList
	if err := admin.List(ctx, &left, client.MatchingLabels{v1beta1.LabelRescueOfNamespace: ns}); err != nil {
		t.Fatal(err)
	}
	if n := len(left.Items); n > 0 {
		t.Errorf("%d rescue copies left behind", n)
	}
}

func TestTrackers_ForegroundDeletedTrackerStillCollectsItsGarbage(t *testing.T) {
	ns, lift := garbageWaitingInV1(t)
	ctx := context.Background()
	name := tracker.Name("web", ns, tracker.Versioned(1))
	old := controllertest.TrackerNamed(t, ns, "web", name)
	// kubectl delete --cascade=foreground: the API server adds its own
	// finalizer, which outlives Steward's (envtest runs no garbage
	// collector, so it stays until the test removes it as one would).
	if err := controllertest.Client(t).Delete(ctx, old, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	var held *v1beta1.ResourceTracker
	controllertest.Eventually(t, 20*time.Second, "Steward to let the tracker go, leaving the foreground finalizer", func() error {
		held = controllertest.TrackerNamed(t, ns, "web", name)
		if held == nil || held.UID != old.UID {
			return fmt.Errorf("the tracker is gone or replaced while the foreground finalizer holds it")
		}
		if controllerutil.ContainsFinalizer(held, v1beta1.FinalizerTrackerProtection) {
			return controllertest.ErrNotYet
		}
		return nil
	})
	// Several passes run while the tracker is held (the error back-off
	// retries within milliseconds, the re-sync period is 2 s): none may
	// write into it or forget its entries.
	for range 30 {
		if rt := controllertest.TrackerNamed(t, ns, "web", name); rt == nil || rt.UID != old.UID {
			t.Fatal("the tracker went while the foreground finalizer held it")
		}
		time.Sleep(100 * time.Millisecond)
	}
	held = controllertest.TrackerNamed(t, ns, "web", name)
	// The garbage collector finishes the foreground deletion, and the
	// Service may be deleted again.
	held.Finalizers = nil
	if err := controllertest.Client(t).Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	lift()
	controllertest.Eventually(t, 30*time.Second, "the Service collected once the tracker is back", func() error {
		if controllertest.Exists(t, &corev1.Service{}, ns, "web") {
			return controllertest.ErrNotYet
		}
		return nil
	})
}
