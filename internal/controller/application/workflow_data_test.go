package application

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/tracker"
)

// dataApp passes values between steps: the ClusterIP the API server gives
// the db Service (in no manifest) and the ready count the api
// Deployment's status reports flow into a raw ConfigMap and into a
// component's properties.
const dataApp = `metadata: {name: data}
spec:
  components:
    - {name: api, type: test-healthy, properties: {image: nginx}, traits: [{type: test-service}]}
    - {name: client, type: test-config, properties: {name: client, data: {mode: fast}}}
  workflow:
    steps:
      - name: db
        type: apply-object
        properties:
          value: {apiVersion: v1, kind: Service, metadata: {name: db}, spec: {ports: [{port: 5432}]}}
        outputs:
          - {name: db-ip, valueFrom: output.spec.clusterIP}
      - name: apply-api
        type: apply-component
        properties: {component: api}
        outputs:
          - {name: api-ready, valueFrom: '"\(output.status.readyReplicas) ready"'}
          - {name: api-svc, valueFrom: 'outputs.service.metadata.name + ":" + "\(outputs.service.spec.ports[0].port)"'}
      - name: settings
        type: apply-object
        inputs:
          - {from: db-ip, parameterKey: value.data.host}
        properties:
          value: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {port: "5432"}}
      - name: apply-client
        type: apply-component
        inputs:
          - {from: db-ip, parameterKey: properties.data.host}
          - {from: api-ready, parameterKey: properties.data.api}
          - {from: api-svc, parameterKey: 'properties.data["api.svc"]'}
        properties: {component: client}
`

// Outputs of one step feed the properties of the steps after it, as in
// KubeVela: a value read from a live object (a ClusterIP the API server
// assigned, a Deployment's status) once its step succeeded. The steps
// taking them are rendered with the values and recorded before they are
// applied; nothing of them exists while a value is missing.
func TestWorkflow_OutputsFeedLaterSteps(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, testCfg, testOptions())
	createApp(t, ns, dataApp)

	eventually(t, 30*time.Second, "db exported its address, api waiting for health", func() error {
		w := getApp(t, ns, "data").Status.Workflow
		if w == nil || len(w.Steps) != 4 || w.Steps[0].Phase != v1beta1.WorkflowStepSucceeded || w.Steps[1].Phase != v1beta1.WorkflowStepRunning {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	for _, name := range []string{"settings", "client"} {
		if configMapExists(t, ns, name) {
			t.Fatalf("%s was applied before the step exporting its value succeeded", name)
		}
	}
	svc := &corev1.Service{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, svc); err != nil {
		t.Fatal(err)
	}
	ip := svc.Spec.ClusterIP
	if ip == "" {
		t.Fatal("the API server gave the Service no ClusterIP")
	}

	setReady(t, ns, "api")
	app := waitReady(t, ns, "data")
	if w := app.Status.Workflow; !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded {
		t.Fatalf("workflow %+v", w)
	}
	settings, err := getConfigMap(t, ns, "settings")
	if err != nil || settings.Data["host"] != ip || settings.Data["port"] != "5432" {
		t.Fatalf("settings: %+v, %v; want host %s", settings, err, ip)
	}
	clientCM, err := getConfigMap(t, ns, "client")
	if err != nil || clientCM.Data["host"] != ip || clientCM.Data["api"] != "2 ready" || clientCM.Data["api.svc"] != "api:80" || clientCM.Data["mode"] != "fast" {
		t.Fatalf("client: %+v, %v; want host %s, api 2 ready and api.svc api:80", clientCM, err, ip)
	}

	// What was applied is what the version records, values included.
	var versioned *v1beta1.ResourceTracker
	for _, rt := range trackersOf(t, ns, "data") {
		if rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned {
			versioned = &rt
		}
	}
	if versioned == nil {
		t.Fatal("no versioned tracker")
	}
	entries, err := tracker.Entries(versioned)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	for _, e := range entries {
		if e.Kind == "ConfigMap" {
			var obj struct {
				Data map[string]string `json:"data"`
			}
			if err := json.Unmarshal(e.Data.Raw, &obj); err != nil {
				t.Fatal(err)
			}
			recorded[e.Name+"/"+e.Step] = obj.Data["host"]
		}
	}
	if recorded["settings/settings"] != ip || recorded["client/apply-client"] != ip {
		t.Fatalf("recorded hosts %v, want %s", recorded, ip)
	}
	if !strings.Contains(versioned.Annotations[tracker.AnnotationWorkflowOutputs], ip) {
		t.Errorf("the exported values are not recorded with the version: %v", versioned.Annotations)
	}

	// StateKeep keeps the values: drift is repaired to them.
	settings.Data["host"] = "10.9.9.9"
	if err := testClient.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}
	waitConfigMapData(t, ns, "settings", "host", ip, "settings repaired with the exported address")

	// A restarted run starts without the values: the steps taking them
	// wait again for the steps exporting them, and run with what they
	// export this time.
	if _, err := cli.WorkflowOp(ctx, testClient, ns, "data", cli.WorkflowRestart); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the restarted run finished", func() error {
		app := getApp(t, ns, "data")
		w := app.Status.Workflow
		if w == nil || !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded || app.Status.Phase != v1beta1.ApplicationRunning {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})

	deleteApp(t, ns, "data")
	for _, name := range []string{"settings", "client"} {
		if configMapExists(t, ns, name) {
			t.Errorf("%s survived the Application's deletion", name)
		}
	}
}

// A step taking a value no step exports, or values on a step that does
// not pass them, is refused before anything is applied.
func TestWorkflow_BadInputsAreRefused(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `metadata: {name: bad}
spec:
  components:
    - {name: client, type: test-config, properties: {name: client}}
  workflow:
    steps:
      - name: apply-client
        type: apply-component
        inputs:
          - {from: nobody, parameterKey: properties.data.host}
        properties: {component: client}
`)
	eventually(t, 30*time.Second, "the workflow refused", func() error {
		c, err := condition(t, ns, "bad", v1beta1.ConditionRendered)
		if err != nil {
			return err
		}
		if c.Reason != v1beta1.ReasonUnsupportedWorkflow || !strings.Contains(c.Message, `input from "nobody"`) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	if configMapExists(t, ns, "client") {
		t.Fatal("a refused workflow applied its component")
	}
}
