package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// A step group delivers its sub-steps together: both regions get the
// workload in the same pass, and the step after the group waits until
// every sub-step's component is healthy.
func TestWorkflow_StepGroupRunsSubStepsInParallel(t *testing.T) {
	ns := newNamespace(t)
	envs := envNamespaces(t, ns, "eu", "us", "global")
	eu, us, global := envs[0], envs[1], envs[2]
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: regions}
spec:
  components:
    - {name: api, type: test-healthy, properties: {image: nginx}}
  policies:
    - {name: eu, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: us, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: global, type: topology, properties: {clusters: [local], namespace: %s}}
  workflow:
    steps:
      - name: regions
        type: step-group
        subSteps:
          - {name: deploy-eu, type: deploy, properties: {policies: [eu]}}
          - {name: deploy-us, type: deploy, properties: {policies: [us]}}
      - {name: deploy-global, type: deploy, properties: {policies: [global]}}
`, eu, us, global))

	subs := func(w *v1beta1.WorkflowStatus) string {
		var out []string
		for _, s := range w.Steps[0].SubStepsStatus {
			out = append(out, s.Name+"="+s.Phase)
		}
		return strings.Join(out, ",")
	}
	eventually(t, 30*time.Second, "both regions applied while neither is healthy", func() error {
		for _, region := range []string{eu, us} {
			if _, err := getDeployment(t, region, "api"); err != nil {
				return err
			}
		}
		w := getApp(t, ns, "regions").Status.Workflow
		if w == nil || w.Mode != "StepByStep-DAG" || w.Steps[0].Phase != v1beta1.WorkflowStepRunning ||
			subs(w) != "deploy-eu=running,deploy-us=running" || w.Steps[1].Phase != v1beta1.WorkflowStepPending {
			return fmt.Errorf("workflow %+v", w)
		}
		if msg := w.Steps[0].SubStepsStatus[1].Message; !strings.Contains(msg, "waiting for components to become healthy: api") {
			return fmt.Errorf("deploy-us says %q", msg)
		}
		return nil
	})
	setReady(t, eu, "api")
	eventually(t, 30*time.Second, "eu's sub-step succeeded, us's still waiting", func() error {
		w := getApp(t, ns, "regions").Status.Workflow
		if subs(w) != "deploy-eu=succeeded,deploy-us=running" {
			return fmt.Errorf("sub-steps %s", subs(w))
		}
		return nil
	})
	// Re-sync passes run: global waits for the whole group.
	time.Sleep(3 * time.Second)
	if _, err := getDeployment(t, global, "api"); !apierrors.IsNotFound(err) {
		t.Fatalf("global before the group succeeded: %v", err)
	}
	setReady(t, us, "api")
	eventually(t, 30*time.Second, "global applied once the group succeeded", func() error {
		if _, err := getDeployment(t, global, "api"); err != nil {
			return err
		}
		if w := getApp(t, ns, "regions").Status.Workflow; w.Steps[0].Phase != v1beta1.WorkflowStepSucceeded {
			return fmt.Errorf("group %+v", w.Steps[0])
		}
		return nil
	})
	setReady(t, global, "api")
	app := waitReady(t, ns, "regions")
	if w := app.Status.Workflow; !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded {
		t.Fatalf("workflow %+v", w)
	}
}

// A depends-on-app step waits until the Application it names is running;
// nothing after it is applied before. One of another namespace is read
// with the Application's ServiceAccount: a tenant waits, told why, until
// its ServiceAccount may read it.
func TestWorkflow_DependsOnApp(t *testing.T) {
	ns := newNamespace(t)
	other := newNamespace(t)
	ctx := context.Background()
	tenant(t, ns, "deployer", configMapRule(append(writeVerbs, "delete")...))
	startManager(t, testCfg, testOptions())
	webApp := func(name, sa, dbNamespace string) string {
		return fmt.Sprintf(`metadata: {name: %s, annotations: {%s: "%s"}}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: %s, data: {v: "1"}}}
  workflow:
    steps:
      - {name: wait-db, type: depends-on-app, properties: {name: db, namespace: "%s"}}
      - {name: deploy, type: deploy}
