package provider_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/steprun"
)

// Trust stories: what a tenant of namespace N can make Steward do through
// the doors besides rendered objects (workflow step providers, Helm chart
// sources), tried as a hostile tenant would. Each fails without its fix.

// stepOf waits for the named step of an Application's workflow to reach
// phase, and returns it.
func stepOf(t *testing.T, ns, app, step string, timeout time.Duration, phase string) v1beta1.WorkflowStepStatus {
	t.Helper()
	var got v1beta1.WorkflowStepStatus
	controllertest.Eventually(t, timeout, fmt.Sprintf("step %s of %s %s", step, app, phase), func() error {
		w := controllertest.GetApp(t, ns, app).Status.Workflow
		if w == nil {
			return fmt.Errorf("no workflow status")
		}
		for _, s := range w.Steps {
			if s.Name == step {
				got = s
				if s.Phase == phase {
					return nil
				}
				return fmt.Errorf("step %s: %s %s: %s (workflow %s: %s)", s.Name, s.Phase, s.Reason, s.Message, w.Phase, w.Message)
			}
		}
		return fmt.Errorf("no step %s in %+v", step, w.Steps)
	})
	return got
}

// A component renders a config Secret whose objects-reference lists a
// ConfigMap of another namespace; KubeVela's published delete-config then
// deletes the config. Confined (--no-cross-namespace-objects), the step
// fails naming the boundary before anything is read; unconfined, it fails
// because the config is this Application's own object and the ConfigMap
// was never made for it. The other namespace's ConfigMap survives both.
func TestTrust_ConfigDeleteNeverDeletesAnotherNamespacesObject(t *testing.T) {
	for _, confined := range []bool{true, false} {
		t.Run(fmt.Sprintf("confined=%v", confined), func(t *testing.T) {
			ns := controllertest.NewNamespace(t)
			victims := controllertest.NewNamespace(t)
			controllertest.InstallPublishedSteps(t, ns, "delete-config")
			controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
			controllertest.CreateFromYAML(t, victims, "metadata: {name: victim}\ndata: {keep: me}\n", &corev1.ConfigMap{})
			opts := managertest.Options()
			opts.NoCrossNamespaceObjects = confined
			managertest.Start(t, nil, opts)
			controllertest.CreateApp(t, ns, fmt.Sprintf(`metadata: {name: cfg}
spec:
  components:
    - name: c
      type: k8s-objects
      properties:
        objects:
          - apiVersion: v1
            kind: Secret
            metadata: {name: c, labels: {config.oam.dev/catalog: velacore-config, config.oam.dev/type: ""}}
            stringData:
              input-properties: "{}"
              objects-reference: '[{"apiVersion":"v1","kind":"ConfigMap","namespace":"%s","name":"victim"}]'
  workflow:
    steps:
      - {name: apply, type: apply-component, properties: {component: c}}
      - {name: forget, type: delete-config, properties: {name: c}}
`, victims))
			st := stepOf(t, ns, "cfg", "forget", 60*time.Second, v1beta1.WorkflowStepFailed)
			wantReason, wantMsg := "Refused", "managed by this Application"
			if confined {
				wantReason, wantMsg = v1beta1.ReasonCrossNamespaceObject, "--no-cross-namespace-objects"
			}
			if st.Reason != wantReason || !strings.Contains(st.Message, wantMsg) {
				t.Errorf("step: reason %s, message %q; want %s naming %q", st.Reason, st.Message, wantReason, wantMsg)
			}
			if confined && !strings.Contains(st.Message, victims) {
				t.Errorf("message %q does not name the namespace", st.Message)
			}
			if !controllertest.ConfigMapExists(t, victims, "victim") {
				t.Fatal("the other namespace's ConfigMap was deleted")
			}
			if !controllertest.Exists(t, &corev1.Secret{}, ns, "c") {
				t.Fatal("the config was deleted although its references were refused")
			}
		})
	}
}

