package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// gatedSpec deploys one ConfigMap to a staging namespace, waits for
// approval, then deploys it to a production namespace.
func gatedSpec(ns, name string) string {
	return fmt.Sprintf(`
components:
  - {name: cfg, type: test-config, properties: {name: %s, data: {v: "1"}}}
policies:
  - {name: staging, type: topology, properties: {clusters: [local], namespace: %s-staging}}
  - {name: production, type: topology, properties: {clusters: [local], namespace: %s-prod}}
workflow:
  steps:
    - {name: deploy-staging, type: deploy, properties: {policies: [staging]}}
    - {name: approve, type: suspend, properties: {message: "check staging first"}}
    - {name: deploy-prod, type: deploy, properties: {policies: [production]}}
`, name, ns, ns)
}

// envNamespaces creates the namespaces <ns>-<env> the topology policies
// of a test place into, and returns their names in order.
func envNamespaces(t *testing.T, ns string, envs ...string) []string {
	t.Helper()
	names := make([]string, len(envs))
	for i, env := range envs {
		names[i] = ns + "-" + env
		if err := testClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i]}}); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

// waitConfigMapData waits until ConfigMap ns/name holds want at key.
func waitConfigMapData(t *testing.T, ns, name, key, want, what string) {
	t.Helper()
	eventually(t, 20*time.Second, what, func() error {
		cm, err := getConfigMap(t, ns, name)
		if err != nil {
			return err
		}
		if cm.Data[key] != want {
			return fmt.Errorf("%s/%s data %v, want %s=%q", ns, name, cm.Data, key, want)
		}
		return nil
	})
}

func configMapExists(t *testing.T, ns, name string) bool {
	t.Helper()
	return controllertest.ConfigMapExists(t, ns, name)
}

// startGate starts the controller and creates the Application "gate" of
// gatedSpec, with its staging and production namespaces.
func startGate(t *testing.T) (ns, staging, prod string) {
	t.Helper()
	ns = newNamespace(t)
	envs := envNamespaces(t, ns, "staging", "prod")
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: gate}\nspec:"+indent(gatedSpec(ns, "cfg")))
	return ns, envs[0], envs[1]
}

// waitSuspended waits until the gate holds the Application: the workflow
// suspended at the approval step, in KubeVela's status shape.
func waitSuspended(t *testing.T, ns string) *v1beta1.Application {
	t.Helper()
	var app *v1beta1.Application
	eventually(t, 30*time.Second, "the workflow suspended at the approval step", func() error {
		app = getApp(t, ns, "gate")
		w := app.Status.Workflow
		if w == nil || !w.Suspend || app.Status.Phase != v1beta1.ApplicationWorkflowSuspending || app.Status.ObservedGeneration != app.Generation {
			return fmt.Errorf("phase %s, workflow %+v", app.Status.Phase, w)
		}
		if len(w.Steps) != 3 || w.Steps[0].Phase != v1beta1.WorkflowStepSucceeded || w.Steps[1].Phase != v1beta1.WorkflowStepSuspending || w.Steps[2].Phase != v1beta1.WorkflowStepPending {
			return fmt.Errorf("steps %+v", w.Steps)
		}
		return nil
	})
	return app
}

