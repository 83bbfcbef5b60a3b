package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// denyServiceDeletes installs an admission policy refusing DELETE of
// Services in ns and returns a function that lifts it.
func denyServiceDeletes(t *testing.T, ns string) func() {
	t.Helper()
	return controllertest.DenyServiceDeletes(t, ns)
}

// installPolicy creates an admission policy and its binding, waits until
// probe says it takes effect, and returns a function that lifts it; the
// test's end lifts it too.
func installPolicy(t *testing.T, policy *admissionv1.ValidatingAdmissionPolicy, binding *admissionv1.ValidatingAdmissionPolicyBinding, what string, probe func() error) func() {
	t.Helper()
	return controllertest.InstallPolicy(t, policy, binding, what, probe)
}

func TestGarbageCollection_DeniedDeleteIsKeptAndRetried(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	lift := denyServiceDeletes(t, ns)

	setSpec(t, ns, "web", v2Spec, nil)
	eventually(t, 20*time.Second, "GarbageCollected=False DeleteFailed", func() error {
		c := v1beta1.FindCondition(getApp(t, ns, "web").Status.Conditions, v1beta1.ConditionGarbageCollected)
		if c == nil || c.Reason != v1beta1.ReasonDeleteFailed {
			return fmt.Errorf("garbageCollected = %+v", c)
		}
		if !strings.Contains(c.Message, "Service "+ns+"/web") || !strings.Contains(c.Message, "frozen") {
			return fmt.Errorf("message %q does not say which object and why", c.Message)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if !serviceExists(t, ns, "web") {
		t.Fatal("the Service went although its delete was denied")
	}
	if !anyEntry(t, ns, "web", func(e v1beta1.ManagedResource) bool { return e.Kind == "Service" && e.Deleted }) {
		t.Error("the denied Service is no longer recorded as pending deletion")
	}

	lift()
	eventually(t, 30*time.Second, "the Service deleted once allowed", func() error {
		if serviceExists(t, ns, "web") {
			return errNotYet
		}
		return serviceEntryIsHistory(t, ns, "web")
	})
	eventually(t, 15*time.Second, "GarbageCollected=True", func() error {
		c := v1beta1.FindCondition(getApp(t, ns, "web").Status.Conditions, v1beta1.ConditionGarbageCollected)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("garbageCollected = %+v", c)
		}
		return nil
	})
}

func TestDeletion_DeniedDeleteHoldsTheApplicationUntilAllowed(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	lift := denyServiceDeletes(t, ns)
	ctx := context.Background()
	if err := testClient.Delete(ctx, getApp(t, ns, "web")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	app := getApp(t, ns, "web")
	if app.Status.Phase != v1beta1.ApplicationDeleting {
		t.Errorf("phase = %q, want deleting", app.Status.Phase)
	}
	if !serviceExists(t, ns, "web") {
		t.Fatal("the Service went although its delete is denied")
	}
	if _, err := getDeployment(t, ns, "web"); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment should be deleted already (workloads go first): %v", err)
	}
	if len(trackersOf(t, ns, "web")) == 0 {
		t.Fatal("the trackers were deleted while an object they list still exists")
	}
	lift()
	eventually(t, 30*time.Second, "the application gone once the delete is allowed", func() error {
		err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &v1beta1.Application{})
		if !apierrors.IsNotFound(err) {
			return errNotYet
		}
		return nil
	})
	if serviceExists(t, ns, "web") || len(trackersOf(t, ns, "web")) != 0 {
		t.Error("objects or trackers left behind")
	}
}

// orphanedWebApp is the web Application with KubeVela's orphan finalizer:
// deleting it leaves its objects in place.
var orphanedWebApp = "metadata: {name: web, finalizers: [app.oam.dev/orphan-resource]}\nspec:" + indent(v1Spec)

func TestDeletion_OrphanFinalizerLeavesObjectsUnowned(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, orphanedWebApp)
	waitReady(t, ns, "web")
	deleteApp(t, ns, "web")
	dep, err := getDeployment(t, ns, "web")
	if err != nil {
		t.Fatalf("orphaned Deployment deleted: %v", err)
	}
	if dep.Labels[v1beta1.LabelAppName] != "" || dep.Labels[v1beta1.LabelAppNamespace] != "" {
		t.Errorf("orphaned Deployment keeps ownership labels: %v", dep.Labels)
	}
	if !serviceExists(t, ns, "web") {
		t.Error("orphaned Service deleted")
	}
	if n := len(trackersOf(t, ns, "web")); n != 0 {
		t.Errorf("%d trackers left", n)
	}
}

// What an Application let go on purpose is not taken back by a new
// Application of the same name: releasing strips the last-applied
// configuration with the labels, so the object is unowned, not an object
// whose labels were removed by hand.
func TestDeletion_OrphanedObjectsAreNotTakenBackByANewAppOfTheSameName(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, orphanedWebApp)
	waitReady(t, ns, "web")
	deleteApp(t, ns, "web")

	createApp(t, ns, webApp)
	waitNotReady(t, ns, "web", v1beta1.ReasonOwnershipConflict)
	dep, err := getDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if dep.Labels[v1beta1.LabelAppName] != "" {
		t.Errorf("the orphaned Deployment was taken back: labels %v", dep.Labels)
	}
}

// neverKeepConfig is a garbage-collect rule that keeps the ConfigMap
// forever.
const neverKeepConfig = `
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {resourceTypes: [ConfigMap]}, strategy: never}
`

