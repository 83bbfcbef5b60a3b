package policy_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
	"github.com/steward-oam/steward/internal/render"
)

// perKey is a ComponentDefinition telling its copies apart by
// context.replicaKey, as templates written for KubeVela's replication do.
const perKey = `
metadata: {name: per-key}
spec:
  workload: {definition: {apiVersion: v1, kind: ConfigMap}}
  schematic:
    cue:
      template: |
        output: {
          apiVersion: "v1"
          kind:       "ConfigMap"
          metadata: name: "\(context.name)-\(context.replicaKey)"
          data: region: context.replicaKey
        }
`

// KubeVela's replication policy, named by a deploy step, delivers each
// selected component once per key with context.replicaKey set and the
// app.oam.dev/replicaKey label; a key dropped from the policy takes its
// copy away. Before, Steward refused the Application (UnsupportedPolicy).
func TestReplication_EachKeyGetsItsCopy(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateFromYAML(t, ns, perKey, &v1beta1.ComponentDefinition{})
	spec := func(keys string) string {
		return `
components:
  - {name: regional, type: per-key}
  - {name: settings, type: test-config, properties: {name: settings}}
policies:
  - {name: per-region, type: replication, properties: {keys: ` + keys + `, selector: [regional]}}
workflow:
  steps:
    - {name: deploy, type: deploy, properties: {policies: [per-region]}}
`
	}
	controllertest.CreateApp(t, ns, "metadata: {name: rep}\nspec:"+controllertest.Indent(spec("[eu, us]")))
	controllertest.WaitReady(t, ns, "rep")
	for _, key := range []string{"eu", "us"} {
		cm, err := controllertest.GetConfigMap(t, ns, "regional-"+key)
		if err != nil {
			t.Fatalf("copy %s: %v", key, err)
		}
		if cm.Data["region"] != key || cm.Labels[render.LabelReplicaKey] != key || cm.Labels[v1beta1.LabelAppComponent] != "regional" {
			t.Errorf("copy %s: data %v labels %v", key, cm.Data, cm.Labels)
		}
	}
	if !controllertest.ConfigMapExists(t, ns, "settings") {
		t.Error("the component no policy selects was not delivered")
	}
	if controllertest.ConfigMapExists(t, ns, "regional-") {
		t.Error("the selected component was delivered without a key too")
	}

	controllertest.SetSpec(t, ns, "rep", spec("[eu]"), nil)
	controllertest.Eventually(t, 20*time.Second, "the us copy deleted", func() error {
		if controllertest.ConfigMapExists(t, ns, "regional-us") {
			return fmt.Errorf("regional-us still there")
		}
		return nil
	})
	if !controllertest.ConfigMapExists(t, ns, "regional-eu") {
		t.Error("the eu copy went too")
	}
}
