package application

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// trackersOf lists the trackers of an Application.
func trackersOf(t *testing.T, ns, name string) []v1beta1.ResourceTracker {
	t.Helper()
	return controllertest.TrackersOf(t, ns, name)
}

func TestGarbageCollection_RemovesWhatOnlyTheOldVersionHad(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	ctx := context.Background()
	svcKey := client.ObjectKey{Namespace: ns, Name: "web"}
	if err := testClient.Get(ctx, svcKey, &corev1.Service{}); err != nil {
		t.Fatal(err)
	}

	// v2 drops the service trait.
	app := getApp(t, ns, "web")
	app.Spec.Components[0].Traits = app.Spec.Components[0].Traits[:1]
	if err := testClient.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "web")
	eventually(t, 15*time.Second, "the Service only v1 had to be deleted", func() error {
		err := testClient.Get(ctx, svcKey, &corev1.Service{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("service still there: %v", err)
	})
	if _, err := getDeployment(t, ns, "web"); err != nil {
		t.Errorf("the Deployment both versions have was deleted: %v", err)
	}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the ConfigMap both versions have was deleted: %v", err)
	}
	// The v1 tracker keeps the Service as history (a rollback to v1 needs
	// it), no longer marked deleted once the deletion was confirmed; the
	// current tracker does not list it.
	eventually(t, 10*time.Second, "the Service entry settled as history", func() error {
		return serviceEntryIsHistory(t, ns, "web")
	})
}

func TestGarbageCollection_LeavesObjectsItDoesNotOwn(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	ctx := context.Background()
	// A ConfigMap with the name the app will render exists already and
	// belongs to nobody: the apply fails, and the object must survive
	// every later version of the app.
	pre := &corev1.ConfigMap{}
	pre.Name, pre.Namespace, pre.Data = "web-config", ns, map[string]string{"owner": "someone else"}
	if err := testClient.Create(ctx, pre); err != nil {
		t.Fatal(err)
	}
	createApp(t, ns, webApp)
	msg := waitNotReady(t, ns, "web", v1beta1.ReasonOwnershipConflict)
	if want := "ConfigMap " + ns + "/web-config"; !contains(msg, want) {
		t.Errorf("message %q does not name %s", msg, want)
	}
	// v2 no longer renders the ConfigMap (another component type).
	app := getApp(t, ns, "web")
	app.Spec.Components[0].Type = "test-widget"
	app.Spec.Components[0].Properties = nil
	app.Spec.Components[0].Traits = nil
	if err := testClient.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitNotReady(t, ns, "web", v1beta1.ReasonKindNotFound)
	time.Sleep(3 * time.Second)
	got := &corev1.ConfigMap{}
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(pre), got); err != nil {
		t.Fatalf("the pre-existing ConfigMap was deleted: %v", err)
	}
	if got.Data["owner"] != "someone else" || got.Labels[v1beta1.LabelAppName] != "" {
		t.Errorf("the pre-existing ConfigMap was modified: %+v", got)
	}
}

func TestDeletion_RemovesObjectsThenTrackers(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	ctx := context.Background()
	app := getApp(t, ns, "web")
	if err := testClient.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the application to be gone", func() error {
		err := testClient.Get(ctx, client.ObjectKeyFromObject(app), &v1beta1.Application{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	if _, err := getDeployment(t, ns, "web"); !apierrors.IsNotFound(err) {
		t.Errorf("deployment left behind: %v", err)
	}
	for _, obj := range []client.Object{&corev1.Service{}, &corev1.ConfigMap{}} {
		name := "web"
		if _, ok := obj.(*corev1.ConfigMap); ok {
			name = "web-config"
		}
		if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s left behind: %v", obj, name, err)
		}
	}
	if rts := trackersOf(t, ns, "web"); len(rts) != 0 {
		t.Errorf("%d trackers left behind", len(rts))
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// serviceEntryIsHistory checks that only an older tracker lists the
// Service, as settled history (not marked deleted).
func serviceEntryIsHistory(t *testing.T, ns, app string) error {
	t.Helper()
	current := getApp(t, ns, app).Status.LatestRevision
	for _, rt := range trackersOf(t, ns, app) {
		entries, _ := tracker.Entries(&rt)
		for _, e := range entries {
			if e.Kind != "Service" {
				continue
			}
			if current != nil && rt.Spec.ApplicationGeneration == current.Revision {
				return fmt.Errorf("the current tracker %s still lists the Service", rt.Name)
			}
			if e.Deleted {
				return fmt.Errorf("tracker %s still marks the Service deleted", rt.Name)
			}
		}
	}
	return nil
}

// Component revisions: the first version marks its components' revisions
// on its own tracker and writes no component-revision tracker; the second
// starts that tracker from the mark and adds the components that changed;
// a generation that renders the same objects adds none.
func TestComponentRevisions_RecordedPerChangedComponent(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	for _, rt := range trackersOf(t, ns, "web") {
		if rt.Spec.Type == v1beta1.ResourceTrackerTypeComponentRevision {
			t.Errorf("the first version wrote component-revision tracker %s", rt.Name)
		}
	}
	first := trackerNamed(t, ns, "web", tracker.Name("web", ns, tracker.Versioned(1)))
	var marked []record.MarkedRevision
	if first == nil || !tracker.DecodeMark(first, tracker.AnnotationComponentRevisions, &marked) || len(marked) != 1 ||
		marked[0].Component != "web" || marked[0].Revision != 1 || marked[0].ApplicationGeneration != 1 {
		t.Fatalf("the first version's tracker marks component revisions %+v", marked)
	}
	setSpec(t, ns, "web", v2Spec, nil)
	waitReady(t, ns, "web")
	// A new generation that renders the same objects (the default greeting
	// spelled out) adds no component revision.
	setSpec(t, ns, "web", strings.Replace(v2Spec, `{image: "nginx:1.27"}`, `{image: "nginx:1.27", greeting: hello}`, 1), nil)
	waitReady(t, ns, "web")
	var revs []string
	for _, rt := range trackersOf(t, ns, "web") {
		if rt.Spec.Type != v1beta1.ResourceTrackerTypeComponentRevision {
			continue
		}
		entries, _ := tracker.Entries(&rt)
		for _, e := range entries {
			var rev record.ComponentRevision
			_ = json.Unmarshal(e.Data.Raw, &rev)
			revs = append(revs, fmt.Sprintf("%s@%d", e.Name, rev.ApplicationGeneration))
		}
	}
	if got := strings.Join(revs, ","); got != "web-v1@1,web-v2@2" {
		t.Errorf("component revisions = %v, want web-v1@1,web-v2@2", got)
	}
	deleteApp(t, ns, "web")
	if n := len(trackersOf(t, ns, "web")); n != 0 {
		t.Errorf("%d trackers left after deletion", n)
	}
}

// anyEntry reports whether any tracker of the app has an entry matching
// match.
func anyEntry(t *testing.T, ns, app string, match func(v1beta1.ManagedResource) bool) bool {
	t.Helper()
	return controllertest.AnyEntry(t, ns, app, match)
}
