package application

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

const legacyWebDefinition = `
metadata: {name: legacy-web}
spec:
  workload: {definition: {apiVersion: apps/v1, kind: Deployment}}
  status:
    healthPolicy: |
      _ready: *context.output.status.readyReplicas | 0
      isHealth: _ready == context.output.spec.replicas
    customStatus: |
      _ready: *context.output.status.readyReplicas | 0
      message: "ready \(_ready)/\(context.output.spec.replicas)"
  extension:
    healthPolicy: |
      isHealth: false
    template: |
      output: {
        apiVersion: "apps/v1"
        kind:       "Deployment"
        spec: {
          selector: matchLabels: app: context.name
          template: {
            metadata: labels: app: context.name
            spec: containers: [{name: context.name, image: parameter.image}]
          }
        }
      }
      outputs: service: {
        apiVersion: "v1"
        kind:       "Service"
        metadata: name: context.name
        spec: {
          selector: app: context.name
          ports: [{port: parameter.port}]
        }
      }
      parameter: {
        image: string
        port:  *80 | int
      }
`

const legacyScalerDefinition = `
metadata: {name: patch-scaler}
spec:
  extension:
    template: |-
      patch: {
         spec: replicas: parameter.replicas
      }
      parameter: {
      	replicas: *1 | int
      }
`

// TestKubeVelaCompat_LegacyExtensionTemplatesRenderAndReportHealth: a
// component and a trait written before KubeVela v1.0, with their templates
// in spec.extension.template, render and deliver their objects, and the
// component's spec.status judges them; the healthPolicy left in
// spec.extension is ignored, as KubeVela ignores it, and the definition
// says so.
func TestKubeVelaCompat_LegacyExtensionTemplatesRenderAndReportHealth(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	comp := &v1beta1.ComponentDefinition{}
	createFromYAML(t, ns, legacyWebDefinition, comp)
	trait := &v1beta1.TraitDefinition{}
	createFromYAML(t, ns, legacyScalerDefinition, trait)

	msg := waitDefinitionReady(t, ns, comp)
	if !strings.Contains(msg, "spec.extension.template") || !strings.Contains(msg, "spec.extension.healthPolicy ignored") {
		t.Errorf("component definition says %q: want where its template is read and that its extension.healthPolicy is ignored", msg)
	}
	waitDefinitionReady(t, ns, trait)

	createApp(t, ns, `
metadata: {name: legacy}
spec:
  components:
    - name: web
      type: legacy-web
      properties: {image: nginx, port: 8080}
      traits: [{type: patch-scaler, properties: {replicas: 2}}]
`)
	msg = waitNotReady(t, ns, "legacy", v1beta1.ReasonUnhealthy)
	if !strings.Contains(msg, "ready 0/2") {
		t.Errorf("message %q does not carry spec.status.customStatus", msg)
	}
	dep, err := getDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 || dep.Spec.Template.Spec.Containers[0].Image != "nginx" {
		t.Errorf("deployment spec %+v: want the extension template patched by the extension trait", dep.Spec)
	}
	svc := &corev1.Service{}
	if err := testClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, svc); err != nil || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("service: %v %+v", err, svc.Spec.Ports)
	}

	setReadyReplicas(t, ns, "web", 2)
	app := waitReady(t, ns, "legacy")
	if s := app.Status.Services; len(s) != 1 || !s[0].Healthy || s[0].Message != "ready 2/2" {
		t.Errorf("services %+v: want healthy by spec.status, whatever spec.extension.healthPolicy says", s)
	}
}
