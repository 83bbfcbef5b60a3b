package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestDependsOn_HoldsAcrossRootAndVersionTrackers(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	space := ns + "-space"
	t.Cleanup(func() {
		_ = testClient.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: space}})
	})
	// The Namespace is kept forever, so it is recorded in the root
	// tracker; the ConfigMap that lives in it is recorded in the version's
	// tracker. Declared first, it still has to wait for the Namespace.
	createApp(t, ns, fmt.Sprintf(`
metadata: {name: web}
spec:
  components:
    - {name: settings, type: test-config, dependsOn: [space], properties: {name: settings, namespace: %[1]s, data: {k: v}}}
    - {name: space, type: test-namespace, properties: {name: %[1]s}}
  policies:
    - name: keep
      type: garbage-collect
      properties:
        rules:
          - {selector: {resourceTypes: [Namespace]}, strategy: never}
`, space))
	waitReady(t, ns, "web")
	if _, err := getConfigMap(t, space, "settings"); err != nil {
		t.Fatalf("the ConfigMap was not created: %v", err)
	}
	// The first dispatch must have gone through: no pass ever failed.
	for _, e := range appEvents(t, ns, "web") {
		if e.Type == corev1.EventTypeWarning {
			t.Errorf("warning event %s: %s", e.Reason, e.Note)
		}
	}
}

// A component dispatched after a dependency waits for the dependency to be
// healthy, not only applied, as in KubeVela; once delivered, StateKeep
// repairs it whatever the dependency's health.
func TestDependsOn_WaitsForTheDependencyToBeHealthy(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `
metadata: {name: web}
spec:
  components:
    - {name: db, type: test-healthy, properties: {image: postgres}}
    - {name: api, type: test-config, dependsOn: [db], properties: {name: api, data: {k: v}}}
`)
	eventually(t, 30*time.Second, "api waiting for db to become healthy", func() error {
		if _, err := getDeployment(t, ns, "db"); err != nil {
			return err
		}
		c, err := condition(t, ns, "web", v1beta1.ConditionDispatched)
		if err != nil {
			return err
		}
		if c.Reason != v1beta1.ReasonDependencyNotReady || !strings.Contains(c.Message, `"api" waits for "db" to become healthy: ready 0/2`) {
			return fmt.Errorf("dispatched %s: %s", c.Reason, c.Message)
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	if configMapExists(t, ns, "api") {
		t.Fatal("api was applied before db was healthy")
	}
	setReady(t, ns, "db")
	waitReady(t, ns, "web")
	if !configMapExists(t, ns, "api") {
		t.Fatal("api was not applied once db was healthy")
	}

	// db becomes unhealthy, and api drifts: StateKeep repairs api.
	dep, err := getDeployment(t, ns, "db")
	if err != nil {
		t.Fatal(err)
	}
	dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = 0, 0
	if err := testClient.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	if err := testClient.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "api re-created while db is unhealthy", func() error {
		if !configMapExists(t, ns, "api") {
			return errNotYet
		}
		return nil
	})
}
