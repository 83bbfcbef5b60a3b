package application

import (
	"reflect"
	"strings"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

// TestKubeVelaCompat_HealthReadsContextStatus: as in KubeVela, a
// definition's status.details is evaluated first and its fields are
// context.status.details for healthPolicy and customStatus, and
// healthPolicy's result is context.status.healthy for customStatus.
func TestKubeVelaCompat_HealthReadsContextStatus(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	def := &v1beta1.ComponentDefinition{}
	createFromYAML(t, ns, `
metadata: {name: status-web}
spec:
  workload: {definition: {apiVersion: apps/v1, kind: Deployment}}
  status:
    details: |
      replicas: context.output.spec.replicas
      ready:    *context.output.status.readyReplicas | 0
      $image:   context.output.spec.template.spec.containers[0].image
    healthPolicy: |
      isHealth: context.status.details.ready == context.status.details.replicas
    customStatus: |
      message: "\(context.status.details.ready)/\(context.status.details.replicas) of \(context.status.details.$image), healthy: \(context.status.healthy)"
  schematic:
    cue:
      template: |
        output: {
          apiVersion: "apps/v1"
          kind:       "Deployment"
          spec: {
            replicas: 2
            selector: matchLabels: app: context.name
            template: {
              metadata: labels: app: context.name
              spec: containers: [{name: context.name, image: parameter.image}]
            }
          }
        }
        parameter: image: string
`, def)
	waitDefinitionReady(t, ns, def)
	createApp(t, ns, `
metadata: {name: status}
spec:
  components: [{name: web, type: status-web, properties: {image: nginx}}]
`)
	msg := waitNotReady(t, ns, "status", v1beta1.ReasonUnhealthy)
	if !strings.Contains(msg, "0/2 of nginx, healthy: false") {
		t.Errorf("message %q: want the customStatus built from context.status", msg)
	}

	setReadyReplicas(t, ns, "web", 2)
	app := waitReady(t, ns, "status")
	s := app.Status.Services
	if len(s) != 1 || !s[0].Healthy || s[0].Message != "2/2 of nginx, healthy: true" ||
		!reflect.DeepEqual(s[0].Details, map[string]string{"replicas": "2", "ready": "2"}) {
		t.Errorf("services %+v", s)
	}
}