// An approval gate: staging gets the version, production nothing until
// the workflow is resumed, however many re-sync passes run meanwhile; a
// new version restarts the workflow, and what production runs stays in
// place, garbage collection included, until the gate is passed again.
func TestWorkflow_ApprovalGate(t *testing.T) {
	ns, staging, prod := startGate(t)
	ctx := context.Background()

	app := waitSuspended(t, ns)
	if !configMapExists(t, staging, "cfg") {
		t.Fatal("staging did not get the version before the gate")
	}
	c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
	if c == nil || c.Status != "False" || c.Reason != v1beta1.ReasonWorkflowSuspended {
		t.Errorf("Ready = %+v, want False with reason %s", c, v1beta1.ReasonWorkflowSuspended)
	}
	if got := app.Status.Workflow.Steps[1].Message; got != "check staging first" {
		t.Errorf("the suspend step's message = %q", got)
	}
	waitEvent(t, ns, "gate", v1beta1.ReasonWorkflowSuspended)
	// Several re-sync passes (2 s each) run: production gets nothing.
	time.Sleep(5 * time.Second)
	if configMapExists(t, prod, "cfg") {
		t.Fatal("production got the version before the workflow was resumed")
	}
	waitSuspended(t, ns)

	// A new generation that fails to render, and whose workflow runs
	// production first: the version kept runs the steps it was recorded
	// with, so production still waits for the approval.
	reordered := strings.NewReplacer(
		"    - {name: deploy-staging, type: deploy, properties: {policies: [staging]}}\n", "    - {name: deploy-prod, type: deploy, properties: {policies: [production]}}\n",
		"    - {name: deploy-prod, type: deploy, properties: {policies: [production]}}\n", "    - {name: deploy-staging, type: deploy, properties: {policies: [staging]}}\n",
		"type: test-config", "type: no-such-definition",
	).Replace(gatedSpec(ns, "cfg"))
	setSpec(t, ns, "gate", reordered, nil)
	eventually(t, 20*time.Second, "the new generation refused", func() error {
		c, err := condition(t, ns, "gate", v1beta1.ConditionRendered)
		if err != nil || c.Status != "False" || c.ObservedGeneration != getApp(t, ns, "gate").Generation {
			return errNotYet
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if configMapExists(t, prod, "cfg") {
		t.Fatal("production got the version before the approval, after a spec change reordered the steps")
	}
	if w := getApp(t, ns, "gate").Status.Workflow; w == nil || !w.Suspend || w.Steps[1].Phase != v1beta1.WorkflowStepSuspending {
		t.Fatalf("the run left the gate: %+v", w)
	}
	setSpec(t, ns, "gate", gatedSpec(ns, "cfg"), nil)
	waitSuspended(t, ns)

	// Resumed as `steward workflow resume gate` does.
	if _, err := cli.WorkflowOp(ctx, testClient, ns, "gate", cli.WorkflowResume); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "production delivered after the resume", func() error {
		if !configMapExists(t, prod, "cfg") {
			return errNotYet
		}
		return nil
	})
	app = waitReady(t, ns, "gate")
	if w := app.Status.Workflow; w == nil || !w.Finished || w.Suspend || w.Phase != v1beta1.WorkflowPhaseSucceeded || app.Status.Phase != v1beta1.ApplicationRunning {
		t.Fatalf("after the resume: phase %s, workflow %+v", app.Status.Phase, app.Status.Workflow)
	}
	firstRun := app.Status.Workflow.AppRevision

	// A new version renames the ConfigMap: the workflow starts over.
	// Staging gets the new one; production keeps the old one, which
	// garbage collection must not delete before the gate is passed.
	setSpec(t, ns, "gate", gatedSpec(ns, "cfg2"), nil)
	app = waitSuspended(t, ns)
	if app.Status.Workflow.AppRevision == firstRun {
		t.Errorf("the new version did not start a new run: %s", firstRun)
	}
	if !configMapExists(t, staging, "cfg2") {
		t.Fatal("staging did not get the new version")
	}
	time.Sleep(5 * time.Second)
	if configMapExists(t, prod, "cfg2") {
		t.Fatal("production got the new version before the resume")
	}
	if !configMapExists(t, prod, "cfg") || !configMapExists(t, staging, "cfg") {
		t.Fatal("garbage collection deleted what the old version runs before the workflow passed the gate")
	}

	// Resumed as `vela workflow resume` does: suspend false, and the
	// suspending step marked running.
	eventually(t, 10*time.Second, "resuming as vela does", func() error {
		app := getApp(t, ns, "gate")
		app.Status.Workflow.Suspend = false
		for i := range app.Status.Workflow.Steps {
			if app.Status.Workflow.Steps[i].Phase == v1beta1.WorkflowStepSuspending {
				app.Status.Workflow.Steps[i].Phase = v1beta1.WorkflowStepRunning
			}
		}
		return testClient.Status().Update(ctx, app)
	})
	eventually(t, 20*time.Second, "the new version in production and the old one collected", func() error {
		if !configMapExists(t, prod, "cfg2") || configMapExists(t, prod, "cfg") || configMapExists(t, staging, "cfg") {
			return errNotYet
		}
		return nil
	})
	waitReady(t, ns, "gate")
}

// stagedApp is an Application of one Deployment (test-healthy, healthy
// once setReady) with topology policies staging and production into the
// namespaces given, and the workflow steps given (YAML list items).
func stagedApp(name, staging, prod, steps string) string {
	return fmt.Sprintf(`metadata: {name: %s}
spec:
  components:
    - {name: api, type: test-healthy, properties: {image: nginx}}
  policies:
    - {name: staging, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: production, type: topology, properties: {clusters: [local], namespace: %s}}
  workflow:
    steps:%s
`, name, staging, prod, steps)
}

// setReady plays the Deployment controller, which envtest does not run:
// the Deployment becomes ready, so its health policy passes.
func setReady(t testing.TB, ns, name string) {
	t.Helper()
	eventually(t, 20*time.Second, "deployment "+ns+"/"+name+" made ready", func() error {
		dep, err := getDeployment(t, ns, name)
		if err != nil {
			return err
		}
		dep.Status.Replicas, dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = 2, 2, 2
		return testClient.Status().Update(context.Background(), dep)
	})
}

// A deploy step succeeds when what it delivered is healthy, not only
// applied, as KubeVela's does: the approval gate is not even reached while
// staging is unhealthy, and the run finishes only once production is.
func TestWorkflow_DeployStepWaitsForHealth(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	envs := envNamespaces(t, ns, "staging", "prod")
	staging, prod := envs[0], envs[1]
	startManager(t, testCfg, testOptions())
	createApp(t, ns, stagedApp("gate", staging, prod, `
      - {name: deploy-staging, type: deploy, properties: {policies: [staging]}}
      - {name: approve, type: suspend}
      - {name: deploy-prod, type: deploy, properties: {policies: [production]}}`))

	running := func(step int) func() error {
		return func() error {
			w := getApp(t, ns, "gate").Status.Workflow
			if w == nil || w.Suspend || w.Finished || w.Steps[step].Phase != v1beta1.WorkflowStepRunning ||
				!strings.Contains(w.Steps[step].Message, "waiting for components to become healthy: api (ready 0/2)") {
				return fmt.Errorf("workflow %+v", w)
			}
			return nil
		}
	}
	eventually(t, 30*time.Second, "staging applied, its step waiting for health", func() error {
		if _, err := getDeployment(t, staging, "api"); err != nil {
			return err
		}
		return running(0)()
	})
	// Re-sync passes run: the gate is not reached while staging is
	// unhealthy.
	time.Sleep(5 * time.Second)
	if err := running(0)(); err != nil {
		t.Fatalf("the step left before staging was healthy: %v", err)
	}

	setReady(t, staging, "api")
	waitSuspended(t, ns)
	if _, err := getDeployment(t, prod, "api"); !apierrors.IsNotFound(err) {
		t.Fatalf("production before the resume: %v", err)
	}
	if _, err := cli.WorkflowOp(ctx, testClient, ns, "gate", cli.WorkflowResume); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "production applied, its step waiting for health", func() error {
		if _, err := getDeployment(t, prod, "api"); err != nil {
			return err
		}
		return running(2)()
	})
	setReady(t, prod, "api")
	app := waitReady(t, ns, "gate")
	if w := app.Status.Workflow; w == nil || !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded {
		t.Fatalf("workflow %+v", w)
	}
}

// A deploy step with auto: false is its own approval gate, as in
// KubeVela: production gets nothing until the workflow is resumed.
func TestWorkflow_AutoFalseWaitsForApproval(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	prod := envNamespaces(t, ns, "prod")[0]
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: gate}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg, data: {v: "1"}}}
  policies:
    - {name: staging, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: production, type: topology, properties: {clusters: [local], namespace: %s}}
  workflow:
    steps:
      - {name: deploy-staging, type: deploy, properties: {policies: [staging]}}
      - {name: deploy-prod, type: deploy, properties: {policies: [production], auto: false}}
