package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
	"github.com/steward-oam/steward/internal/sandbox/sandboxtest"
)

// budgetOptions are the suite's options with a budget small enough for
// the attacks to be stopped within seconds.
func budgetOptions() manager.Options {
	o := managertest.Options()
	o.Budget.Timeout = 3 * time.Second
	o.Budget.Memory = resource.MustParse("256Mi")
	return o
}

// tenantDefinition is a ComponentDefinition of the tenant's own namespace.
func tenantDefinition(t *testing.T, ns, name, template string) {
	t.Helper()
	def := &v1beta1.ComponentDefinition{}
	def.Name, def.Namespace = name, ns
	def.Spec.Schematic = &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: template}}
	if err := controllertest.Client(t).Create(context.Background(), def); err != nil {
		t.Fatal(err)
	}
}

// slug turns an attack's name into an object name.
func slug(name string) string { return strings.ReplaceAll(name, " ", "-") }

// TestBudget_ATenantDefinitionCannotTakeTheControllerDown is issue 27's
// story: a tenant writes, in its own namespace, definitions whose
// evaluation no budget affords. Each fails its own Application with reason
// EvaluationBudgetExceeded, naming the definition, within seconds; the
// controller stays up and small, another Application's drift is repaired
// meanwhile, and a controller restarted with the definitions still there
// does the same.
func TestBudget_ATenantDefinitionCannotTakeTheControllerDown(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	stop := managertest.Start(t, nil, budgetOptions())
	controllertest.CreateApp(t, ns, controllertest.WebApp)
	controllertest.WaitReady(t, ns, "web")

	for _, name := range sandboxtest.Names {
		tenantDefinition(t, ns, slug(name), sandboxtest.Attacks[name])
		controllertest.CreateApp(t, ns, fmt.Sprintf("metadata: {name: %s}\nspec: {components: [{name: c, type: %s}]}\n", slug(name), slug(name)))
	}
	peak := uint64(0)
	check := func(what string) {
		t.Helper()
		for _, name := range sandboxtest.Names {
			start := time.Now()
			msg := controllertest.WaitNotReady(t, ns, slug(name), v1beta1.ReasonEvaluationBudgetExceeded)
			if !strings.Contains(msg, fmt.Sprintf("ComponentDefinition %q in namespace %q", slug(name), ns)) || !strings.Contains(msg, "limit") {
				t.Errorf("%s: %s: the message does not name the definition and the limit: %s", what, name, msg)
			}
			controllertest.WaitEvent(t, ns, slug(name), v1beta1.ReasonEvaluationBudgetExceeded)
			t.Logf("%s: %s: %s (waited %s)", what, name, msg, time.Since(start).Round(time.Millisecond))
			peak = max(peak, controllertest.HeapAfterGC())
		}
		// The neighbour's drift is repaired meanwhile.
		deleteWeb(t, ns)
		controllertest.Eventually(t, 30*time.Second, what+": the neighbour's Deployment re-created", func() error {
			_, err := controllertest.GetDeployment(t, ns, "web")
			return err
		})
		peak = max(peak, controllertest.HeapAfterGC())
	}
	check("running")

	// Restarted with the definitions still there, the controller neither
	// crashes nor stops repairing.
	stop()
	managertest.Start(t, nil, budgetOptions())
	for _, name := range sandboxtest.Names {
		// A new generation, which only the new controller can render.
		app := controllertest.GetApp(t, ns, slug(name))
		app.Spec.Components[0].Properties = &k8sruntime.RawExtension{Raw: []byte(`{}`)}
		if err := controllertest.Client(t).Update(context.Background(), app); err != nil {
			t.Fatal(err)
		}
	}
	check("restarted")
	t.Logf("heap after GC peaked at %.1f MiB", float64(peak)/(1<<20))
	if peak > 1<<30 {
		t.Errorf("the heap after GC reached %.1f MiB, over 1 GiB", float64(peak)/(1<<20))
	}
}