// A helmchart component whose release is placed in another namespace and
// whose credentials are a Secret there: confined, the render is refused
// with the boundary before the Secret is read or the chart fetched, so
// the tenant's HTTPS server never sees the token (loopback is allowed by
// the egress policy here, so the boundary is the only guard).
func TestTrust_HelmCredentialsOfAnotherNamespaceNeverLeave(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	system := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "helmchart")
	controllertest.CreateFromYAML(t, system, "metadata: {name: cluster-token}\ntype: Opaque\nstringData: {token: s3cret-cluster-token}\n", &corev1.Secret{})
	var requests atomic.Int32
	var auth atomic.Value
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	opts := managertest.Options()
	opts.NoCrossNamespaceObjects = true
	managertest.Start(t, nil, opts)
	controllertest.CreateApp(t, ns, fmt.Sprintf(`metadata: {name: web}
spec:
  components:
    - name: web
      type: helmchart
      properties:
        chart: {source: "%s/c.tgz", auth: {secretRef: {name: cluster-token, namespace: %s}}}
        release: {namespace: %s}
`, srv.URL, system, system))
	msg := controllertest.WaitNotReady(t, ns, "web", v1beta1.ReasonCrossNamespaceObject)
	if !strings.Contains(msg, system) {
		t.Errorf("message %q does not name the namespace", msg)
	}
	// Passes go on (re-sync, back-off): still nothing reaches the server.
	time.Sleep(3 * time.Second)
	if n := requests.Load(); n != 0 {
		t.Fatalf("the tenant's server received %d requests (Authorization %q)", n, auth.Load())
	}
}

// sixteenFetches is a step definition of 16 parallel http.#HTTPDo to one
// URL.
const sixteenFetches = `metadata: {name: sixteen}
spec:
  schematic:
    cue:
      template: |
        import "vela/http"
        for i, _ in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
          "get\(i)": http.#HTTPDo & {$params: {method: "GET", url: parameter.url}}
        }
        parameter: url: string
`

// One step with 16 parallel requests to a server answering 4 MiB of "<"
// (six times that once JSON-escaped) fails with the bound named, and the
// controller's heap stays well under what the chart gives it.
func TestTrust_OversizedStepResultsFailWithTheLimitNamed(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	controllertest.CreateFromYAML(t, ns, sixteenFetches, &v1beta1.WorkflowStepDefinition{})
	body := strings.Repeat("<", 4<<20)
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			runtime.GC()
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateApp(t, ns, stepApp(ns, "big", fmt.Sprintf(`{name: fetch, type: sixteen, properties: {url: "%s"}}`, srv.URL)))
	st := stepOf(t, ns, "big", "fetch", 90*time.Second, v1beta1.WorkflowStepFailed)
	close(stop)
	sampled.Wait()
	if st.Reason != provider.ReasonTooLarge || !strings.Contains(st.Message, "--max-step-action-result-size") {
		t.Errorf("step: reason %s, message %q; want %s naming the flag", st.Reason, st.Message, provider.ReasonTooLarge)
	}
	t.Logf("peak heap after GC while the step ran: %.1f MiB (%d responses served)", float64(peak.Load())/(1<<20), served.Load())
	if peak.Load() > 256<<20 {
		t.Fatalf("the heap after GC reached %.1f MiB", float64(peak.Load())/(1<<20))
	}
}

