package application

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// KubeVela's conditions are crossplane's: type, status, reason and
// lastTransitionTime, a message only when there is something to say, no
// observedGeneration (see KubeVela's apis/core.oam.dev/condition).
const kubevelaConditions = `[
  {"type": "Parsed", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-02T03:04:05Z"},
  {"type": "Revision", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-02T03:04:05Z"},
  {"type": "Policy", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-02T03:04:05Z"},
  {"type": "Render", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-02T03:04:05Z"},
  {"type": "Workflow", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-02T03:04:05Z"},
  {"type": "Ready", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2026-01-02T03:04:05Z"}
]`

// patchStatusRaw writes a JSON merge patch to the Application's status
// subresource, as a tool that does not use Steward's Go types would.
func patchStatusRaw(ns, name, status string) error {
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return testClient.Status().Patch(context.Background(), app, client.RawPatch(types.MergePatchType, []byte(`{"status": `+status+`}`)))
}

// Tools written for KubeVela write conditions in KubeVela's shape (no
// message, no observedGeneration) into an Application's status to have it
// looked at again: the API server accepts them, the write wakes Steward
// at once (the re-sync period here is far away), and Steward's next status
// replaces them with its own.
func TestConditions_KubeVelaShapedWriteIsAcceptedAndWakesSteward(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.ReSyncPeriod = 10 * time.Minute
	startManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")

	nudge := `{"conditions": [{"type": "Ready", "status": "False", "reason": "ReconcileError", "lastTransitionTime": "2026-01-02T03:04:05Z"},
	  {"type": "Synced", "status": "False", "reason": "ReconcileError", "lastTransitionTime": "2026-01-02T03:04:05Z"}]}`
	if err := patchStatusRaw(ns, "web", nudge); err != nil {
		t.Fatalf("a status write in KubeVela's shape was refused: %v", err)
	}
	eventually(t, 15*time.Second, "Steward's own conditions back", func() error {
		app := getApp(t, ns, "web")
		ready := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != v1beta1.ReasonSucceeded || ready.ObservedGeneration != app.Generation {
			return fmt.Errorf("ready %+v", ready)
		}
		if c := v1beta1.FindCondition(app.Status.Conditions, "Synced"); c != nil {
			return fmt.Errorf("KubeVela's Synced condition is still there: %+v", c)
		}
		return nil
	})
}

// kubevelaObject is an object as KubeVela's dispatch leaves it: the
// Application's ownership labels and KubeVela's own.
func kubevelaObject(t *testing.T, ns, doc, component, resourceType string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns)
	u.SetLabels(map[string]string{
		v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: ns, v1beta1.LabelAppComponent: component,
		v1beta1.LabelAppRevision: "web-v2", "app.oam.dev/resourceType": resourceType,
	})
	return u
}

// kubevelaEntry records u in a KubeVela tracker, manifest included.
func kubevelaEntry(t *testing.T, u *unstructured.Unstructured, component, trait string) v1beta1.ManagedResource {
	t.Helper()
	raw, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return v1beta1.ManagedResource{
		ClusterObjectReference: v1beta1.ClusterObjectReference{Creator: "workflow", APIVersion: u.GetAPIVersion(), Kind: u.GetKind(),
			Namespace: u.GetNamespace(), Name: u.GetName()},
		OAMObjectReference: v1beta1.OAMObjectReference{Component: component, Trait: trait},
		Data:               &runtime.RawExtension{Raw: raw},
	}
}

// kubevelaTracker creates a tracker as KubeVela's resourcetracker package
// writes it: its name, the app labels with the UID and the app revision,
// KubeVela's finalizer, and no tracker type label.
func kubevelaTracker(t *testing.T, app *v1beta1.Application, name string, typ v1beta1.ResourceTrackerType, gen int64, entries ...v1beta1.ManagedResource) {
	t.Helper()
	rt := &v1beta1.ResourceTracker{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{v1beta1.FinalizerKubeVelaTracker},
			Labels: map[string]string{v1beta1.LabelAppName: app.Name, v1beta1.LabelAppNamespace: app.Namespace,
				v1beta1.LabelAppUID: string(app.UID), v1beta1.LabelAppRevision: "web-v1"}},
		Spec: v1beta1.ResourceTrackerSpec{Type: typ, ApplicationGeneration: gen, ManagedResources: entries},
	}
	if err := testClient.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
}

// leftByKubeVela sets up, with no controller running, an Application
// "web" exactly as KubeVela leaves it when it is stopped just after its
// generation 2 dropped the component "extra": generation 2 is delivered
// (tracker web-v2-<ns>), and KubeVela's garbage collection had begun to
// delete generation 1's tracker, which still lists web-extra, when it
// stopped. It returns the live objects by name.
func leftByKubeVela(t *testing.T, ns string) map[string]*unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	app := createApp(t, ns, `
metadata:
  name: web
  finalizers: [app.oam.dev/resource-tracker-finalizer]
spec:`+indent(v1Spec+`
  - name: extra
    type: test-config
    properties: {name: web-extra}
`))
	live := map[string]*unstructured.Unstructured{
		"Deployment/web": kubevelaObject(t, ns, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.26"}]}
`, "web", "WORKLOAD"),
		"ConfigMap/web-config": kubevelaObject(t, ns, "{apiVersion: v1, kind: ConfigMap, metadata: {name: web-config}, data: {greeting: hello}}", "web", "WORKLOAD"),
		"Service/web": kubevelaObject(t, ns, `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 80}]}