`, ns, prod))
	eventually(t, 30*time.Second, "suspended before deploy-prod", func() error {
		app := getApp(t, ns, "gate")
		w := app.Status.Workflow
		if w == nil || !w.Suspend || app.Status.Phase != v1beta1.ApplicationWorkflowSuspending ||
			w.Steps[0].Phase != v1beta1.WorkflowStepSucceeded || w.Steps[1].Phase != v1beta1.WorkflowStepSuspending {
			return fmt.Errorf("phase %s, workflow %+v", app.Status.Phase, w)
		}
		return nil
	})
	if !configMapExists(t, ns, "cfg") {
		t.Fatal("staging did not get the version")
	}
	time.Sleep(4 * time.Second)
	if configMapExists(t, prod, "cfg") {
		t.Fatal("production got the version before the approval")
	}
	if _, err := cli.WorkflowOp(ctx, testClient, ns, "gate", cli.WorkflowResume); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "production delivered after the resume", func() error {
		if !configMapExists(t, prod, "cfg") {
			return errNotYet
		}
		return nil
	})
	if w := waitReady(t, ns, "gate").Status.Workflow; w == nil || !w.Finished {
		t.Fatalf("workflow %+v", w)
	}
}

// A deploy step that is not healthy within its timeout fails; the step
// whose if reads that runs, the step without if is skipped (production
// gets nothing), and the run ends failed, as KubeVela's does. What the
// failed step applied is still kept. A restart runs the workflow again.
func TestWorkflow_TimeoutAndIf(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	envs := envNamespaces(t, ns, "staging", "fallback", "prod")
	staging, fallback, prod := envs[0], envs[1], envs[2]
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: flow}
spec:
  components:
    - {name: api, type: test-healthy, properties: {image: nginx}}
    - {name: note, type: test-config, properties: {name: note, data: {v: "1"}}}
  policies:
    - {name: staging, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: fallback, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: production, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: only-api, type: override, properties: {selector: [api]}}
    - {name: only-note, type: override, properties: {selector: [note]}}
  workflow:
    steps:
      - {name: deploy-staging, type: deploy, timeout: 4s, properties: {policies: [staging, only-api]}}
      - {name: fallback, type: deploy, if: 'status["deploy-staging"].timeout', properties: {policies: [fallback, only-note]}}
      - {name: deploy-prod, type: deploy, properties: {policies: [production]}}
`, staging, fallback, prod))

	var app *v1beta1.Application
	eventually(t, 40*time.Second, "the run failed at the timeout", func() error {
		app = getApp(t, ns, "flow")
		w := app.Status.Workflow
		if w == nil || !w.Finished || !w.Terminated || w.Phase != v1beta1.WorkflowPhaseFailed || app.Status.Phase != v1beta1.ApplicationWorkflowFailed {
			return fmt.Errorf("phase %s, workflow %+v", app.Status.Phase, w)
		}
		return nil
	})
	w := app.Status.Workflow
	if s := w.Steps[0]; s.Phase != v1beta1.WorkflowStepFailed || s.Reason != v1beta1.WorkflowStepReasonTimeout {
		t.Errorf("deploy-staging %+v, want failed with reason Timeout", s)
	}
	if w.Steps[1].Phase != v1beta1.WorkflowStepSucceeded || w.Steps[2].Phase != v1beta1.WorkflowStepSkipped {
		t.Errorf("steps %+v, want fallback succeeded and deploy-prod skipped", w.Steps)
	}
	c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionDispatched)
	if c == nil || c.Reason != v1beta1.ReasonWorkflowFailed || !strings.Contains(c.Message, `step "deploy-staging" failed`) {
		t.Errorf("Dispatched = %+v", c)
	}
	waitEvent(t, ns, "flow", v1beta1.ReasonWorkflowFailed)
	if !configMapExists(t, fallback, "note") {
		t.Error("the step whose if reads the timeout did not run")
	}
	if _, err := getDeployment(t, prod, "api"); !apierrors.IsNotFound(err) || configMapExists(t, prod, "note") {
		t.Errorf("production got objects of a skipped step: %v", err)
	}

	// What the failed step applied is kept: drift is repaired.
	dep, err := getDeployment(t, staging, "api")
	if err != nil {
		t.Fatal(err)
	}
	if err := testClient.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the failed step's deployment re-created", func() error {
		d, err := getDeployment(t, staging, "api")
		if err != nil || d.UID == dep.UID {
			return errNotYet
		}
		return nil
	})

	// Restarted once staging can become healthy: the fallback is
	// skipped this time and production gets the version.
	setReady(t, staging, "api")
	if _, err := cli.WorkflowOp(ctx, testClient, ns, "flow", cli.WorkflowRestart); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "production delivered by the restarted run", func() error {
		if _, err := getDeployment(t, prod, "api"); err != nil {
			return err
		}
		return nil
	})
	setReady(t, prod, "api")
	app = waitReady(t, ns, "flow")
	if w := app.Status.Workflow; !w.Finished || w.Terminated || w.Phase != v1beta1.WorkflowPhaseSucceeded ||
		w.Steps[0].Phase != v1beta1.WorkflowStepSucceeded || w.Steps[1].Phase != v1beta1.WorkflowStepSkipped || w.Steps[2].Phase != v1beta1.WorkflowStepSucceeded {
		t.Fatalf("the restarted run: %+v", w)
	}
}