// Eight Applications whose step waits on a server that answers after a
// minute hold no reconcile worker: another Application's hand-deleted
// object is back within a second (watch mode), and a new Application is
// delivered within ten seconds.
func TestTrust_TarpitStepsHoldNoReconcileWorker(t *testing.T) {
	tarpits := controllertest.NewNamespace(t)
	ns := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	controllertest.InstallBuiltinDefinitions(t, tarpits, "k8s-objects")
	controllertest.CreateFromYAML(t, tarpits, `metadata: {name: slow}
spec:
  schematic:
    cue:
      template: |
        import "vela/http"
        req: http.#HTTPDo & {$params: {method: "GET", url: parameter.url, request: timeout: "59s"}}
        parameter: url: string
`, &v1beta1.WorkflowStepDefinition{})
	release := make(chan struct{})
	var waiting atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		waiting.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(59 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	opts := managertest.Options()
	opts.DriftDetection = "watch"
	managertest.Start(t, nil, opts)
	for i := range 8 {
		controllertest.CreateApp(t, tarpits, stepApp(tarpits, fmt.Sprintf("tarpit-%d", i), fmt.Sprintf(`{name: wait, type: slow, properties: {url: "%s/%d"}}`, srv.URL, i)))
	}
	controllertest.Eventually(t, 30*time.Second, "the tarpit holds requests", func() error {
		if n := waiting.Load(); n < int32(steprun.DefaultPerNamespace) {
			return fmt.Errorf("%d requests held", n)
		}
		return nil
	})
	start := time.Now()
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("fresh", "", controllertest.ConfigMapIn(ns, "fresh-cm")))
	controllertest.WaitReady(t, ns, "fresh")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a new Application took %s to deliver beside the tarpits", d)
	}
	cm, err := controllertest.GetConfigMap(t, ns, "fresh-cm")
	if err != nil {
		t.Fatal(err)
	}
	if err := controllertest.Client(t).Delete(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	controllertest.Eventually(t, 10*time.Second, "the hand-deleted ConfigMap is back", func() error {
		back, err := controllertest.GetConfigMap(t, ns, "fresh-cm")
		if err != nil || back.UID == cm.UID {
			return fmt.Errorf("not back (%v)", err)
		}
		return nil
	})
	if d := time.Since(start); d > time.Second {
		t.Errorf("the hand-deleted ConfigMap took %s to come back beside the tarpits", d)
	}
	st := stepOf(t, tarpits, "tarpit-0", "wait", 5*time.Second, v1beta1.WorkflowStepRunning)
	if st.Reason != steprun.ReasonActionRunning {
		t.Errorf("a tarpit step: reason %s, message %q; want %s", st.Reason, st.Message, steprun.ReasonActionRunning)
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// getStep is a step definition of one GET whose status code it exports.
const getStep = `metadata: {name: get}
spec:
  schematic:
    cue:
      template: |
        import "vela/http"
        req: http.#HTTPDo & {$params: {method: "GET", url: parameter.url}}
        parameter: url: string
`

// A step's request to loopback, or to the controller's own metrics
// listener, is refused by default with reason EgressDenied naming the
// rule, and goes through when the operator allows loopback.
func TestTrust_EgressRefusesLoopbackAndOwnListenersUnlessAllowed(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	controllertest.CreateFromYAML(t, ns, getStep, &v1beta1.WorkflowStepDefinition{})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	app := func(name, url string) string {
		return stepApp(ns, name, fmt.Sprintf("{name: get, type: get, properties: {url: %q}}", url))
	}
	opts := managertest.Options()
	opts.EgressAllow = nil // the default policy
	opts.MetricsAddr = metrics
	stop := managertest.Start(t, nil, opts)
	controllertest.CreateApp(t, ns, app("to-loopback", srv.URL))
	controllertest.CreateApp(t, ns, app("to-metrics", "http://"+metrics+"/metrics"))
	for name, rule := range map[string]string{"to-loopback": "loopback", "to-metrics": "own listener " + metrics} {
		st := stepOf(t, ns, name, "get", 60*time.Second, v1beta1.WorkflowStepFailed)
		if st.Reason != egress.Reason || !strings.Contains(st.Message, rule) {
			t.Errorf("%s: reason %s, message %q; want %s naming %q", name, st.Reason, st.Message, egress.Reason, rule)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback server received %d requests", n)
	}
	stop()

	opts.EgressAllow = []string{"127.0.0.1/32"}
	managertest.Start(t, nil, opts)
	controllertest.CreateApp(t, ns, app("allowed-loopback", srv.URL))
	controllertest.CreateApp(t, ns, app("allowed-metrics", "http://"+metrics+"/metrics"))
	stepOf(t, ns, "allowed-loopback", "get", 60*time.Second, v1beta1.WorkflowStepSucceeded)
	stepOf(t, ns, "allowed-metrics", "get", 60*time.Second, v1beta1.WorkflowStepSucceeded)
	if hits.Load() == 0 {
		t.Fatal("the allowed request did not reach the server")
	}
}

// stepApp is an Application whose workflow runs one custom step and
// then applies its one component (a ConfigMap named after it), so that
// it delivers something: a workflow of custom steps alone is refused.
func stepApp(ns, name, step string) string {
	return fmt.Sprintf(`metadata: {name: %s}
spec:
  components:
    - {name: cfg, type: k8s-objects, properties: {objects: [%s]}}
  workflow:
    steps:
      - %s
      - {name: apply, type: apply-component, properties: {component: cfg}}
`, name, controllertest.ConfigMapIn(ns, name+"-cm"), step)
}
