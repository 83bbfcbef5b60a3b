package application

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// v1Spec has a Service (test-service trait); v2Spec drops it and changes
// the image.
const (
	v1Spec = controllertest.V1Spec
	v2Spec = controllertest.V2Spec
)

// forceDelete deletes an Application with its finalizers removed by hand,
// so that Steward's finalizer never runs and its trackers stay behind, and
// waits until it is gone.
func forceDelete(t *testing.T, ns, name string) {
	t.Helper()
	controllertest.ForceDelete(t, ns, name)
}

// setSpec replaces the Application's spec and annotations, retrying on
// conflicts.
func setSpec(t *testing.T, ns, name, spec string, annotations map[string]string) {
	t.Helper()
	controllertest.SetSpec(t, ns, name, spec, annotations)
}

func serviceExists(t *testing.T, ns, name string) bool {
	t.Helper()
	err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func image(t *testing.T, ns, name string) string {
	t.Helper()
	dep, err := getDeployment(t, ns, name)
	if err != nil {
		t.Fatalf("deployment %s: %v", name, err)
	}
	return dep.Spec.Template.Spec.Containers[0].Image
}

// assertNoOrphans checks that every object carrying the app's ownership
// labels is listed by one of its trackers.
func assertNoOrphans(t *testing.T, ns, app string) {
	t.Helper()
	listed := map[string]bool{}
	for _, rt := range trackersOf(t, ns, app) {
		entries, _ := tracker.Entries(&rt)
		for _, e := range entries {
			listed[e.Kind+"/"+e.Name] = true
		}
	}
	sel := client.MatchingLabels{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: ns}
	ctx := context.Background()
	var cms corev1.ConfigMapList
	var svcs corev1.ServiceList
	if err := testClient.List(ctx, &cms, client.InNamespace(ns), sel); err != nil {
		t.Fatal(err)
	}
	if err := testClient.List(ctx, &svcs, client.InNamespace(ns), sel); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if !listed["ConfigMap/"+cm.Name] {
			t.Errorf("orphan: ConfigMap %s carries the app's labels but no tracker lists it", cm.Name)
		}
	}
	for _, s := range svcs.Items {
		if !listed["Service/"+s.Name] {
			t.Errorf("orphan: Service %s carries the app's labels but no tracker lists it", s.Name)
		}
	}
}

func TestLifecycle_RapidV1V2V1KeepsEverythingV1Needs(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")

	// v2 then v1 again, back to back: the controller sees v2 at most
	// briefly.
	setSpec(t, ns, "web", v2Spec, nil)
	setSpec(t, ns, "web", v1Spec, nil)
	app := waitReady(t, ns, "web")
	time.Sleep(5 * time.Second) // several passes, GC included
	if !serviceExists(t, ns, "web") {
		t.Error("the Service v1 needs was deleted")
	}
	if got := image(t, ns, "web"); got != "nginx:1.26" {
		t.Errorf("image = %s, want v1's nginx:1.26", got)
	}
	if app.Status.LatestRevision == nil || app.Status.LatestRevision.Revision != app.Generation {
		t.Errorf("latestRevision = %+v, want generation %d", app.Status.LatestRevision, app.Generation)
	}
	assertNoOrphans(t, ns, "web")
}

