package application

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/wake"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

func getDeployment(t testing.TB, ns, name string) (*appsv1.Deployment, error) {
	t.Helper()
	return controllertest.GetDeployment(t, ns, name)
}

// removeDeploymentLabels strips labels from the Deployment ns/name, as a
// user editing it by hand.
func removeDeploymentLabels(t *testing.T, ns, name string, labels ...string) {
	t.Helper()
	dep, err := getDeployment(t, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(dep.DeepCopy())
	for _, l := range labels {
		delete(dep.Labels, l)
	}
	if err := testClient.Patch(context.Background(), dep, patch); err != nil {
		t.Fatal(err)
	}
}

// labelledForWeb checks that the Deployment ns/web carries the ownership
// labels of the Application ns/web.
func labelledForWeb(t *testing.T, ns string) func() error {
	return func() error {
		dep, err := getDeployment(t, ns, "web")
		if err != nil {
			return err
		}
		if dep.Labels[v1beta1.LabelAppName] != "web" || dep.Labels[v1beta1.LabelAppNamespace] != ns {
			return fmt.Errorf("labels = %v", dep.Labels)
		}
		return nil
	}
}

func TestStateKeep_RecreatesDeletedDeployment(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")

	dep, err := getDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	oldUID := dep.UID
	if err := testClient.Delete(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the deleted Deployment to come back", func() error {
		dep, err := getDeployment(t, ns, "web")
		if err != nil {
			return err
		}
		if dep.UID == oldUID {
			return fmt.Errorf("still the old object")
		}
		if *dep.Spec.Replicas != 3 {
			return fmt.Errorf("replicas = %d", *dep.Spec.Replicas)
		}
		return nil
	})
}

func TestStateKeep_RevertsEditedReplicas(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")

	dep, err := getDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(dep.DeepCopy())
	five := int32(5)
	dep.Spec.Replicas = &five
	dep.Spec.Template.Annotations = map[string]string{"edited-by": "hand"}
	if err := testClient.Patch(context.Background(), dep, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "replicas back to 3", func() error {
		dep, err := getDeployment(t, ns, "web")
		if err != nil {
			return err
		}
		if *dep.Spec.Replicas != 3 {
			return fmt.Errorf("replicas = %d", *dep.Spec.Replicas)
		}
		return nil
	})
	// A field Steward never set is left alone: three-way patches only
	// revert what the manifest says.
	dep, _ = getDeployment(t, ns, "web")
	if dep.Spec.Template.Annotations["edited-by"] != "hand" {
		t.Errorf("an annotation Steward does not manage was removed: %v", dep.Spec.Template.Annotations)
	}
}

// An ownership label removed by hand is drift like any other: Steward's
// last-applied configuration on the object names the app, so the next
// pass puts the labels back, in a process that never applied it (timer
// mode keeps nothing in memory between passes).
func TestStateKeep_RestoresOwnershipLabelsRemovedByHand(t *testing.T) {
	ns := newNamespace(t)
	stop := startStoppableManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	stop()

	removeDeploymentLabels(t, ns, "web", v1beta1.LabelAppName, v1beta1.LabelAppNamespace)
	startManager(t, testCfg, testOptions())
	eventually(t, 15*time.Second, "the ownership labels back", labelledForWeb(t, ns))
	waitReady(t, ns, "web")
}

func TestReconcileInterval_AnnotationOverridesGlobalPeriod(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.ReSyncPeriod = time.Hour
	startManager(t, testCfg, opts)
	createApp(t, ns, `
apiVersion: core.oam.dev/v1beta1
kind: Application
metadata:
  name: fast
  annotations: {app.oam.dev/reconcile-interval: 2s}
spec:
  components:
    - {name: fast, type: test-worker, properties: {image: nginx}}
`)
	createApp(t, ns, `
apiVersion: core.oam.dev/v1beta1
kind: Application
metadata:
  name: invalid
  annotations: {app.oam.dev/reconcile-interval: soon}
spec:
  components:
    - {name: invalid, type: test-worker, properties: {image: nginx}}
`)
	waitReady(t, ns, "fast")
	waitReady(t, ns, "invalid")

	for _, name := range []string{"fast", "invalid"} {
		dep, err := getDeployment(t, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := testClient.Delete(context.Background(), dep); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "the 2s app's Deployment to come back", func() error {
		_, err := getDeployment(t, ns, "fast")
		return err
	})
	// The invalid annotation falls back to the global hour: nothing comes
	// back in the next seconds, and a warning event says why.
	time.Sleep(3 * time.Second)
	if _, err := getDeployment(t, ns, "invalid"); !apierrors.IsNotFound(err) {
		t.Errorf("the app with an invalid interval was re-synced early: %v", err)
	}
	waitEvent(t, ns, "invalid", v1beta1.EventInvalidReconcileInterval)
}

func TestReconcileInterval_ParsesAndFallsBack(t *testing.T) {
	o := testOptions()
	o.ReSyncPeriod = 5 * time.Minute
	o.MinReconcileInterval = 10 * time.Second
	for _, tc := range []struct {
		value   string
		want    time.Duration
		warning bool
	}{
		{"", 5 * time.Minute, false},
		{"30s", 30 * time.Second, false},
		{"1h", time.Hour, false},
		{"9s", 5 * time.Minute, true},
		{"-1m", 5 * time.Minute, true},
		{"often", 5 * time.Minute, true},
	} {
		app := &v1beta1.Application{}
		if tc.value != "" {
			app.Annotations = map[string]string{v1beta1.AnnotationReconcileInterval: tc.value}
		}
		got, warning := wake.Interval(app, o.Options.ReSyncPeriod, o.Options.MinReconcileInterval)
		if got != tc.want || (warning != "") != tc.warning {
			t.Errorf("%q: got %s, warning %q; want %s, warning %v", tc.value, got, warning, tc.want, tc.warning)
		}
	}
}

func TestJitter_StaysWithinFraction(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 200 {
		d := wake.Jitter(100*time.Second, 0.1)
		if d < 90*time.Second || d > 110*time.Second {
			t.Fatalf("jitter(100s, 10%%) = %s", d)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Errorf("jitter does not spread: %d distinct values", len(seen))
	}
}
