package application

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// stepPhases is status.workflow's steps as "name=phase", in order.
func stepPhases(w *v1beta1.WorkflowStatus) string {
	if w == nil {
		return "<no status.workflow>"
	}
	var out []string
	for _, s := range w.Steps {
		out = append(out, s.Name+"="+s.Phase)
	}
	return strings.Join(out, " ")
}

// An Application without a workflow reports the steps KubeVela generates
// for it, one apply-component step per component, with their phases:
// tools that wait for step phases (vela status, CI scripts) work.
func TestRunStatus_GeneratedWorkflowReportsAStepPerComponent(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `
metadata: {name: web}
spec:
  components:
    - {name: db, type: test-healthy, properties: {image: postgres}}
    - {name: api, type: test-config, dependsOn: [db], properties: {name: api, data: {k: v}}}
`)
	eventually(t, 30*time.Second, "db running, api pending on it", func() error {
		w := getApp(t, ns, "web").Status.Workflow
		if got := stepPhases(w); got != "db=running api=pending" {
			return fmt.Errorf("steps %s", got)
		}
		if w.Mode != "DAG-DAG" || w.Phase != v1beta1.WorkflowPhaseExecuting || w.Finished || w.AppRevision != "web-v1" {
			return fmt.Errorf("run %+v", w)
		}
		if w.Steps[0].Type != v1beta1.WorkflowStepTypeApplyComponent || !strings.Contains(w.Steps[0].Message, "ready 0/2") {
			return fmt.Errorf("db step %+v", w.Steps[0])
		}
		return nil
	})
	setReady(t, ns, "db")
	waitReady(t, ns, "web")
	eventually(t, 30*time.Second, "every step succeeded", func() error {
		app := getApp(t, ns, "web")
		w := app.Status.Workflow
		if got := stepPhases(w); got != "db=succeeded api=succeeded" {
			return fmt.Errorf("steps %s", got)
		}
		if w.Phase != v1beta1.WorkflowPhaseSucceeded || !w.Finished || w.EndTime.IsZero() || w.Steps[1].FirstExecuteTime.IsZero() {
			return fmt.Errorf("run %+v", w)
		}
		if app.Status.Phase != v1beta1.ApplicationRunning {
			return fmt.Errorf("phase %s", app.Status.Phase)
		}
		return nil
	})
}

// A workflow Steward cannot run (here: a step type with no
// WorkflowStepDefinition) shows the step at fault failed in
// status.workflow, the Application's phase rendering (as for a component
// type with no definition, reason DefinitionNotFound), and nothing of
// the version is applied.
func TestRunStatus_AWorkflowThatCannotRunEndsWorkflowFailed(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `
metadata: {name: web}
spec:
  components:
    - {name: api, type: test-config, properties: {name: api, data: {k: v}}}
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: api}}
      - {name: tell, type: no-such-step, properties: {url: "http://127.0.0.1:1"}}
`)
	eventually(t, 30*time.Second, "the step failed", func() error {
		app := getApp(t, ns, "web")
		if app.Status.Phase != v1beta1.ApplicationRendering {
			return fmt.Errorf("phase %q", app.Status.Phase)
		}
		w := app.Status.Workflow
		if got := stepPhases(w); got != "apply=skipped tell=failed" {
			return fmt.Errorf("steps %s", got)
		}
		if w.Phase != v1beta1.WorkflowPhaseFailed || !strings.Contains(w.Steps[1].Message, `step type "no-such-step"`) || w.Steps[1].Reason != v1beta1.ReasonDefinitionNotFound {
			return fmt.Errorf("run %+v", w)
		}
		return nil
	})
	if configMapExists(t, ns, "api") {
		t.Fatal("a step of a workflow that cannot run was applied")
	}
}