// apply-component steps deliver one component each, one after another:
// the next runs once the component before it is healthy, as in KubeVela.
func TestWorkflow_ApplyComponentStepsWaitForHealth(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `metadata: {name: seq}
spec:
  components:
    - {name: api, type: test-healthy, properties: {image: nginx}}
    - {name: cfg, type: test-config, properties: {name: cfg, data: {v: "1"}}}
  workflow:
    steps:
      - {name: apply-api, type: apply-component, properties: {component: api}}
      - {name: apply-cfg, type: apply-component, properties: {component: cfg, cluster: local}}
`)
	eventually(t, 30*time.Second, "api applied, its step waiting for health", func() error {
		if _, err := getDeployment(t, ns, "api"); err != nil {
			return err
		}
		w := getApp(t, ns, "seq").Status.Workflow
		if w == nil || len(w.Steps) != 2 || w.Steps[0].Type != "apply-component" || w.Steps[0].Phase != v1beta1.WorkflowStepRunning ||
			!strings.Contains(w.Steps[0].Message, "waiting for components to become healthy: api") {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	time.Sleep(4 * time.Second)
	if configMapExists(t, ns, "cfg") {
		t.Fatal("the second step ran before the first component was healthy")
	}
	setReady(t, ns, "api")
	app := waitReady(t, ns, "seq")
	if !configMapExists(t, ns, "cfg") {
		t.Fatal("the second step did not deliver its component")
	}
	if w := app.Status.Workflow; !w.Finished || w.Steps[1].Phase != v1beta1.WorkflowStepSucceeded {
		t.Fatalf("workflow %+v", w)
	}
}

// An apply-object step delivers its raw object, recorded and kept like a
// component's; the steps after a gate wait as usual, and deleting the
// Application deletes the object too.
func TestWorkflow_ApplyObject(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `metadata: {name: raw}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg, data: {v: "1"}}}
  workflow:
    steps:
      - name: settings
        type: apply-object
        properties:
          value: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {mode: fast}}
      - {name: approve, type: suspend}
      - {name: apply-cfg, type: apply-component, properties: {component: cfg}}
`)
	eventually(t, 30*time.Second, "the raw object applied, the run at the gate", func() error {
		w := getApp(t, ns, "raw").Status.Workflow
		if w == nil || !w.Suspend || w.Steps[0].Phase != v1beta1.WorkflowStepSucceeded || w.Steps[0].Type != "apply-object" {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	cm, err := getConfigMap(t, ns, "settings")
	if err != nil || cm.Data["mode"] != "fast" || cm.Labels[v1beta1.LabelAppName] != "raw" {
		t.Fatalf("the raw object: %+v, %v", cm, err)
	}
	if configMapExists(t, ns, "cfg") {
		t.Fatal("the component after the gate was applied before the resume")
	}
	// Drift of the raw object is repaired.
	cm.Data["mode"] = "slow"
	if err := testClient.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitConfigMapData(t, ns, "settings", "mode", "fast", "the raw object repaired")
	if _, err := cli.WorkflowOp(ctx, testClient, ns, "raw", cli.WorkflowResume); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "raw")
	if !configMapExists(t, ns, "cfg") {
		t.Fatal("the component was not applied after the resume")
	}
	deleteApp(t, ns, "raw")
	if configMapExists(t, ns, "settings") {
		t.Error("the raw object survived the Application's deletion")
	}
}

// An apply-object step may name a registered cluster: the object goes
// there, and nowhere else.
func TestWorkflow_ApplyObjectToASpoke(t *testing.T) {
	ctx := context.Background()
	_, cs := joinedSpoke(t, "wf-spoke")
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `metadata: {name: remote}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg, data: {v: "1"}}}
  workflow:
    steps:
      - {name: local-cfg, type: apply-component, properties: {component: cfg}}
      - name: remote-settings
        type: apply-object
        properties:
          cluster: wf-spoke
          value: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: default}, data: {mode: fast}}
`)
	waitReady(t, ns, "remote")
	remote := &corev1.ConfigMap{}
	if err := cs.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, remote); err != nil || remote.Data["mode"] != "fast" {
		t.Fatalf("the object in the spoke: %+v, %v", remote.Data, err)
	}
	if configMapExists(t, "default", "settings") {
		t.Error("the hub got the spoke's object")
	}
	if !configMapExists(t, ns, "cfg") {
		t.Error("the component step did not deliver to the hub")
	}
	deleteApp(t, ns, "remote")
	eventually(t, 20*time.Second, "the spoke's object deleted with the Application", func() error {
		if err := cs.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return errNotYet
		}
		return nil
	})
}

