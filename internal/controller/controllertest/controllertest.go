package controllertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/localcp"
)

// ErrNotYet is what a condition polled by Eventually returns while the
// state it waits for has not come.
var ErrNotYet = errors.New("not yet")

// here is this package's directory: the CRDs and the test definitions are
// found from it, whichever package's tests run.
var here = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}()

// Main runs a package's tests with the suite's logger and stops the
// control plane, if one started, when they end. Call it from TestMain.
func Main(m *testing.M) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	code := m.Run()
	if env != nil {
		_ = env.Stop()
	}
	os.Exit(code)
}

// zapLevel logs nothing unless STEWARD_TEST_LOGS is set.
func zapLevel() zapcore.Level {
	if os.Getenv("STEWARD_TEST_LOGS") != "" {
		return -4
	}
	return 5
}

// The control plane starts with the first test that needs it (a pure test
// runs without one, and so does a fuzz worker, whose envtest would outlive
// it).
var (
	env     *envtest.Environment
	envOnce sync.Once
	envErr  error
	cfg     *rest.Config
	cl      client.Client
)

// Scheme is client-go's kinds and OAM's.
func Scheme() *apiruntime.Scheme {
	s := apiruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}

// ControlPlane starts the package's kube-apiserver and etcd once, with
// Steward's CRDs, and returns its config and a client.
func ControlPlane(t testing.TB) (*rest.Config, client.Client) {
	t.Helper()
	envOnce.Do(func() {
		if os.Getenv("KUBEBUILDER_ASSETS") == "" {
			envErr = fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd into bin/k8s")
			return
		}
		e := &envtest.Environment{
			CRDDirectoryPaths:     []string{filepath.Join(here, "..", "..", "..", "config", "crd")},
			ErrorIfCRDPathMissing: true,
		}
		c, err := e.Start()
		if err != nil {
			envErr = fmt.Errorf("starting envtest: %w", err)
			return
		}
		env, cfg = e, c
		cl, envErr = client.New(c, client.Options{Scheme: Scheme()})
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return cfg, cl
}

// Client is a client of the suite's control plane, as its admin, which it
// starts if no test has: what a story reads and writes the cluster with
// besides the controller.
func Client(t testing.TB) client.Client {
	t.Helper()
	_, c := ControlPlane(t)
	return c
}

// Config is the suite's control plane's config, which it starts if no test
// has: what a story starts a manager of its own with.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	c, _ := ControlPlane(t)
	return c
}

// Start runs mgr until the test ends, and returns a function that stops
// it, as if the process had been killed: nothing runs after it returns.
func Start(t testing.TB, mgr manager.Manager) func() {
	t.Helper()
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

// NewNamespace creates a namespace for one test, holding its own copy of
// the test definitions (testdata/definitions) so tests do not share state;
// what the test leaves in it is forgotten when the test ends (Forget).
func NewNamespace(t testing.TB) string {
	t.Helper()
	c := Client(t)
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-"))
	name = strings.ReplaceAll(name, "/", "-")
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	InstallDefinitions(t, name)
	t.Cleanup(func() { Forget(t, name) })
	return name
}

// InstallDefinitions installs testdata/definitions into ns, the same way
// `steward dev` installs the built-in ones.
func InstallDefinitions(t testing.TB, ns string) {
	t.Helper()
	c := Client(t)
	if _, err := localcp.ApplyDefinitions(context.Background(), c, filepath.Join(here, "testdata", "definitions"), ns); err != nil {
		t.Fatalf("installing test definitions: %v", err)
	}
}

// Forget removes what a test left in its namespace that a later test's
// manager would otherwise reconcile again: its Applications, their
// trackers and its definitions (every manager watches every namespace, so
// without this each test would redo the work of all tests before it).
// Finalizers are dropped, not run: the test's own manager may already be
// stopped. Delivered objects stay; no Application claims them any more.
func Forget(t testing.TB, ns string) {
	ctx := context.Background()
	c := Client(t)
	unfinalize := func(obj client.Object) {
		if len(obj.GetFinalizers()) == 0 {
			return
		}
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		obj.SetFinalizers(nil)
		if err := c.Patch(ctx, obj, patch); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: dropping finalizers of %s: %v", obj.GetName(), err)
		}
	}
	var apps v1beta1.ApplicationList
	if err := c.List(ctx, &apps, client.InNamespace(ns)); err == nil {
		for i := range apps.Items {
			unfinalize(&apps.Items[i])
			_ = client.IgnoreNotFound(c.Delete(ctx, &apps.Items[i]))
		}
	}
	var rts v1beta1.ResourceTrackerList
	if err := c.List(ctx, &rts, client.MatchingLabels{v1beta1.LabelAppNamespace: ns}); err == nil {
		for i := range rts.Items {
			unfinalize(&rts.Items[i])
			_ = client.IgnoreNotFound(c.Delete(ctx, &rts.Items[i]))
		}
	}
	for _, obj := range []client.Object{&v1beta1.ComponentDefinition{}, &v1beta1.TraitDefinition{},
		&v1beta1.PolicyDefinition{}, &v1beta1.WorkflowStepDefinition{}} {
		if err := c.DeleteAllOf(ctx, obj, client.InNamespace(ns)); err != nil {
			t.Logf("cleanup: deleting definitions in %s: %v", ns, err)
		}
	}
}

// CreateFromYAML creates the object described by doc in namespace ns.
func CreateFromYAML(t testing.TB, ns, doc string, obj client.Object) {
	t.Helper()
	c := Client(t)
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	obj.SetNamespace(ns)
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// CreateApp creates an Application from doc in ns and, when the test ends
// and while its manager still runs, deletes it and waits until it is gone,
// so that later tests' managers do not see it.
func CreateApp(t testing.TB, ns, doc string) *v1beta1.Application {
	t.Helper()
	c := Client(t)
	app := &v1beta1.Application{}
	CreateFromYAML(t, ns, doc, app)
	t.Cleanup(func() {
		ctx := context.Background()
		if err := c.Delete(ctx, app); err != nil {
			return
		}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			live := &v1beta1.Application{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(app), live); err != nil {
				return
			}
			if time.Now().After(deadline.Add(-5 * time.Second)) {
				// No manager finalizes it (the test stopped its own): drop
				// the finalizers so later tests' managers never see it.
				live.Finalizers = nil
				_ = c.Update(ctx, live)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("application %s/%s was not deleted", app.Namespace, app.Name)
	})
	return app
}

// Eventually polls cond until it returns nil or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
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

// GetApp reads an Application.
func GetApp(t testing.TB, ns, name string) *v1beta1.Application {
	t.Helper()
	c := Client(t)
	app := &v1beta1.Application{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
		t.Fatalf("reading application: %v", err)
	}
	return app
}

// WaitReady waits until the Application is Ready at its generation, and
// returns it.
func WaitReady(t testing.TB, ns, name string) *v1beta1.Application {
	t.Helper()
	var app *v1beta1.Application
	Eventually(t, 30*time.Second, "application "+name+" ready", func() error {
		app = GetApp(t, ns, name)
		c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
		if c == nil || c.Status != "True" || app.Status.ObservedGeneration != app.Generation {
			return fmt.Errorf("ready condition %+v", c)
		}
		return nil
	})
	return app
}