`, name, v1beta1.AnnotationServiceAccountName, sa, name, dbNamespace)
	}
	createApp(t, ns, webApp("web", "", ""))
	createApp(t, ns, webApp("tenant", "deployer", other))
	waitStep := func(name, want string) {
		t.Helper()
		eventually(t, 30*time.Second, name+" waiting: "+want, func() error {
			w := getApp(t, ns, name).Status.Workflow
			if w == nil || w.Steps[0].Phase != v1beta1.WorkflowStepRunning || !strings.Contains(w.Steps[0].Message, want) {
				return fmt.Errorf("workflow %+v", w)
			}
			return nil
		})
	}
	waitStep("web", fmt.Sprintf("waiting for Application %s/db, which does not exist", ns))
	waitStep("tenant", "forbidden")
	time.Sleep(2 * time.Second)
	for _, name := range []string{"web", "tenant"} {
		if configMapExists(t, ns, name) {
			t.Fatalf("%s applied before the Application it depends on ran", name)
		}
	}

	db := `metadata: {name: db}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: db, data: {v: "1"}}}
`
	createApp(t, ns, db)
	createApp(t, other, db)
	waitReady(t, ns, "db")
	waitReady(t, other, "db")
	waitReady(t, ns, "web")
	if !configMapExists(t, ns, "web") {
		t.Fatal("web's ConfigMap missing once db ran")
	}
	// The tenant's ServiceAccount may not read Applications of the other
	// namespace: it still waits.
	waitStep("tenant", "forbidden")
	if configMapExists(t, ns, "tenant") {
		t.Fatal("the tenant went on without reading the Application it depends on")
	}
	for _, obj := range []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "read-apps"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1beta1.GroupVersion.Group}, Resources: []string{"applications"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "read-apps"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-apps"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "deployer"}}},
	} {
		if err := testClient.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "the tenant delivered once it may read db", func() error {
		if !configMapExists(t, ns, "tenant") {
			return errNotYet
		}
		return nil
	})
}

// Deploy steps run one after another, as KubeVela runs them: production
// gets nothing until staging is healthy, with no gate in between.
func TestWorkflow_DeployStepsRunOneAfterAnother(t *testing.T) {
	ns := newNamespace(t)
	envs := envNamespaces(t, ns, "staging", "prod")
	staging, prod := envs[0], envs[1]
	startManager(t, testCfg, testOptions())
	createApp(t, ns, stagedApp("seq", staging, prod, `
      - {type: deploy, properties: {policies: [staging]}}
      - {type: deploy, properties: {policies: [production]}}`))
	eventually(t, 30*time.Second, "staging applied, deploy-1 waiting for health", func() error {
		if _, err := getDeployment(t, staging, "api"); err != nil {
			return err
		}
		w := getApp(t, ns, "seq").Status.Workflow
		if w == nil || w.Steps[0].Name != "deploy-1" || w.Steps[0].Phase != v1beta1.WorkflowStepRunning || w.Steps[1].Phase != v1beta1.WorkflowStepPending {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if _, err := getDeployment(t, prod, "api"); !apierrors.IsNotFound(err) {
		t.Fatalf("production before staging was healthy: %v", err)
	}
	setReady(t, staging, "api")
	eventually(t, 30*time.Second, "production applied", func() error {
		_, err := getDeployment(t, prod, "api")
		return err
	})
	setReady(t, prod, "api")
	if w := waitReady(t, ns, "seq").Status.Workflow; !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded {
		t.Fatalf("workflow %+v", w)
	}
}

// Without a workflow, an Application with two topology policies runs the
// workflow KubeVela generates for it: a deploy step per topology policy,
// one after another, each waiting for its components' health.
func TestWorkflow_NoWorkflowDeploysTopologyByTopology(t *testing.T) {
	ns := newNamespace(t)
	envs := envNamespaces(t, ns, "staging", "prod")
	staging, prod := envs[0], envs[1]
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: topo}
spec:
  components:
    - {name: api, type: test-healthy, properties: {image: nginx}}
  policies:
    - {name: staging, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: prod, type: topology, properties: {clusters: [local], namespace: %s}}
`, staging, prod))
	eventually(t, 30*time.Second, "staging delivered, prod waiting for it", func() error {
		if _, err := getDeployment(t, staging, "api"); err != nil {
			return err
		}
		w := getApp(t, ns, "topo").Status.Workflow
		if w == nil || len(w.Steps) != 2 || w.Steps[0].Name != "deploy-staging" || w.Steps[1].Name != "deploy-prod" ||
			w.Steps[0].Phase != v1beta1.WorkflowStepRunning || w.Steps[1].Phase != v1beta1.WorkflowStepPending {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if _, err := getDeployment(t, prod, "api"); err == nil {
		t.Fatal("prod was delivered before staging was healthy")
	}
	setReady(t, staging, "api")
	eventually(t, 30*time.Second, "prod delivered once staging is healthy", func() error {
		_, err := getDeployment(t, prod, "api")
		return err
	})
	setReady(t, prod, "api")
	app := waitReady(t, ns, "topo")
	if w := app.Status.Workflow; !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded {
		t.Fatalf("workflow %+v", w)
	}
}