`, "web", "TRAIT"),
		"ConfigMap/web-extra": kubevelaObject(t, ns, "{apiVersion: v1, kind: ConfigMap, metadata: {name: web-extra}}", "extra", "WORKLOAD"),
		// Kept by KubeVela for the Application's lifetime (its root
		// tracker): a garbage-collect rule of an earlier version.
		"ConfigMap/web-keep": kubevelaObject(t, ns, "{apiVersion: v1, kind: ConfigMap, metadata: {name: web-keep}}", "web", "WORKLOAD"),
	}
	for _, u := range live {
		if err := testClient.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	setSpec(t, ns, "web", v1Spec, nil)
	kubevelaTracker(t, app, "web-v1-"+ns, v1beta1.ResourceTrackerTypeVersioned, 1,
		kubevelaEntry(t, live["Deployment/web"], "web", ""), kubevelaEntry(t, live["ConfigMap/web-config"], "web", ""),
		kubevelaEntry(t, live["Service/web"], "web", "test-service"), kubevelaEntry(t, live["ConfigMap/web-extra"], "extra", ""))
	outdated := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Name: "web-v1-" + ns}}
	if err := testClient.Delete(ctx, outdated); err != nil {
		t.Fatal(err)
	}
	// KubeVela names the hub "local" in the entries of objects a topology
	// policy placed there.
	service := kubevelaEntry(t, live["Service/web"], "web", "test-service")
	service.Cluster = v1beta1.ClusterLocal
	kubevelaTracker(t, app, "web-v2-"+ns, v1beta1.ResourceTrackerTypeVersioned, 2,
		kubevelaEntry(t, live["Deployment/web"], "web", ""), kubevelaEntry(t, live["ConfigMap/web-config"], "web", ""), service)
	kubevelaTracker(t, app, "web-"+ns, v1beta1.ResourceTrackerTypeRoot, 0, kubevelaEntry(t, live["ConfigMap/web-keep"], "web", ""))
	kubevelaTracker(t, app, "web-comp-rev-"+ns, v1beta1.ResourceTrackerTypeComponentRevision, 0, v1beta1.ManagedResource{
		ClusterObjectReference: v1beta1.ClusterObjectReference{APIVersion: "apps/v1", Kind: "ControllerRevision", Namespace: ns, Name: "web-v1"},
		OAMObjectReference:     v1beta1.OAMObjectReference{Component: "web"},
	})
	// The workflow's context, owned by the Application (kubevela/workflow).
	yes := true
	wfContext := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workflow-web-context", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "core.oam.dev/v1beta1", Kind: "Application", Name: "web", UID: app.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Data: map[string]string{"vars": "{}"},
	}
	if err := testClient.Create(ctx, wfContext); err != nil {
		t.Fatal(err)
	}
	status := `{
  "observedGeneration": 2,
  "status": "running",
  "conditions": ` + kubevelaConditions + `,
  "latestRevision": {"name": "web-v2", "revision": 2, "revisionHash": "5f7c6d8b9a"},
  "services": [{"name": "web", "namespace": "` + ns + `", "healthy": true,
    "workloadDefinition": {"apiVersion": "apps/v1", "kind": "Deployment"},
    "traits": [{"type": "test-service", "healthy": true}]}],
  "appliedResources": [
    {"creator": "workflow", "apiVersion": "apps/v1", "kind": "Deployment", "namespace": "` + ns + `", "name": "web"},
    {"creator": "workflow", "apiVersion": "v1", "kind": "ConfigMap", "namespace": "` + ns + `", "name": "web-config"},
    {"creator": "workflow", "apiVersion": "v1", "kind": "Service", "namespace": "` + ns + `", "name": "web"}],
  "workflow": {"appRevision": "web-v2:5f7c6d8b9a", "mode": "StepByStep-DAG", "status": "succeeded",
    "suspend": false, "terminated": false, "finished": true,
    "contextBackend": {"apiVersion": "v1", "kind": "ConfigMap", "name": "workflow-web-context", "namespace": "` + ns + `", "uid": "` + string(wfContext.UID) + `"},
    "steps": [{"id": "x1y2z3", "name": "deploy-web", "type": "deploy", "phase": "succeeded",
      "firstExecuteTime": "2026-01-02T03:04:05Z", "lastExecuteTime": "2026-01-02T03:04:06Z"}],
    "startTime": "2026-01-02T03:04:05Z", "endTime": "2026-01-02T03:04:06Z"}
}`
	if err := patchStatusRaw(ns, "web", status); err != nil {
		t.Fatalf("writing KubeVela's status: %v", err)
	}
	return live
}

func uidOf(t *testing.T, u *unstructured.Unstructured) (types.UID, error) {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	err := testClient.Get(context.Background(), client.ObjectKeyFromObject(u), got)
	return got.GetUID(), err
}

// Switching from KubeVela: Steward takes an Application over as KubeVela
// left it. Nothing live is deleted or re-created; what the new version no
// longer renders is collected; KubeVela's trackers (with the finalizer no
// KubeVela will remove), its workflow context and its conditions go; what
// its root tracker kept stays, and goes with the Application; deleting the
// Application completes and leaves no tracker behind.
func TestMigration_SwitchingFromKubeVelaLeavesNothingBehind(t *testing.T) {
	ns := newNamespace(t)
	live := leftByKubeVela(t, ns)
	uids := map[string]types.UID{}
	for name, u := range live {
		uids[name] = u.GetUID()
	}
	startManager(t, testCfg, testOptions())

	kubevelas := []string{"web-v1-" + ns, "web-v2-" + ns, "web-" + ns, "web-comp-rev-" + ns}
	unchanged := func() error {
		for name, u := range live {
			if name == "ConfigMap/web-extra" {
				continue
			}
			if uid, err := uidOf(t, u); err != nil || uid != uids[name] {
				return fmt.Errorf("%s was deleted or re-created: uid %s, was %s (%v)", name, uid, uids[name], err)
			}
		}
		return nil
	}
	eventually(t, 30*time.Second, "KubeVela's leftovers taken over", func() error {
		if err := unchanged(); err != nil {
			return err
		}
		app := getApp(t, ns, "web")
		ready := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != 2 {
			return fmt.Errorf("ready %+v", ready)
		}
		for _, c := range app.Status.Conditions {
			if slices.Contains([]string{"Parsed", "Revision", "Policy", "Render", "Workflow"}, c.Type) {
				return fmt.Errorf("KubeVela's condition %s is still in the status", c.Type)
			}
		}
		for _, rt := range trackersOf(t, ns, "web") {
			if slices.Contains(kubevelas, rt.Name) {
				return fmt.Errorf("KubeVela's tracker %s is still there (finalizers %v, deleting %v)", rt.Name, rt.Finalizers, !rt.DeletionTimestamp.IsZero())
			}
		}
		if _, err := getConfigMap(t, ns, "workflow-web-context"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("KubeVela's workflow context ConfigMap is still there (%v)", err)
		}
		if _, err := getConfigMap(t, ns, "web-extra"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("web-extra, which the new version no longer renders, was not collected (%v)", err)
		}
		return nil
	})
	if err := unchanged(); err != nil {
		t.Error(err)
	}
	root := trackerNamed(t, ns, "web", tracker.Name("web", ns, tracker.Root()))
	if root == nil {
		t.Fatal("no root tracker: what KubeVela's root tracker kept is recorded nowhere")
	}
	entries, err := tracker.Entries(root)
	if err != nil || !slices.ContainsFunc(entries, func(e v1beta1.ManagedResource) bool { return e.Name == "web-keep" }) {
		t.Errorf("Steward's root tracker lists %v (%v), want web-keep, which KubeVela's root tracker kept", entries, err)
	}
	eventually(t, 15*time.Second, "an event naming KubeVela's tracker", func() error {
		for _, e := range appEvents(t, ns, "web") {
			if e.Reason == v1beta1.EventTakenOverFromKubeVela && strings.Contains(e.Note, "resource tracker web-v2-"+ns) {
				return nil
			}
		}
		return errNotYet
	})

	deleteApp(t, ns, "web")
	eventually(t, 10*time.Second, "no tracker left", func() error {
		if rts := trackersOf(t, ns, "web"); len(rts) > 0 {
			return fmt.Errorf("trackers left after the Application was deleted: %s (finalizers %v)", rts[0].Name, rts[0].Finalizers)
		}
		return nil
	})
	for _, name := range []string{"web-keep", "web-config"} {
		if _, err := getConfigMap(t, ns, name); !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s outlived the Application (%v)", name, err)
		}
	}
}

// An Application deleted while no controller ran (KubeVela stopped, Steward
// not started yet) still holds the finalizer KubeVela and Steward share:
// Steward finalizes it, and KubeVela's trackers, whose finalizer no
// KubeVela will remove, go with it.
func TestMigration_AnApplicationDeletedBeforeStewardStartsLeavesNoTracker(t *testing.T) {
	ns := newNamespace(t)
	leftByKubeVela(t, ns)
	if err := testClient.Delete(context.Background(), getApp(t, ns, "web")); err != nil {
		t.Fatal(err)
	}
	startManager(t, testCfg, testOptions())
	eventually(t, 30*time.Second, "the Application and its trackers gone", func() error {
		err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, &v1beta1.Application{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Application is still there (%v)", err)
		}
		if rts := trackersOf(t, ns, "web"); len(rts) > 0 {
			return fmt.Errorf("trackers left after the Application was deleted: %s (finalizers %v)", rts[0].Name, rts[0].Finalizers)
		}
		return nil
	})
	for _, name := range []string{"web-keep", "web-config", "web-extra"} {
		if _, err := getConfigMap(t, ns, name); !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s outlived the Application (%v)", name, err)
		}
	}
}
