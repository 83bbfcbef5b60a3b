package application

import (
	"fmt"
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/sandbox"
	"github.com/steward-oam/steward/internal/sharding"
	"github.com/steward-oam/steward/internal/steprun"
	"github.com/steward-oam/steward/internal/watch"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Options configure the Application reconciler. The manager's flags set
// them (internal/controller/manager binds every flag); the fields without
// a flag are set in code or, unexported, by tests only.
type Options struct {
	ReSyncPeriod         time.Duration
	ReSyncJitter         float64
	ConcurrentReconciles int
	KubeAPIQPS           float64
	KubeAPIBurst         int
	SystemDefinitionNS   string
	RTDeleteOnlyTrigger  bool
	CachedGVKs           []string
	RevisionLimit        int
	// ApplicationRevisions writes an ApplicationRevision per version (package apprev).
	ApplicationRevisions bool
	TrackerCompression   string
	MinReconcileInterval time.Duration
	DeletionTimeout      time.Duration
	KstatusHealth        bool
	ClusterConcurrency   int
	ClusterSecretNS      string
	// DefaultServiceAccount is impersonated, in each Application's
	// namespace, by Applications without app.oam.dev/service-account-name.
	DefaultServiceAccount string
	// NoCrossNamespaceObjects refuses namespaced objects outside the
	// Application's namespace, and cluster-scoped objects of Applications
	// that act as Steward itself.
	NoCrossNamespaceObjects bool
	// IdentityClients bounds the cached clients of impersonated
	// ServiceAccounts.
	IdentityClients int
	// DriftDetection is watch.ModeWatch or watch.ModeTimer.
	DriftDetection string
	// ApplyMethod is how objects are written: apply.ServerSide or
	// apply.ClientSide.
	ApplyMethod string
	// HelmCacheBytes bounds the Helm chart archives kept in memory; the
	// least recently used goes first.
	HelmCacheBytes int64
	// HelmFetchTimeout bounds one chart download (a chart's
	// options.timeout, when shorter, bounds its own).
	HelmFetchTimeout time.Duration
	// DefinitionRevisions records each definition spec in a
	// DefinitionRevision, renders pinned types (webservice@v2) from them,
	// and renders autoUpdate Applications again when a definition changes.
	DefinitionRevisions bool
	// WatchFullReadPeriod is how often watch mode reads every object of
	// an Application in one pass, trusting no cache; 0 never does.
	WatchFullReadPeriod time.Duration
	// UnhealthyRequeueBase is the first wait before an unhealthy
	// Application is looked at again; it doubles with each unhealthy pass
	// up to the Application's re-sync period. 0 turns the back-off off.
	UnhealthyRequeueBase time.Duration
	// Sharding spreads Applications over replicas (--enable-sharding).
	Sharding sharding.Options
	// Budget bounds every CUE evaluation (in child processes) and what one
	// Application may render.
	Budget sandbox.Budget
	// EgressAllow and EgressDeny are the egress policy's rules (CIDRs,
	// host names, *.domains) for everything Steward sends on a tenant's
	// behalf: workflow steps' http and email, Helm chart sources.
	EgressAllow []string
	EgressDeny  []string
	// MaxStepActionResult bounds what one provider action of a workflow
	// step returns, and MaxStepResult all actions of one run of a step
	// together, as JSON.
	MaxStepActionResult resource.Quantity
	MaxStepResult       resource.Quantity
	// StepActionWorkers bounds the remote step actions (http, email)
	// running at once, off the reconcile workers, and
	// StepActionWorkersPerNamespace those of one namespace.
	StepActionWorkers             int
	StepActionWorkersPerNamespace int
	// testHooks interrupt passes in tests; never set in production.
	testHooks hooks
	// onRequeue sees the requeue of every pass that ran to its end, in
	// tests; nil in production.
	onRequeue func(app types.NamespacedName, after time.Duration)
	// watchSupervise overrides how often watch mode checks its informers'
	// clusters, in tests.
	watchSupervise time.Duration
	// onWatcher sees the watcher (of either mode), in tests.
	onWatcher func(*watch.Watcher)
	// clusterListTTL overrides cluster.ListTTL in tests.
	clusterListTTL time.Duration
	// SkipNameValidation lets tests start several managers in one process.
	SkipNameValidation bool
	// Listeners are the addresses the controller itself listens on
	// (metrics, health, pprof, dashboard, webhook), which the egress
	// policy refuses tenants' requests to by default; the manager sets
	// them.
	Listeners []string
}

// NewOptions returns the reconciler's defaults.
func NewOptions() Options {
	return Options{
		ReSyncPeriod:                  5 * time.Minute,
		ReSyncJitter:                  0.1,
		ConcurrentReconciles:          4,
		KubeAPIQPS:                    50,
		KubeAPIBurst:                  100,
		SystemDefinitionNS:            "vela-system",
		RTDeleteOnlyTrigger:           true,
		RevisionLimit:                 10,
		ApplicationRevisions:          true,
		TrackerCompression:            string(v1beta1.CompressionZstd),
		MinReconcileInterval:          10 * time.Second,
		DeletionTimeout:               10 * time.Minute,
		ClusterConcurrency:            8,
		ClusterSecretNS:               "vela-system",
		UnhealthyRequeueBase:          5 * time.Second,
		IdentityClients:               256,
		DriftDetection:                watch.ModeWatch,
		ApplyMethod:                   string(apply.ServerSide),
		WatchFullReadPeriod:           time.Hour,
		HelmCacheBytes:                64 << 20,
		HelmFetchTimeout:              time.Minute,
		DefinitionRevisions:           true,
		Sharding:                      sharding.Defaults(),
		Budget:                        sandbox.DefaultBudget(),
		MaxStepActionResult:           *resource.NewQuantity(provider.DefaultMaxResultBytes, resource.BinarySI),
		MaxStepResult:                 *resource.NewQuantity(steprun.DefaultMaxRunBytes, resource.BinarySI),
		StepActionWorkers:             steprun.DefaultWorkers,
		StepActionWorkersPerNamespace: steprun.DefaultPerNamespace,
	}
}

// ParseGVKs parses Kind.version.group values ("Deployment.v1.apps",
// "ConfigMap.v1" for the core group).
func ParseGVKs(values []string) ([]schema.GroupVersionKind, error) {
	out := make([]schema.GroupVersionKind, 0, len(values))
	for _, v := range values {
		parts := strings.SplitN(v, ".", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("--optimize-cached-gvks %q: want Kind.version.group, for example Deployment.v1.apps", v)
		}
		gvk := schema.GroupVersionKind{Kind: parts[0], Version: parts[1]}
		if len(parts) == 3 {
			gvk.Group = parts[2]
		}
		out = append(out, gvk)
	}
	return out, nil
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.ReSyncPeriod < o.MinReconcileInterval {
		return fmt.Errorf("--application-re-sync-period %s is under the minimum %s", o.ReSyncPeriod, o.MinReconcileInterval)
	}
	if o.ReSyncJitter < 0 || o.ReSyncJitter >= 1 {
		return fmt.Errorf("--application-re-sync-jitter %v must be in [0, 1)", o.ReSyncJitter)
	}
	if o.UnhealthyRequeueBase < 0 {
		return fmt.Errorf("--unhealthy-requeue-base %s must not be negative", o.UnhealthyRequeueBase)
	}
	if o.DefaultServiceAccount != "" {
		if err := (cluster.Identity{Name: o.DefaultServiceAccount}).Validate(); err != nil {
			return fmt.Errorf("--default-service-account: %w", err)
		}
	}
	if o.HelmCacheBytes < 1<<20 {
		return fmt.Errorf("--helm-chart-cache-bytes %d: want at least 1 MiB", o.HelmCacheBytes)
	}
	if o.HelmFetchTimeout <= 0 {
		return fmt.Errorf("--helm-fetch-timeout %s: want more than 0", o.HelmFetchTimeout)
	}
	if o.WatchFullReadPeriod < 0 {
		return fmt.Errorf("--watch-full-read-period %s: want 0 or more", o.WatchFullReadPeriod)
	}
	if _, err := apply.ParseMethod(o.ApplyMethod); err != nil {
		return fmt.Errorf("--apply-method: %w", err)
	}
	if o.DriftDetection != watch.ModeWatch && o.DriftDetection != watch.ModeTimer {
		return fmt.Errorf("--drift-detection %q: want watch or timer", o.DriftDetection)
	}
	if o.ConcurrentReconciles < 1 {
		return fmt.Errorf("--concurrent-reconciles must be at least 1")
	}
	switch v1beta1.CompressionType(o.TrackerCompression) {
	case v1beta1.CompressionNone, v1beta1.CompressionGzip, v1beta1.CompressionZstd:
	default:
		return fmt.Errorf("--resource-tracker-compression %q: want \"\", gzip or zstd", o.TrackerCompression)
	}
	if err := o.Sharding.Validate(); err != nil {
		return err
	}
	if o.MaxStepActionResult.Value() < 1<<10 {
		return fmt.Errorf("--max-step-action-result-size %s: want at least 1Ki", o.MaxStepActionResult.String())
	}
	if o.MaxStepResult.Value() < o.MaxStepActionResult.Value() {
		return fmt.Errorf("--max-step-result-size %s: want at least --max-step-action-result-size (%s)", o.MaxStepResult.String(), o.MaxStepActionResult.String())
	}
	if o.StepActionWorkers < 1 || o.StepActionWorkersPerNamespace < 1 {
		return fmt.Errorf("--step-action-workers and --step-action-workers-per-namespace: want at least 1")
	}
	if _, err := egress.New(egress.Options{Allow: o.EgressAllow, Deny: o.EgressDeny}); err != nil {
		return err
	}
	if err := o.Budget.Validate(); err != nil {
		return err
	}
	_, err := ParseGVKs(o.CachedGVKs)
	return err
}
