package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
