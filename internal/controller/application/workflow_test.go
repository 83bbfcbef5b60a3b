package application

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/steward-oam/steward/api/v1beta1"
)

// A step type Steward cannot carry out (no WorkflowStepDefinition of
// that name) must refuse the Application as a whole, never be skipped:
// before the fix every deploy step ran at once and production got its
// objects past a gate.
func TestWorkflow_AnUnsupportedStepIsRefusedNotSkipped(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	gated := func(data string) string {
		return `
components:
  - {name: cfg, type: test-config, properties: {name: cfg, data: {v: ` + data + `}}}
workflow:
  steps:
    - {name: staging, type: deploy}
    - {name: notify, type: notification}
    - {name: production, type: deploy}
`
	}
	createApp(t, ns, "metadata: {name: gate}\nspec:"+indent(gated("one")))
	var msg string
	eventually(t, 20*time.Second, "Rendered=False, DefinitionNotFound", func() error {
		c, err := condition(t, ns, "gate", v1beta1.ConditionRendered)
		if err != nil {
			return err
		}
		if c.Status != "False" || c.Reason != v1beta1.ReasonDefinitionNotFound {
			return fmt.Errorf("condition %+v", c)
		}
		msg = c.Message
		return nil
	})
	if !strings.Contains(msg, `"notify"`) || !strings.Contains(msg, `"notification"`) {
		t.Errorf("condition message %q does not name the step and its type", msg)
	}
	waitEvent(t, ns, "gate", v1beta1.ReasonDefinitionNotFound)
	time.Sleep(2 * time.Second)
	if _, err := getConfigMap(t, ns, "cfg"); !apierrors.IsNotFound(err) {
		t.Fatalf("the gated ConfigMap was applied: %v", err)
	}

	// Without the gate the app is delivered; adding a gate to the next
	// version refuses that version and keeps the one delivered.
	setSpec(t, ns, "gate", `
components:
  - {name: cfg, type: test-config, properties: {name: cfg, data: {v: one}}}
`, nil)
	waitReady(t, ns, "gate")
	setSpec(t, ns, "gate", gated("two"), nil)
	eventually(t, 20*time.Second, "the gated version refused", func() error {
		c, err := condition(t, ns, "gate", v1beta1.ConditionRendered)
		if err != nil || c.Reason != v1beta1.ReasonDefinitionNotFound {
			return errNotYet
		}
		return nil
	})
	cm, err := getConfigMap(t, ns, "cfg")
	if err != nil || cm.Data["v"] != "one" {
		t.Fatalf("the delivered version: %v %v, want it kept with v=one", cm.Data, err)
	}
}

// An apply-application step, as older KubeVela workflows write it,
// applies every component, as a deploy step does: before the fix the
// Application was refused as an unsupported step type. Here it runs
// before a suspend step, which then holds the workflow.
func TestWorkflow_ApplyApplicationStepAppliesEveryComponent(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: legacy}\nspec:"+indent(`
components:
  - {name: one, type: test-config, properties: {name: one, data: {v: one}}}
  - {name: two, type: test-config, properties: {name: two, data: {v: two}}}
workflow:
  steps:
    - {name: apply, type: apply-application}
    - {name: hold, type: suspend}
`))
	eventually(t, 30*time.Second, "both ConfigMaps applied", func() error {
		for _, name := range []string{"one", "two"} {
			if _, err := getConfigMap(t, ns, name); err != nil {
				return err
			}
		}
		return nil
	})
	eventually(t, 30*time.Second, "the workflow held at the suspend step", func() error {
		app := getApp(t, ns, "legacy")
		if app.Status.Workflow == nil || !app.Status.Workflow.Suspend {
			return errNotYet
		}
		return nil
	})
	if c, err := condition(t, ns, "legacy", v1beta1.ConditionRendered); err != nil || c.Status != "True" {
		t.Fatalf("Rendered: %+v %v", c, err)
	}
}

// A workflow whose first step finishes in the pass that starts the run
// goes on to its next step at once, not at the re-sync (an hour here):
// the run's own start wakes no pass. Found by the dashboard's browser
// test, where the suspend step was reached only at the re-sync.
func TestWorkflow_StartedRunMovesOnWithoutWaitingForTheReSync(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.ReSyncPeriod = time.Hour
	startManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: staged}\nspec:"+indent(`
components:
  - {name: one, type: test-config, properties: {name: one, data: {v: one}}}
workflow:
  steps:
    - {name: apply, type: apply-component, properties: {component: one}}
    - {name: hold, type: suspend}
`))
	eventually(t, 15*time.Second, "the workflow held at the suspend step", func() error {
		app := getApp(t, ns, "staged")
		if app.Status.Workflow == nil || !app.Status.Workflow.Suspend {
			return errNotYet
		}
		return nil
	})
}
