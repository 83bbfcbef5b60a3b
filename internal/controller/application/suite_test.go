package application

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/cache"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/definition"
	"github.com/steward-oam/steward/internal/metrics"
	"github.com/steward-oam/steward/internal/watch"
)

// The suite runs one real kube-apiserver and etcd (envtest) for the
// package (internal/controller/controllertest); each test starts its own
// manager with the options it needs.
var (
	testCfg    *rest.Config
	testClient client.Client
)

func TestMain(m *testing.M) { controllertest.Main(m) }

// requireControlPlane starts the suite's kube-apiserver and etcd once.
func requireControlPlane(t testing.TB) {
	t.Helper()
	testCfg, testClient = controllertest.ControlPlane(t)
}

// testOpts are the options of a test's manager: the reconciler's, and the
// few of the manager and of the definition reconcilers the stories set.
type testOpts struct {
	Options
	// MetricsAddr serves the metrics endpoint; "0" does not.
	MetricsAddr string
	// DefinitionRevisionLimit is --definition-revision-limit.
	DefinitionRevisionLimit int
	// onReconciler sees the reconciler, for a benchmark that calls it.
	onReconciler func(*Reconciler)
}

// testOptions are fast options for tests: short re-sync, no servers.
func testOptions() testOpts {
	o := NewOptions()
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
	// suite allows loopback explicitly (internal/provider's trust_test.go
	// tries the default).
	o.EgressAllow = []string{"127.0.0.1/32", "::1/128"}
	return testOpts{Options: o, MetricsAddr: "0", DefinitionRevisionLimit: 20}
}

// startManager runs a manager with opts on cfg until the test ends.
func startManager(t testing.TB, cfg *rest.Config, opts testOpts) {
	t.Helper()
	startStoppableManager(t, cfg, opts)
}

// startStoppableManager runs a manager with the Application reconciler and
// the definition reconcilers, registered as internal/controller/manager
// registers them, and returns a function that stops it, as if the process
// had been killed: nothing runs after it returns.
func startStoppableManager(t testing.TB, cfg *rest.Config, opts testOpts) func() {
	t.Helper()
	if cfg == nil {
		requireControlPlane(t)
		cfg = testCfg
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(opts.KubeAPIQPS), opts.KubeAPIBurst
	m, err := metrics.New(ctrlmetrics.Registry)
	if err != nil {
		t.Fatalf("registering metrics: %v", err)
	}
	cfg.Wrap(m.InstrumentTransport)
	sync := 10 * time.Hour
	skip := true
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 controllertest.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options(&sync, opts.Sharding.Selector()),
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	r, err := New(mgr, cfg, opts.Options, m)
	if err != nil {
		t.Fatalf("creating the reconciler: %v", err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatalf("setting up the reconciler: %v", err)
	}
	if opts.onReconciler != nil {
		opts.onReconciler(r)
	}
	if err := definition.Setup(mgr, r.Renderer, r.Recorder, definition.Options{Revisions: opts.DefinitionRevisions,
		SystemNamespace: opts.SystemDefinitionNS, RevisionLimit: opts.DefinitionRevisionLimit, Sharded: opts.Sharding.Enabled}); err != nil {
		t.Fatalf("setting up the definition reconcilers: %v", err)
	}
	return controllertest.Start(t, mgr)
}

// newNamespace creates a namespace for one test, holding its own
// definitions so tests do not share state.
func newNamespace(t testing.TB) string {
	t.Helper()
	requireControlPlane(t)
	return controllertest.NewNamespace(t)
}

// installTestDefinitions installs the suite's definitions into ns.
func installTestDefinitions(t testing.TB, ns string) { controllertest.InstallDefinitions(t, ns) }

// createFromYAML creates the object described by doc in namespace ns.
func createFromYAML(t *testing.T, ns, doc string, obj client.Object) {
	t.Helper()
	controllertest.CreateFromYAML(t, ns, doc, obj)
}

// createApp creates an Application from doc in ns, deleted when the test
// ends while its manager still runs.
func createApp(t testing.TB, ns, doc string) *v1beta1.Application {
	t.Helper()
	return controllertest.CreateApp(t, ns, doc)
}

// eventually polls cond until it returns nil or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	controllertest.Eventually(t, timeout, what, cond)
}

// getApp reads an Application.
func getApp(t *testing.T, ns, name string) *v1beta1.Application {
	t.Helper()
	return controllertest.GetApp(t, ns, name)
}

var errNotYet = controllertest.ErrNotYet

// The helpers below are controllertest's, shared with the stories that
// moved to the packages whose behaviour they tell (internal/sandbox,
// internal/boundary, internal/provider, internal/apply, internal/tracker).

// condition returns the Application's condition typ, once the status is of
// its generation.
func condition(t *testing.T, ns, name, typ string) (*v1beta1.Condition, error) {
	t.Helper()
	return controllertest.Condition(t, ns, name, typ)
}

// exists reports whether an object exists, read with the admin client.
func exists(t *testing.T, obj client.Object, ns, name string) bool {
	t.Helper()
	return controllertest.Exists(t, obj, ns, name)
}

// installK8sObjects installs the built-in k8s-objects definition into ns.
func installK8sObjects(t *testing.T, ns string) {
	t.Helper()
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
}

// objectsApp is an Application of k8s-objects components, one per object.
func objectsApp(name, serviceAccount string, objects ...string) string {
	return controllertest.ObjectsApp(name, serviceAccount, objects...)
}

func configMapIn(ns, name string) string { return controllertest.ConfigMapIn(ns, name) }

func configMapOf(t *testing.T, c client.Client, ns, name string) (*corev1.ConfigMap, error) {
	t.Helper()
	return controllertest.ConfigMapOf(t, c, ns, name)
}

// trackerNamed returns the tracker of an Application with the given name,
// nil when there is none.
func trackerNamed(t *testing.T, ns, app, name string) *v1beta1.ResourceTracker {
	t.Helper()
	return controllertest.TrackerNamed(t, ns, app, name)
}

// tenant creates ServiceAccount name in ns, bound to a Role of ns with
// rules; it returns a function that replaces the rules.
func tenant(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) func(...rbacv1.PolicyRule) {
	t.Helper()
	requireControlPlane(t)
	return controllertest.Tenant(t, testClient, ns, name, rules...)
}

func configMapRule(verbs ...string) rbacv1.PolicyRule { return controllertest.ConfigMapRule(verbs...) }

var writeVerbs = controllertest.WriteVerbs()

// budgetOptions are the suite's options with a budget small enough for
// the attacks to be stopped within seconds (internal/sandbox's
// budget_test.go has the same for the whole controller).
func budgetOptions() testOpts {
	o := testOptions()
	o.Budget.Timeout = 3 * time.Second
	o.Budget.Memory = resource.MustParse("256Mi")
	return o
}

// heapAfterGC is the test process's heap, the controller's included, once
// collected.
func heapAfterGC() uint64 { return controllertest.HeapAfterGC() }

// slug turns an attack's name into an object name.
func slug(name string) string { return strings.ReplaceAll(name, " ", "-") }