// While a run waits at its gate, what production runs (the earlier
// version, applied by the earlier run) is still kept: drift is repaired
// back to what was applied, never to the version waiting for approval,
// and an object deleted is not created again before its step is reached.
func TestWorkflow_SuspendedKeepsProduction(t *testing.T) {
	ns, staging, prod := startGate(t)
	ctx := context.Background()
	waitSuspended(t, ns)
	if _, err := cli.WorkflowOp(ctx, testClient, ns, "gate", cli.WorkflowResume); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "gate")

	// Version 2 changes the data; the run waits at the gate again.
	setSpec(t, ns, "gate", strings.Replace(gatedSpec(ns, "cfg"), `v: "1"`, `v: "2"`, 1), nil)
	waitConfigMapData(t, staging, "cfg", "v", "2", "staging on version 2")
	waitSuspended(t, ns)

	cm, err := getConfigMap(t, prod, "cfg")
	if err != nil || cm.Data["v"] != "1" {
		t.Fatalf("production before the approval: %+v, %v", cm, err)
	}
	cm.Data["v"] = "tampered"
	if err := testClient.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitConfigMapData(t, prod, "cfg", "v", "1", "production repaired to the version it runs")
	if err := testClient.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if configMapExists(t, prod, "cfg") {
		t.Fatal("production's object was created again before its step was approved")
	}
	waitSuspended(t, ns)

	if _, err := cli.WorkflowOp(ctx, testClient, ns, "gate", cli.WorkflowResume); err != nil {
		t.Fatal(err)
	}
	waitConfigMapData(t, prod, "cfg", "v", "2", "production on version 2 after the approval")
}