// TestBudget_AVersionThatCannotRenderLeavesTheOneBeforeKept: a spec change
// to a type whose template busts the budget records and applies nothing;
// the version before stays applied and its drift is repaired.
func TestBudget_AVersionThatCannotRenderLeavesTheOneBeforeKept(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, budgetOptions())
	tenantDefinition(t, ns, "doubler", sandboxtest.Doubling(40))
	controllertest.CreateApp(t, ns, controllertest.WebApp)
	controllertest.WaitReady(t, ns, "web")

	app := controllertest.GetApp(t, ns, "web")
	app.Spec.Components = append(app.Spec.Components, v1beta1.ApplicationComponent{Name: "bad", Type: "doubler"})
	if err := controllertest.Client(t).Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	msg := controllertest.WaitNotReady(t, ns, "web", v1beta1.ReasonEvaluationBudgetExceeded)
	if !strings.Contains(msg, "memory limit") || !strings.Contains(msg, "stays applied") {
		t.Errorf("message %q: want the memory limit, and the version before staying applied", msg)
	}
	rendered := v1beta1.FindCondition(controllertest.GetApp(t, ns, "web").Status.Conditions, v1beta1.ConditionRendered)
	if rendered == nil || rendered.Reason != v1beta1.ReasonEvaluationBudgetExceeded {
		t.Fatalf("Rendered = %+v", rendered)
	}
	// Nothing of generation 2 was recorded.
	for _, rt := range controllertest.TrackersOf(t, ns, "web") {
		if rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned && rt.Spec.ApplicationGeneration != 1 {
			t.Fatalf("tracker %s records generation %d", rt.Name, rt.Spec.ApplicationGeneration)
		}
	}
	deleteWeb(t, ns)
	controllertest.Eventually(t, 30*time.Second, "generation 1's Deployment re-created", func() error {
		_, err := controllertest.GetDeployment(t, ns, "web")
		return err
	})
}

// TestBudget_HealthPoliciesAndWorkflowIfsAreBounded: a health policy and a
// workflow step's if are CUE too, and bounded the same way.
func TestBudget_HealthPoliciesAndWorkflowIfsAreBounded(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	managertest.Start(t, nil, budgetOptions())
	health := &v1beta1.ComponentDefinition{}
	health.Name, health.Namespace = "slow-health", ns
	health.Spec.Schematic = &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: `
output: {apiVersion: "v1", kind: "ConfigMap", metadata: name: context.name, data: a: "b"}
parameter: {}`}}
	health.Spec.Status = &v1beta1.Status{HealthPolicy: `import "list"
r: list.Range(0, 100000, 1)
isHealth: len([for a in r for b in r if a == -1 {a}]) == 0`}
	if err := admin.Create(context.Background(), health); err != nil {
		t.Fatal(err)
	}
	controllertest.CreateApp(t, ns, "metadata: {name: health}\nspec: {components: [{name: h, type: slow-health}]}\n")
	msg := controllertest.WaitNotReady(t, ns, "health", v1beta1.ReasonEvaluationBudgetExceeded)
	if !strings.Contains(msg, "time limit") || !strings.Contains(msg, `"slow-health"`) {
		t.Errorf("message %q: want the time limit and the definition", msg)
	}
	// What rendered was applied: only its health could not be judged.
	if _, err := controllertest.GetConfigMap(t, ns, "h"); err != nil {
		t.Fatal(err)
	}

	controllertest.CreateApp(t, ns, `
metadata: {name: cond}
spec:
  components: [{name: web, type: test-worker, properties: {image: nginx}}]
  workflow:
    steps:
      - {name: gate, type: suspend, properties: {duration: 1s}}
      - name: second
        type: deploy
        if: 'len([`+strings.Repeat("for v in [0"+strings.Repeat(",0", 299)+"] ", 4)+`if v == 1 {v}]) == 0'
`)
	msg = controllertest.WaitNotReady(t, ns, "cond", v1beta1.ReasonEvaluationBudgetExceeded)
	if !strings.Contains(msg, "limit") || !strings.Contains(msg, `"second"`) {
		t.Errorf("message %q: want the limit and the step", msg)
	}
	var deploys appsv1.DeploymentList
	if err := admin.List(context.Background(), &deploys, client.InNamespace(ns), client.MatchingLabels{v1beta1.LabelAppName: "cond"}); err != nil {
		t.Fatal(err)
	}
	if len(deploys.Items) != 0 {
		t.Errorf("%d Deployments of a version that could not be checked", len(deploys.Items))
	}
}

// deleteWeb deletes the Deployment "web", as a user by mistake.
func deleteWeb(t *testing.T, ns string) {
	t.Helper()
	dep, err := controllertest.GetDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if err := controllertest.Client(t).Delete(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "the Deployment gone", func() error {
		d, err := controllertest.GetDeployment(t, ns, "web")
		if err == nil && d.UID == dep.UID {
			return controllertest.ErrNotYet
		}
		return nil
	})
}
