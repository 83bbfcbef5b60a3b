package application

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// webApp is the suite's Application "web" (controllertest.WebApp).
const webApp = controllertest.WebApp

// waitReady waits until the Application is Ready for its generation.
func waitReady(t testing.TB, ns, name string) *v1beta1.Application {
	t.Helper()
	return controllertest.WaitReady(t, ns, name)
}

func TestDispatch_CreatesObjectsWithRenderedSpecAndOwnershipLabels(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	app := waitReady(t, ns, "web")
	ctx := context.Background()

	dep := &appsv1.Deployment{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep); err != nil {
		t.Fatalf("deployment: %v", err)
	}
	if got := *dep.Spec.Replicas; got != 3 {
		t.Errorf("replicas = %d, want 3 (patched by the test-replicas trait)", got)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != "nginx:1.27" {
		t.Errorf("image = %q", got)
	}
	cm := &corev1.ConfigMap{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, cm); err != nil {
		t.Fatalf("configmap: %v", err)
	}
	if cm.Data["greeting"] != "hi" {
		t.Errorf("configmap data = %v", cm.Data)
	}
	svc := &corev1.Service{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, svc); err != nil {
		t.Fatalf("service: %v", err)
	}
	for _, obj := range []client.Object{dep, cm, svc} {
		l := obj.GetLabels()
		if l[v1beta1.LabelAppName] != "web" || l[v1beta1.LabelAppNamespace] != ns || l[v1beta1.LabelAppComponent] != "web" {
			t.Errorf("%T %s labels = %v, want the OAM ownership labels", obj, obj.GetName(), l)
		}
		if len(obj.GetOwnerReferences()) != 0 {
			t.Errorf("%T %s has owner references; Steward tracks ownership in trackers", obj, obj.GetName())
		}
	}

	rt := &v1beta1.ResourceTracker{}
	name := tracker.Name("web", ns, tracker.Versioned(app.Generation))
	if err := testClient.Get(ctx, client.ObjectKey{Name: name}, rt); err != nil {
		t.Fatalf("versioned tracker %s: %v", name, err)
	}
	entries, err := tracker.Entries(rt)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("tracker entries = %d, want 3 (Deployment, ConfigMap, Service)", len(entries))
	}
	for _, e := range entries {
		if e.Data == nil || len(e.Data.Raw) == 0 {
			t.Errorf("entry %s has no raw manifest", tracker.KeyOf(e))
		}
	}
	if got := len(app.Status.AppliedResources); got != 3 {
		t.Errorf("status.appliedResources = %d, want 3", got)
	}
	if app.Status.Phase != v1beta1.ApplicationRunning {
		t.Errorf("phase = %q, want running", app.Status.Phase)
	}
	if len(app.Status.Services) != 1 || !app.Status.Services[0].Healthy {
		t.Errorf("services = %+v", app.Status.Services)
	}
}

func TestRecord_EntryIsWrittenBeforeApply(t *testing.T) {
	// The API server refuses the ConfigMap's name: the apply fails after
	// recording, and the tracker already lists the object. (A kind that is
	// not served is not recorded at all: see TestKindScope_*.)
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `
apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: gadget}
spec:
  components:
    - {name: gadget, type: test-config, properties: {name: not_a_valid_name}}
`)

	var app *v1beta1.Application
	eventually(t, 30*time.Second, "Dispatched=False with ApplyFailed", func() error {
		app = getApp(t, ns, "gadget")
		c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionDispatched)
		if c == nil || c.Reason != v1beta1.ReasonApplyFailed {
			return fmt.Errorf("dispatched = %+v", c)
		}
		return nil
	})
	ready := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
	if ready.Status != "False" || ready.Reason != v1beta1.ReasonApplyFailed {
		t.Errorf("ready = %+v", ready)
	}
	rt := &v1beta1.ResourceTracker{}
	if err := testClient.Get(context.Background(), client.ObjectKey{Name: tracker.Name("gadget", ns, tracker.Versioned(app.Generation))}, rt); err != nil {
		t.Fatalf("tracker: %v", err)
	}
	entries, _ := tracker.Entries(rt)
	if len(entries) != 1 || entries[0].Kind != "ConfigMap" || entries[0].Name != "not_a_valid_name" || entries[0].Data == nil {
		t.Fatalf("tracker entries = %+v, want the ConfigMap recorded with its manifest", entries)
	}
}