func TestLifecycle_RollbackByPublishVersionRestoresTheEarlierObjects(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web, annotations: {app.oam.dev/publishVersion: alpha}}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")

	setSpec(t, ns, "web", v2Spec, map[string]string{v1beta1.AnnotationPublishVersion: "beta"})
	eventually(t, 20*time.Second, "beta live", func() error {
		if serviceExists(t, ns, "web") || image(t, ns, "web") != "nginx:1.27" {
			return errNotYet
		}
		return nil
	})

	// Back to alpha without touching the spec (which is still beta's):
	// alpha's recorded manifests come back, not a render of the spec.
	setSpec(t, ns, "web", v2Spec, map[string]string{v1beta1.AnnotationPublishVersion: "alpha"})
	eventually(t, 20*time.Second, "alpha restored", func() error {
		if !serviceExists(t, ns, "web") || image(t, ns, "web") != "nginx:1.26" {
			app := getApp(t, ns, "web")
			return fmt.Errorf("service %v, image %s, status %+v", serviceExists(t, ns, "web"), image(t, ns, "web"), app.Status.Conditions)
		}
		return nil
	})
	// Only the annotation changed, so the generation did not move and
	// Ready may still be the beta pass's: wait for the status to name alpha.
	eventually(t, 20*time.Second, "latestRevision web-v1 (alpha)", func() error {
		if rev := getApp(t, ns, "web").Status.LatestRevision; rev == nil || rev.Name != "web-v1" || rev.RevisionHash != "alpha" {
			return fmt.Errorf("latestRevision = %+v, want web-v1, alpha's ApplicationRevision", rev)
		}
		return nil
	})
	waitReady(t, ns, "web")
	waitEvent(t, ns, "web", v1beta1.EventRolledBack)
	assertNoOrphans(t, ns, "web")
}

func TestLifecycle_KilledBetweenRecordAndApply(t *testing.T) {
	ns := newNamespace(t)
	killed := errors.New("killed")
	opts := testOptions()
	first := startStoppableManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v2Spec))
	waitReady(t, ns, "web")
	first()

	// v2 → v1 adds the Service; the controller dies right after recording.
	opts.testHooks = hooks{hookAfterRecord: func() error { return killed }}
	second := startStoppableManager(t, testCfg, opts)
	setSpec(t, ns, "web", v1Spec, nil)
	eventually(t, 15*time.Second, "the v1 tracker to be recorded", func() error {
		if !anyEntry(t, ns, "web", func(e v1beta1.ManagedResource) bool { return e.Kind == "Service" }) {
			return errNotYet
		}
		return nil
	})
	second()
	if serviceExists(t, ns, "web") {
		t.Fatal("the Service exists although the controller died before applying")
	}
	assertNoOrphans(t, ns, "web")

	// After a restart the recorded version is applied and nothing is lost.
	startManager(t, testCfg, testOptions())
	waitReady(t, ns, "web")
	if !serviceExists(t, ns, "web") || image(t, ns, "web") != "nginx:1.26" {
		t.Error("v1 not applied after the restart")
	}
	assertNoOrphans(t, ns, "web")
}

func TestLifecycle_KilledBetweenMarkAndDelete(t *testing.T) {
	ns := newNamespace(t)
	killed := errors.New("killed")
	opts := testOptions()
	first := startStoppableManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	first()

	opts.testHooks = hooks{hookAfterMark: func() error { return killed }}
	second := startStoppableManager(t, testCfg, opts)
	setSpec(t, ns, "web", v2Spec, nil)
	eventually(t, 15*time.Second, "the Service entry to be marked deleted", func() error {
		if !anyEntry(t, ns, "web", func(e v1beta1.ManagedResource) bool { return e.Kind == "Service" && e.Deleted }) {
			return errNotYet
		}
		return nil
	})
	second()
	if !serviceExists(t, ns, "web") {
		t.Fatal("the Service is gone although the controller died before deleting")
	}

	startManager(t, testCfg, testOptions())
	eventually(t, 20*time.Second, "the marked Service to be deleted after the restart", func() error {
		if serviceExists(t, ns, "web") {
			return errNotYet
		}
		return serviceEntryIsHistory(t, ns, "web")
	})
	if image(t, ns, "web") != "nginx:1.27" {
		t.Error("v2's Deployment is wrong")
	}
}

