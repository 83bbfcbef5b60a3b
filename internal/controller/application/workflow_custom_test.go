package application

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/sandbox/sandboxtest"
)

// installPublishedSteps installs KubeVela's published step definitions
// named from the compatibility corpus; the test is skipped without it.
func installPublishedSteps(t *testing.T, ns string, names ...string) {
	t.Helper()
	controllertest.InstallPublishedSteps(t, ns, names...)
}

// recorder is a loopback server that records what it receives.
type stepRequests struct {
	mu   sync.Mutex
	seen []string
}

func (l *stepRequests) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, s)
}

func (l *stepRequests) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// With KubeVela's published step definitions installed unchanged, a
// workflow of apply-component → webhook → notification (Slack) →
// request → export2config succeeds: the loopback server gets the webhook
// body, the Slack message and the GET; the request's response feeds
// export2config through an output, and the ConfigMap it applies is
// recorded in the version's tracker, kept and deleted with the
// Application.
func TestCustomSteps_PublishedDefinitionsRunUnchanged(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	installPublishedSteps(t, ns, "webhook", "notification", "request", "export2config", "print-message-in-status")
	log := &stepRequests{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		log.add(r.Method + " " + r.URL.Path + " " + string(body))
		if r.URL.Path == "/version" {
			_, _ = w.Write([]byte(`{"version":"1.2.3"}`))
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: hooks}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg, data: {a: b}}}
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: cfg}}
      - {name: hook, type: webhook, properties: {url: {value: "%[1]s/hook"}, data: {deployed: cfg}}}
      - {name: slack, type: notification, properties: {slack: {url: {value: "%[1]s/slack"}, message: {text: "cfg is out"}}}}
      - name: ask
        type: request
        properties: {url: "%[1]s/version"}
        outputs: [{name: version, valueFrom: response.version}]
      - name: save
        type: export2config
        inputs: [{from: version, parameterKey: data.version}]
        properties: {configName: versions, data: {app: hooks}}
      - {name: say, type: print-message-in-status, properties: {message: all done}}
`, srv.URL))
	eventually(t, 60*time.Second, "the workflow succeeded", func() error {
		w := getApp(t, ns, "hooks").Status.Workflow
		if w == nil || !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	w := getApp(t, ns, "hooks").Status.Workflow
	if last := w.Steps[len(w.Steps)-1]; last.Message != "all done" {
		t.Errorf("print-message-in-status: message %q", last.Message)
	}
	// steward workflow status shows each step's message and the outputs.
	var shown strings.Builder
	if err := cli.WorkflowStatus(ctx, testClient, ns, "hooks", &shown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown.String(), "all done") || !strings.Contains(shown.String(), `version: "1.2.3"`) {
		t.Errorf("steward workflow status:\n%s", shown.String())
	}
	seen := strings.Join(log.all(), "\n")
	for _, want := range []string{`POST /hook {"deployed":"cfg"}`, `POST /slack`, `cfg is out`, `GET /version`} {
		if !strings.Contains(seen, want) {
			t.Errorf("the server did not receive %q; it received:\n%s", want, seen)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "versions"}, cm); err != nil {
		t.Fatalf("export2config: %v", err)
	}
	if cm.Data["version"] != "1.2.3" || cm.Data["app"] != "hooks" {
		t.Errorf("export2config data %v", cm.Data)
	}
	// Recorded, so kept: a hand delete is repaired.
	if err := testClient.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the ConfigMap a step applied is repaired", func() error {
		return testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "versions"}, &corev1.ConfigMap{})
	})
	// Deleted with the Application.
	if err := testClient.Delete(ctx, getApp(t, ns, "hooks")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the ConfigMap goes with the Application", func() error {
		err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "versions"}, &corev1.ConfigMap{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
}

// A request answered 404 fails its step (the published request
// definition's #Fail), and the workflow with it; a step type with no
// definition refuses the version; a step definition in the Application's
// own namespace that waits on a condition keeps its step running, then
// goes on once the condition holds.
func TestCustomSteps_FailWaitAndMissingDefinition(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	installPublishedSteps(t, ns, "request", "read-object", "export2secret")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	createFromYAML(t, ns, `metadata: {name: wait-for-flag}
spec:
  schematic:
    cue:
      template: |
        import (
          "vela/kube"
          "vela/builtin"
        )
        read: kube.#Read & {$params: value: {apiVersion: "v1", kind: "ConfigMap", metadata: {name: parameter.name, namespace: context.namespace}}}
        ready: *false | bool
        if read.$returns.value.data.go != _|_ {
          if read.$returns.value.data.go == "yes" {
            ready: true
          }
        }
        check: builtin.#ConditionalWait & {$params: {continue: ready, message: "waiting for \(parameter.name) to say go"}}
        parameter: name: string