func TestDeletion_FollowsARuleAddedInALaterVersion(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	// v2 says the ConfigMap v1 created is never to be deleted; the v1
	// tracker still lists it as an ordinary object.
	setSpec(t, ns, "web", v1Spec+neverKeepConfig, nil)
	eventually(t, 15*time.Second, "the ConfigMap recorded as never collected", func() error {
		if !anyEntry(t, ns, "web", func(e v1beta1.ManagedResource) bool { return e.Kind == "ConfigMap" && e.SkipGC }) {
			return errNotYet
		}
		return nil
	})
	waitReady(t, ns, "web")
	deleteApp(t, ns, "web")
	if _, err := getConfigMap(t, ns, "web-config"); err != nil {
		t.Errorf("the ConfigMap a garbage-collect never rule keeps was deleted with the app: %v", err)
	}
	if serviceExists(t, ns, "web") {
		t.Error("the Service survived the app's deletion")
	}
}

func TestDeletion_FollowsARuleRemovedInALaterVersion(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec+neverKeepConfig))
	waitReady(t, ns, "web")
	// v2 drops the rule: the ConfigMap is an ordinary object again, and
	// goes with the app. The root tracker still remembers the old rule.
	setSpec(t, ns, "web", v1Spec, nil)
	waitRevision(t, ns, "web")
	deleteApp(t, ns, "web")
	if _, err := getConfigMap(t, ns, "web-config"); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap no rule keeps any more was left behind (orphaned): %v", err)
	}
}

func TestFinalizer_AddedWithoutDroppingOneAddedMeanwhile(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	var armed atomic.Bool
	armed.Store(true)
	opts := testOptions()
	// Between Steward's read of the Application and its finalizer write,
	// the user adds the orphan finalizer.
	opts.testHooks = hooks{hookBeforeFinalizer: func() error {
		if !armed.CompareAndSwap(true, false) {
			return nil
		}
		app := getApp(t, ns, "web")
		app.Finalizers = append(app.Finalizers, v1beta1.FinalizerOrphanResource)
		return testClient.Update(ctx, app)
	}}
	startManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	if armed.Load() {
		t.Fatal("the hook never fired: the story did not happen")
	}
	app := getApp(t, ns, "web")
	for _, f := range []string{v1beta1.FinalizerOrphanResource, v1beta1.FinalizerResourceTracker} {
		if !slices.Contains(app.Finalizers, f) {
			t.Errorf("finalizer %s lost: %v", f, app.Finalizers)
		}
	}
	deleteApp(t, ns, "web")
	if !serviceExists(t, ns, "web") {
		t.Error("the orphan finalizer was lost: the Service was deleted with the app")
	}
}

func TestGarbageCollection_FollowsTheRulesAsTheyAreNow(t *testing.T) {
	for name, rule := range map[string]string{
		"read-only":   "{type: read-only, name: ro, properties: {rules: [{selector: {resourceTypes: [Service]}}]}}",
		"onAppDelete": "{type: garbage-collect, name: keep, properties: {rules: [{selector: {resourceTypes: [Service]}, strategy: onAppDelete}]}}",
	} {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			startManager(t, testCfg, testOptions())
			createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
			waitReady(t, ns, "web")
			// A later version adds the rule for the Service v1 created;
			// a version after it drops the Service from the spec. The
			// rule, as it is now, keeps the Service.
			policies := "policies:\n  - " + rule + "\n"
			setSpec(t, ns, "web", v1Spec+policies, nil)
			waitRevision(t, ns, "web")
			setSpec(t, ns, "web", v2Spec+policies, nil)
			waitRevision(t, ns, "web")
			eventually(t, 15*time.Second, "garbage collection of the dropped version", func() error {
				if anyEntry(t, ns, "web", func(e v1beta1.ManagedResource) bool { return e.Deleted }) {
					return errNotYet
				}
				return nil
			})
			if !serviceExists(t, ns, "web") {
				t.Fatalf("the Service a %s rule keeps was deleted when a new version dropped it", name)
			}
			deleteApp(t, ns, "web")
			if kept := serviceExists(t, ns, "web"); kept != (name == "read-only") {
				t.Errorf("after the app's deletion the Service exists: %v (a %s rule)", kept, name)
			}
		})
	}
}

// waitRevision waits until the Application's current generation is
// recorded and kept.
func waitRevision(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, 15*time.Second, "the new revision recorded", func() error {
		app := getApp(t, ns, name)
		if app.Status.LatestRevision == nil || app.Status.LatestRevision.Revision != app.Generation {
			return errNotYet
		}
		return nil
	})
	waitReady(t, ns, name)
}

// Once Steward removes its finalizer the Application is no longer its own:
// the name may already belong to a re-created one. The deleting status is
// written before the finalizer goes, never after, also when the deletion
// takes one pass.
func TestDeletion_NoStatusIsWrittenAfterTheFinalizerIsRemoved(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	startManager(t, log.wrap(testCfg), testOptions())
	// Nothing delivered: the deletion finishes in one pass.
	createApp(t, ns, `
metadata: {name: settings}
spec:
  components:
    - {name: c, type: no-such-type}
`)
	waitNotReady(t, ns, "settings", v1beta1.ReasonDefinitionNotFound)
	log.reset()
	deleteApp(t, ns, "settings")
	time.Sleep(time.Second) // a late write would come right after

	app := "/apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applications/settings"
	released, statusBefore := -1, false
	writes := log.writes()
	for i, w := range writes {
		if strings.HasPrefix(w, "PATCH "+app+"?") || strings.HasPrefix(w, "PUT "+app+"?") {
			released = i
		}
	}
	if released < 0 {
		t.Fatalf("no write removed the finalizer: %v", writes)
	}
	for i, w := range writes {
		if !strings.HasPrefix(w, "PATCH "+app+"/status?") {
			continue
		}
		if i > released {
			t.Errorf("status written after the finalizer was removed: %v", writes)
		}
		statusBefore = true
	}
	if !statusBefore {
		t.Errorf("the deleting status was never written: %v", writes)
	}
}
