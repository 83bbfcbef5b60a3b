package application

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
)

// waitWorkflowFinished waits until app's run has finished and returns
// its step phases by name.
func waitWorkflowFinished(t *testing.T, ns, app string) (*v1beta1.Application, map[string]string) {
	t.Helper()
	var got *v1beta1.Application
	phases := map[string]string{}
	controllertest.Eventually(t, 40*time.Second, "the workflow of "+app+" finished", func() error {
		got = controllertest.GetApp(t, ns, app)
		wf := got.Status.Workflow
		if wf == nil || !wf.Finished {
			return fmt.Errorf("status %s, workflow %+v, conditions %+v", got.Status.Phase, wf, got.Status.Conditions)
		}
		for _, s := range wf.Steps {
			phases[s.Name] = s.Phase
		}
		return nil
	})
	return got, phases
}

// configSecret reads config name of ns, nil when there is none.
func configSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	sec := &corev1.Secret{}
	err := controllertest.Client(t).Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// A workflow of KubeVela's config steps alone (components: []) runs, as
// in KubeVela: the configs are written, read and deleted as KubeVela
// stores them, and the run succeeds.
func TestWorkflow_ConfigStepsAloneRun(t *testing.T) {
	ns := newNamespace(t)
	controllertest.InstallPublishedSteps(t, ns, "create-config", "read-config", "delete-config")
	startManager(t, testCfg, testOptions())
	controllertest.CreateApp(t, ns, `
metadata: {name: configs}
spec:
  components: []
  workflow:
    steps:
      - {name: write, type: create-config, properties: {name: db, config: {host: db.internal}}}
      - {name: scratch, type: create-config, properties: {name: scratch, config: {}}}
      - {name: read, type: read-config, properties: {name: db}, outputs: [{name: db, valueFrom: output.$returns.config}]}
      - {name: drop, type: delete-config, properties: {name: scratch}}
`)
	app, phases := waitWorkflowFinished(t, ns, "configs")
	if app.Status.Workflow.Phase != v1beta1.WorkflowPhaseSucceeded || app.Status.Phase != v1beta1.ApplicationRunning {
		t.Fatalf("run %s, application %s; want succeeded and running (steps %v)", app.Status.Workflow.Phase, app.Status.Phase, phases)
	}
	for _, s := range []string{"write", "scratch", "read", "drop"} {
		if phases[s] != v1beta1.WorkflowStepSucceeded {
			t.Fatalf("step %s %s, want succeeded (steps %v)", s, phases[s], phases)
		}
	}
	db := configSecret(t, ns, "db")
	if db == nil || db.Labels["config.oam.dev/catalog"] != "velacore-config" || string(db.Data["input-properties"]) != `{"host":"db.internal"}` {
		t.Fatalf("config db as KubeVela stores one: %+v", db)
	}
	if configSecret(t, ns, "scratch") != nil {
		t.Fatal("delete-config left its config")
	}
}

// An if reading the values its step takes (inputs.db, inputs["db"]) is
// evaluated, as in KubeVela: the step whose condition holds runs, the
// other is skipped. Components no step names are not delivered.
func TestWorkflow_IfReadsTheInputsOfItsStep(t *testing.T) {
	ns := newNamespace(t)
	controllertest.InstallPublishedSteps(t, ns, "create-config", "read-config")
	if err := controllertest.Client(t).Create(context.Background(), controllertest.VersionedDefinition(ns, "versioned", "one", "")); err != nil {
		t.Fatal(err)
	}
	startManager(t, testCfg, testOptions())
	controllertest.CreateApp(t, ns, `
metadata: {name: conditional}
spec:
  components:
    - {name: c, type: versioned, properties: {name: never}}
  workflow:
    steps:
      - {name: write, type: create-config, properties: {name: db, config: {host: db.internal}}}
      - {name: read, type: read-config, properties: {name: db}, outputs: [{name: db, valueFrom: output.$returns.config}]}
      - {name: copy, type: create-config, if: 'inputs.db.host == "db.internal"', inputs: [{from: db, parameterKey: config.copy}], properties: {name: copy, config: {}}}
      - {name: other, type: create-config, if: 'inputs["db"].host == "elsewhere"', inputs: [{from: db}], properties: {name: other, config: {}}}
`)
	app, phases := waitWorkflowFinished(t, ns, "conditional")
	if app.Status.Workflow.Phase != v1beta1.WorkflowPhaseSucceeded || phases["copy"] != v1beta1.WorkflowStepSucceeded || phases["other"] != v1beta1.WorkflowStepSkipped {
		t.Fatalf("run %s, steps %v; want succeeded with copy succeeded and other skipped", app.Status.Workflow.Phase, phases)
	}
	if c := configSecret(t, ns, "copy"); c == nil || string(c.Data["input-properties"]) != `{"copy":{"host":"db.internal"}}` {
		t.Fatalf("config copy: %+v", c)
	}
	if configSecret(t, ns, "other") != nil {
		t.Fatal("the step whose condition is false ran")
	}
	if controllertest.ConfigMapExists(t, ns, "never") {
		t.Fatal("a component no step names was delivered")
	}
}
