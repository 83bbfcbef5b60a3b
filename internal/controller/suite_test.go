package controller

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/watch"
)

// The suite runs one real kube-apiserver and etcd (envtest) for the package;
// each test starts its own manager with the options it needs.
var (
	testCfg    *rest.Config
	testClient client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	code := m.Run()
	if testEnv != nil {
		_ = testEnv.Stop()
	}
	os.Exit(code)
}

// The control plane starts with the first test that needs it
// (newNamespace, startManager): the pure tests of status and conditions
// run without one (go test -run 'Condition|Status'), and so does a fuzz
// worker, whose envtest would outlive it.
var (
	testEnv      *envtest.Environment
	testEnvOnce  sync.Once
	testEnvError error
)

// requireControlPlane starts the suite's kube-apiserver and etcd once.
func requireControlPlane(t testing.TB) {
	t.Helper()
	testEnvOnce.Do(func() {
		if os.Getenv("KUBEBUILDER_ASSETS") == "" {
			testEnvError = fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd into bin/k8s")
			return
		}
		env := &envtest.Environment{
			CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd")},
			ErrorIfCRDPathMissing: true,
		}
		cfg, err := env.Start()
		if err != nil {
			testEnvError = fmt.Errorf("starting envtest: %w", err)
			return
		}
		testEnv, testCfg = env, cfg
		testClient, testEnvError = client.New(cfg, client.Options{Scheme: NewScheme()})
	})
	if testEnvError != nil {
		t.Fatal(testEnvError)
	}
}

func zapLevel() zapcore.Level {
	if os.Getenv("STEWARD_TEST_LOGS") != "" {
		return -4
	}
	return 5
}

// testOptions are fast options for tests: short re-sync, no servers.
func testOptions() Options {
	o := NewOptions()
	o.MetricsAddr = "0"
	o.HealthAddr = "0"
	o.ReSyncPeriod = 2 * time.Second
	o.MinReconcileInterval = time.Second
	o.ReSyncJitter = 0
	o.SkipNameValidation = true
	// The suite's stories are about what a re-sync pass does; watch mode
	// has its own (watchmode_test.go), and the chaos suite runs the
	// default.
	o.DriftDetection = watch.ModeTimer
	// The stories' chart repositories, webhooks and registries are
	// loopback servers, which the egress policy refuses by default: the
	// suite allows loopback explicitly (trust_test.go tries the default).
	o.EgressAllow = []string{"127.0.0.1/32", "::1/128"}
	return o
}

// startManager runs a manager with opts on cfg until the test ends.
func startManager(t *testing.T, cfg *rest.Config, opts Options) {
	t.Helper()
	startStoppableManager(t, cfg, opts)
}

// startStoppableManager runs a manager and returns a function that stops
// it, as if the process had been killed: nothing runs after it returns.
func startStoppableManager(t *testing.T, cfg *rest.Config, opts Options) func() {
	t.Helper()
	if cfg == nil {
		requireControlPlane(t)
		cfg = testCfg
	}
	mgr, err := NewManager(cfg, opts)
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = mgr.Start(ctx)
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// newNamespace creates a namespace for one test, holding its own
// definitions so tests do not share state.
func newNamespace(t testing.TB) string {
	t.Helper()
	requireControlPlane(t)
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-"))
	name = strings.ReplaceAll(name, "/", "-")
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := testClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	installTestDefinitions(t, name)
	t.Cleanup(func() { forget(t, name) })
	return name
}

// forget removes what a test left in its namespace that a later test's
// manager would otherwise reconcile again: its Applications, their
// trackers and its definitions (every manager watches every namespace, so
// without this each test would redo the work of all tests before it).
// Finalizers are dropped, not run: the test's own manager may already be
// stopped. Delivered objects stay; no Application claims them any more.
func forget(t testing.TB, ns string) {
	ctx := context.Background()
	unfinalize := func(obj client.Object) {
		if len(obj.GetFinalizers()) == 0 {
			return
		}
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		obj.SetFinalizers(nil)
		if err := testClient.Patch(ctx, obj, patch); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: dropping finalizers of %s: %v", obj.GetName(), err)
		}
	}
	var apps v1beta1.ApplicationList
	if err := testClient.List(ctx, &apps, client.InNamespace(ns)); err == nil {
		for i := range apps.Items {
			unfinalize(&apps.Items[i])
			_ = client.IgnoreNotFound(testClient.Delete(ctx, &apps.Items[i]))
		}
	}
	var rts v1beta1.ResourceTrackerList
	if err := testClient.List(ctx, &rts, client.MatchingLabels{v1beta1.LabelAppNamespace: ns}); err == nil {
		for i := range rts.Items {
			unfinalize(&rts.Items[i])
			_ = client.IgnoreNotFound(testClient.Delete(ctx, &rts.Items[i]))
		}
	}
	for _, obj := range []client.Object{&v1beta1.ComponentDefinition{}, &v1beta1.TraitDefinition{},
		&v1beta1.PolicyDefinition{}, &v1beta1.WorkflowStepDefinition{}} {
		if err := testClient.DeleteAllOf(ctx, obj, client.InNamespace(ns)); err != nil {
			t.Logf("cleanup: deleting definitions in %s: %v", ns, err)
		}
	}
}

// createFromYAML creates the object described by doc in namespace ns.
func createFromYAML(t *testing.T, ns, doc string, obj client.Object) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	obj.SetNamespace(ns)
	if err := testClient.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// createApp creates an Application from doc in ns and, when the test ends
// and while its manager still runs, deletes it and waits until it is gone,
// so that later tests' managers do not see it.
func createApp(t *testing.T, ns, doc string) *v1beta1.Application {
	t.Helper()
	app := &v1beta1.Application{}
	createFromYAML(t, ns, doc, app)
	t.Cleanup(func() {
		ctx := context.Background()
		if err := testClient.Delete(ctx, app); err != nil {
			return
		}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			live := &v1beta1.Application{}
			if err := testClient.Get(ctx, client.ObjectKeyFromObject(app), live); err != nil {
				return
			}
			if time.Now().After(deadline.Add(-5 * time.Second)) {
				// No manager finalizes it (the test stopped its own): drop
				// the finalizers so later tests' managers never see it.
				live.Finalizers = nil
				_ = testClient.Update(ctx, live)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("application %s/%s was not deleted", app.Namespace, app.Name)
	})
	return app
}

// eventually polls cond until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = cond(); last == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, last)
}

// getApp reads an Application.
func getApp(t *testing.T, ns, name string) *v1beta1.Application {
	t.Helper()
	app := &v1beta1.Application{}
	if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		t.Fatalf("reading application: %v", err)
	}
	return app
}

var _ runtime.Object = &v1beta1.Application{}

var errNotYet = fmt.Errorf("not yet")