`, &v1beta1.WorkflowStepDefinition{})
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: failing}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg1, data: {a: b}}}
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: cfg}}
      - {name: ask, type: request, properties: {url: "%s/missing"}}
`, srv.URL))
	createApp(t, ns, `metadata: {name: unknown}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg2, data: {a: b}}}
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: cfg}}
      - {name: tell, type: no-such-step}
`)
	createApp(t, ns, `metadata: {name: gated}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg3, data: {a: b}}}
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: cfg}}
      - {name: flag, type: wait-for-flag, properties: {name: flag}}
      - name: read
        type: read-object
        properties: {apiVersion: v1, kind: ConfigMap, name: flag, namespace: `+ns+`}
        outputs: [{name: token, valueFrom: output.$returns.value.data.token}]
      - name: secret
        type: export2secret
        inputs: [{from: token, parameterKey: data.token}]
        properties: {secretName: tokens, data: {app: gated}}
`)
	eventually(t, 60*time.Second, "the 404 failed the request step", func() error {
		w := getApp(t, ns, "failing").Status.Workflow
		if w == nil || len(w.Steps) != 2 || w.Steps[1].Phase != v1beta1.WorkflowStepFailed || !strings.Contains(w.Steps[1].Message, "404") || w.Phase != v1beta1.WorkflowPhaseFailed {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	eventually(t, 30*time.Second, "the unknown step type refused the version", func() error {
		app := getApp(t, ns, "unknown")
		for _, c := range app.Status.Conditions {
			if c.Reason == v1beta1.ReasonDefinitionNotFound && strings.Contains(c.Message, `"no-such-step"`) {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", app.Status.Conditions)
	})
	if configMapExists(t, ns, "cfg2") {
		t.Error("a version with an unknown step type applied its components")
	}
	eventually(t, 60*time.Second, "the wait step runs, waiting", func() error {
		w := getApp(t, ns, "gated").Status.Workflow
		if w == nil || len(w.Steps) != 4 || w.Steps[1].Phase != v1beta1.WorkflowStepRunning || w.Steps[1].Message != "waiting for flag to say go" {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	flag := &corev1.ConfigMap{Data: map[string]string{"go": "yes", "token": "s3cret"}}
	flag.Name, flag.Namespace = "flag", ns
	if err := testClient.Create(ctx, flag); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the workflow went on and exported the secret", func() error {
		w := getApp(t, ns, "gated").Status.Workflow
		if w == nil || !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	sec := &corev1.Secret{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tokens"}, sec); err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["token"]) != "s3cret" || string(sec.Data["app"]) != "gated" {
		raw, _ := json.Marshal(sec.Data)
		t.Errorf("export2secret data %s", raw)
	}
}

// A step definition of the tenant's own namespace whose template no
// evaluation budget affords (string doubling, a comprehension of 10^10
// iterations) fails its step with EvaluationBudgetExceeded within
// seconds, naming the definition and the limit; the controller stays
// small and keeps serving: an Application created afterwards is
// delivered.
func TestCustomSteps_AnExplodingStepDefinitionFailsItsStep(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, budgetOptions())
	attacks := []string{"string doubling", "comprehension"}
	for _, name := range attacks {
		def := &v1beta1.WorkflowStepDefinition{}
		def.Name, def.Namespace = slug(name), ns
		def.Spec.Schematic = &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: "import \"vela/builtin\"\n" + sandboxtest.Attacks[name] +
			"say: builtin.#Message & {$params: message: \"\\(len(x))\"}\n"}}
		if err := testClient.Create(context.Background(), def); err != nil {
			t.Fatal(err)
		}
		createApp(t, ns, fmt.Sprintf(`metadata: {name: %[1]s}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: %[1]s, data: {a: b}}}
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: cfg}}
      - {name: boom, type: %[1]s}
`, slug(name)))
	}
	peak := uint64(0)
	for _, name := range attacks {
		start := time.Now()
		eventually(t, 90*time.Second, name+": the step failed on the budget", func() error {
			w := getApp(t, ns, slug(name)).Status.Workflow
			if w == nil || len(w.Steps) != 2 || w.Steps[1].Phase != v1beta1.WorkflowStepFailed {
				return fmt.Errorf("workflow %+v", w)
			}
			if w.Steps[1].Reason != v1beta1.ReasonEvaluationBudgetExceeded || !strings.Contains(w.Steps[1].Message, slug(name)) || !strings.Contains(w.Steps[1].Message, "limit") {
				return fmt.Errorf("step %+v", w.Steps[1])
			}
			return nil
		})
		peak = max(peak, heapAfterGC())
		t.Logf("%s: failed its step after %s: %s", name, time.Since(start).Round(time.Millisecond), getApp(t, ns, slug(name)).Status.Workflow.Steps[1].Message)
	}
	createApp(t, ns, `metadata: {name: after}
spec: {components: [{name: cfg, type: test-config, properties: {name: after, data: {a: b}}}]}
`)
	waitReady(t, ns, "after")
	peak = max(peak, heapAfterGC())
	t.Logf("test process heap after GC, peak: %d MiB", peak>>20)
	if peak > 1<<30 {
		t.Errorf("heap after GC reached %d MiB", peak>>20)
	}
}

// A step's kube.#Delete deletes what it names as the Application, but
// never an object this Application manages nor one another Application
// owns: a filter skips them, a single delete of one fails the step
// (Refused) and leaves it.
func TestCustomSteps_DeleteNeverTouchesManagedOrForeignObjects(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	installK8sObjects(t, ns)
	createFromYAML(t, ns, `metadata: {name: cleaner}
spec:
  schematic:
    cue:
      template: |
        import "vela/kube"
        clean: kube.#Delete & {$params: {value: {apiVersion: "v1", kind: "ConfigMap", metadata: name: ""}, filter: {namespace: context.namespace, matchingLabels: clean: "yes"}}}
        if parameter.name != _|_ {
          one: kube.#Delete & {$params: value: {apiVersion: "v1", kind: "ConfigMap", metadata: {name: parameter.name, namespace: context.namespace}}}
        }
        parameter: name?: string
`, &v1beta1.WorkflowStepDefinition{})
	for name, labels := range map[string]map[string]string{
		"leftover": {"clean": "yes"},
		"other":    {"clean": "yes", v1beta1.LabelAppName: "someone", v1beta1.LabelAppNamespace: ns},
	} {
		cm := &corev1.ConfigMap{}
		cm.Name, cm.Namespace, cm.Labels = name, ns, labels
		if err := testClient.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `metadata: {name: tidy}
spec:
  components:
    - {name: cfg, type: k8s-objects, properties: {objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: mine, labels: {clean: "yes"}}, data: {a: b}}]}}
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: cfg}}
      - {name: sweep, type: cleaner}
      - {name: mine, type: cleaner, properties: {name: mine}}
`)
	eventually(t, 60*time.Second, "the sweep ran and the delete of a managed object was refused", func() error {
		w := getApp(t, ns, "tidy").Status.Workflow
		if w == nil || len(w.Steps) != 3 || w.Steps[1].Phase != v1beta1.WorkflowStepSucceeded || w.Steps[2].Phase != v1beta1.WorkflowStepFailed || w.Steps[2].Reason != "Refused" {
			return fmt.Errorf("workflow %+v", w)
		}
		return nil
	})
	if configMapExists(t, ns, "leftover") {
		t.Error("the filter did not delete the unowned ConfigMap it selects")
	}
	for _, name := range []string{"other", "mine"} {
		if !configMapExists(t, ns, name) {
			t.Errorf("ConfigMap %s was deleted by a step", name)
		}
	}
}