func TestLifecycle_RecreatedAppWithTheSameName(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	old := createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")

	// The old app disappears without its finalizer running (someone
	// removed it by hand): its trackers stay behind.
	forceDelete(t, ns, old.Name)
	if len(trackersOf(t, ns, "web")) == 0 {
		t.Fatal("expected stale trackers for this story")
	}

	// A new app with the same name and a different spec.
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v2Spec))
	waitReady(t, ns, "web")
	time.Sleep(4 * time.Second)
	if got := image(t, ns, "web"); got != "nginx:1.27" {
		t.Errorf("image = %s: the new app's Deployment is not its own", got)
	}
	if serviceExists(t, ns, "web") {
		t.Error("the old app's Service, which the new app does not render, was left behind")
	}
	newApp := getApp(t, ns, "web")
	for _, rt := range trackersOf(t, ns, "web") {
		if rt.Labels[v1beta1.LabelAppUID] != string(newApp.UID) {
			t.Errorf("stale tracker %s still there", rt.Name)
		}
	}
}

func indent(s string) string { return controllertest.Indent(s) }

// armedOnce returns a hook that fails a pass once each time arm is set.
func armedOnce(arm *atomic.Bool, err error) func() error {
	return func() error {
		if arm.CompareAndSwap(true, false) {
			return err
		}
		return nil
	}
}

func TestLifecycle_AbortedPassesNeitherRollBackNorSkipTheDispatch(t *testing.T) {
	ns := newNamespace(t)
	aborted := errors.New("aborted")
	var afterRecord, afterKeep atomic.Bool
	opts := testOptions()
	opts.testHooks = hooks{
		hookAfterRecord: armedOnce(&afterRecord, aborted),
		hookAfterKeep:   armedOnce(&afterKeep, aborted),
	}
	startManager(t, testCfg, opts)
	// Report-only drift: only a dispatch creates what a version adds, so a
	// version whose dispatch was cut off must still be dispatched.
	createApp(t, ns, "metadata: {name: web, annotations: {app.oam.dev/drift-mode: report}}\nspec:"+indent(v2Spec))
	waitReady(t, ns, "web")

	// v1 adds the Service; the pass stops right after recording it.
	afterRecord.Store(true)
	setSpec(t, ns, "web", v1Spec, nil)
	waitReady(t, ns, "web")
	if !serviceExists(t, ns, "web") {
		t.Fatal("the version recorded by a pass that stopped was never dispatched")
	}

	// v2 drops it again; the pass stops after applying, before status.
	afterKeep.Store(true)
	setSpec(t, ns, "web", v2Spec, nil)
	waitReady(t, ns, "web")
	eventually(t, 15*time.Second, "the Service collected", func() error {
		if serviceExists(t, ns, "web") {
			return errNotYet
		}
		return nil
	})
	if afterRecord.Load() || afterKeep.Load() {
		t.Fatal("a hook never fired: the story did not happen")
	}
	for _, e := range appEvents(t, ns, "web") {
		if e.Reason == v1beta1.EventRolledBack {
			t.Errorf("false rollback event: %s", e.Note)
		}
	}
}

func TestLifecycle_RecreatedAppNeverDeletesWhatItStillWants(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	before, err := getConfigMap(t, ns, "web-config")
	if err != nil {
		t.Fatal(err)
	}

	// The app is force-deleted (its finalizer removed by hand)...
	forceDelete(t, ns, "web")
	// ...and re-created with the same objects, the ConfigMap (think of a
	// PersistentVolumeClaim) now kept for the app's lifetime: it moves from
	// the versioned tracker it shares with the old app to the root one.
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec+`
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {resourceTypes: [ConfigMap]}, strategy: onAppDelete}
`))
	waitReady(t, ns, "web")
	time.Sleep(3 * time.Second) // GC of the old app's trackers included
	after, err := getConfigMap(t, ns, "web-config")
	if err != nil {
		t.Fatalf("the ConfigMap the new app wants is gone: %v", err)
	}
	if after.UID != before.UID {
		t.Error("the ConfigMap the new app wants was deleted and created again")
	}
}
