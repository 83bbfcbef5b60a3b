package policy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// teamQuota is a PolicyDefinition whose template renders output (a
// ResourceQuota) and outputs (a ConfigMap), as custom KubeVela policies do.
const teamQuota = `
metadata: {name: team-quota}
spec:
  schematic:
    cue:
      template: |
        parameter: {cpu: string}
        output: {
          apiVersion: "v1"
          kind:       "ResourceQuota"
          spec: hard: "limits.cpu": parameter.cpu
        }
        outputs: note: {
          apiVersion: "v1"
          kind:       "ConfigMap"
          data: policy: context.name
        }
`

// A policy whose PolicyDefinition renders an output object is delivered
// as KubeVela delivers it: the Application's resource, on the hub, in its
// namespace, named after the policy, recorded in its tracker, changed with
// the policy's properties and deleted once the policy is removed. Before,
// Steward delivered nothing for it.
func TestPolicyOutput_IsDeliveredAndCollected(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	managertest.Start(t, nil, managertest.Options())
	ctx := context.Background()
	controllertest.CreateFromYAML(t, ns, teamQuota, &v1beta1.PolicyDefinition{})
	controllertest.CreateApp(t, ns, `
metadata: {name: shop}
spec:
  components:
    - {name: settings, type: test-config, properties: {name: settings}}
  policies:
    - {name: quota, type: team-quota, properties: {cpu: "2"}}
`)
	controllertest.WaitReady(t, ns, "shop")
	quota := &corev1.ResourceQuota{}
	controllertest.Eventually(t, 20*time.Second, "the policy's ResourceQuota", func() error {
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "quota"}, quota); err != nil {
			return err
		}
		if got := quota.Spec.Hard["limits.cpu"]; got.String() != "2" {
			return fmt.Errorf("limits.cpu %s", got.String())
		}
		return nil
	})
	if quota.Labels[v1beta1.LabelAppName] != "shop" || quota.Labels[v1beta1.LabelAppComponent] != "quota" {
		t.Errorf("labels %v", quota.Labels)
	}
	note, err := controllertest.GetConfigMap(t, ns, "quota-note")
	if err != nil || note.Data["policy"] != "quota" {
		t.Fatalf("outputs.note: %v %v", err, note)
	}
	if !controllertest.AnyEntry(t, ns, "shop", func(e v1beta1.ManagedResource) bool {
		return e.Kind == "ResourceQuota" && e.Name == "quota" && e.Component == "quota"
	}) {
		t.Error("the ResourceQuota is not recorded in the Application's trackers")
	}

	// New properties change it; removing the policy deletes what it rendered.
	controllertest.SetSpec(t, ns, "shop", `
components:
  - {name: settings, type: test-config, properties: {name: settings}}
policies:
  - {name: quota, type: team-quota, properties: {cpu: "4"}}
`, nil)
	controllertest.Eventually(t, 20*time.Second, "limits.cpu 4", func() error {
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "quota"}, quota); err != nil {
			return err
		}
		if got := quota.Spec.Hard["limits.cpu"]; got.String() != "4" {
			return fmt.Errorf("limits.cpu %s", got.String())
		}
		return nil
	})
	controllertest.SetSpec(t, ns, "shop", `
components:
  - {name: settings, type: test-config, properties: {name: settings}}
`, nil)
	controllertest.Eventually(t, 20*time.Second, "the policy's objects deleted", func() error {
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "quota"}, quota); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ResourceQuota: %v", err)
		}
		if controllertest.ConfigMapExists(t, ns, "quota-note") {
			return fmt.Errorf("ConfigMap quota-note still there")
		}
		return nil
	})
	if !controllertest.ConfigMapExists(t, ns, "settings") {
		t.Error("the component's ConfigMap went with the policy's objects")
	}
}
