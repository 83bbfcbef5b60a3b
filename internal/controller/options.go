package controller

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/sandbox"
	"github.com/steward-oam/steward/internal/sharding"
	"github.com/steward-oam/steward/internal/steprun"
	"github.com/steward-oam/steward/internal/watch"
)

// Options configure the controller manager. Flag names and defaults follow
// KubeVela's vela-core where it has the same setting, so operators can
// carry their command lines over.
type Options struct {
	MetricsAddr          string
	HealthAddr           string
	PprofAddr            string
	EnableLeaderElection bool
	LeaderElectionNS     string
	LeaderElectionID     string
	ReSyncPeriod         time.Duration
	ReSyncJitter         float64
	ConcurrentReconciles int
	InformerSyncPeriod   time.Duration
	KubeAPIQPS           float64
	KubeAPIBurst         int
	SystemDefinitionNS   string
	RTDeleteOnlyTrigger  bool
	CachedGVKs           []string
	RevisionLimit        int
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
	// DefinitionRevisionLimit is how many revisions of one definition are
	// kept, besides those Applications pin.
	DefinitionRevisionLimit int
	// UseWebhook serves the validating admission webhook.
	UseWebhook bool
	// WebhookHost and WebhookPort are where it listens.
	WebhookHost string
	WebhookPort int
	// WebhookCertDir holds its serving certificate (tls.crt, tls.key).
	WebhookCertDir string
	// WebhookCerts is WebhookCertsSelf or WebhookCertsExternal.
	WebhookCerts string
	// WebhookCertSecret is the Secret, in the controller's namespace, of
	// self-managed certificates.
	WebhookCertSecret string
	// WebhookConfiguration is the ValidatingWebhookConfiguration's name.
	WebhookConfiguration string
	// WebhookService is the Service in front of the webhook, in the
	// controller's namespace: the certificate's name.
	WebhookService string
	// WebhookURL, when set, is how the API server reaches a Steward
	// running outside the cluster: Steward writes the configuration
	// itself, with this URL.
	WebhookURL string
	// DashboardAddr, when set, serves the read-only dashboard there with
	// the controller's identity; empty or "0" does not. The command adds
	// it to the manager (internal/dashboard), which this package does not
	// import.
	DashboardAddr string
	// DashboardAllowRemote lets DashboardAddr be other than loopback.
	DashboardAllowRemote bool
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
	// onWatcher sees the watcher of watch mode, in tests.
	onWatcher func(*watch.Watcher)
	// clusterListTTL overrides cluster.ListTTL in tests.
	clusterListTTL time.Duration
	// SkipNameValidation lets tests start several managers in one process.
	SkipNameValidation bool
}

// NewOptions returns the defaults.
func NewOptions() Options {
	return Options{
		MetricsAddr:                   ":8080",
		HealthAddr:                    ":9440",
		LeaderElectionID:              "steward-controller-leader",
		ReSyncPeriod:                  5 * time.Minute,
		ReSyncJitter:                  0.1,
		ConcurrentReconciles:          4,
		InformerSyncPeriod:            10 * time.Hour,
		KubeAPIQPS:                    50,
		KubeAPIBurst:                  100,
		SystemDefinitionNS:            "vela-system",
		RTDeleteOnlyTrigger:           true,
		RevisionLimit:                 10,
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
		WebhookPort:                   9443,
		WebhookCertDir:                "/k8s-webhook-server/serving-certs",
		WebhookCerts:                  WebhookCertsSelf,
		WebhookCertSecret:             "steward-webhook-certs",
		WebhookConfiguration:          "steward",
		WebhookService:                "steward-webhook",
		DefinitionRevisionLimit:       20,
		Sharding:                      sharding.Defaults(),
		Budget:                        sandbox.DefaultBudget(),
		MaxStepActionResult:           *resource.NewQuantity(provider.DefaultMaxResultBytes, resource.BinarySI),
		MaxStepResult:                 *resource.NewQuantity(steprun.DefaultMaxRunBytes, resource.BinarySI),
		StepActionWorkers:             steprun.DefaultWorkers,
		StepActionWorkersPerNamespace: steprun.DefaultPerNamespace,
	}
}

// BindFlags registers the options as flags.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	fs.StringVar(&o.HealthAddr, "health-addr", o.HealthAddr, "Address the health and readiness probes bind to; \"0\" disables them.")
	fs.StringVar(&o.PprofAddr, "pprof-addr", o.PprofAddr, "Address Go's profiling endpoints (/debug/pprof/) bind to; empty (the default) does not serve them. Bind to a loopback address: they show the process's memory.")
	fs.BoolVar(&o.EnableLeaderElection, "enable-leader-election", o.EnableLeaderElection, "Elect a leader so that only one replica reconciles.")
	fs.StringVar(&o.LeaderElectionNS, "leader-election-namespace", o.LeaderElectionNS, "Namespace of the leader election lease (default: the pod's namespace).")
	fs.DurationVar(&o.ReSyncPeriod, "application-re-sync-period", o.ReSyncPeriod, "How often every Application is re-applied from its trackers (StateKeep). Overridden per app by the app.oam.dev/reconcile-interval annotation.")
	fs.Float64Var(&o.ReSyncJitter, "application-re-sync-jitter", o.ReSyncJitter, "Random spread of the re-sync period, as a fraction (0.1 = ±10%), so that many apps do not requeue at once.")
	fs.IntVar(&o.ConcurrentReconciles, "concurrent-reconciles", o.ConcurrentReconciles, "Applications reconciled in parallel.")
	fs.DurationVar(&o.InformerSyncPeriod, "informer-sync-period", o.InformerSyncPeriod, "Resync period of the informers of Steward's own kinds.")
	fs.Float64Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Client-side rate limit of requests to the API server.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Client-side burst of requests to the API server.")
	fs.StringVar(&o.SystemDefinitionNS, "system-definition-namespace", o.SystemDefinitionNS, "Namespace searched for definitions after the Application's own namespace.")
	fs.BoolVar(&o.RTDeleteOnlyTrigger, "optimize-enable-resource-tracker-delete-only-trigger", o.RTDeleteOnlyTrigger, "Reconcile an Application on changes of its ResourceTrackers only when one is being deleted.")
	fs.StringSliceVar(&o.CachedGVKs, "optimize-cached-gvks", o.CachedGVKs, "Kinds of managed objects read from an informer cache instead of the API server, as Kind.version.group (Deployment.v1.apps, ConfigMap.v1). Each costs memory for every such object in the cluster.")
	fs.IntVar(&o.RevisionLimit, "application-revision-limit", o.RevisionLimit, "Versioned resource trackers kept per Application as history.")
	fs.DurationVar(&o.DeletionTimeout, "application-deletion-timeout", o.DeletionTimeout, "How long a deleting Application waits for objects in unreachable clusters before it gives up on them (an event names what was left behind). Refused deletions (RBAC, admission) are retried without limit.")
	fs.BoolVar(&o.KstatusHealth, "kstatus-health", o.KstatusHealth, "Judge components and traits whose definition has no health policy by kstatus readiness of their built-in objects (Deployments available, Jobs complete, ...) instead of calling them healthy as KubeVela does.")
	fs.IntVar(&o.ClusterConcurrency, "cluster-concurrency", o.ClusterConcurrency, "Clusters one Application is dispatched to, kept and garbage-collected in at the same time.")
	fs.StringVar(&o.ClusterSecretNS, "cluster-secret-namespace", o.ClusterSecretNS, "Namespace of the Secrets that register target clusters (KubeVela's format).")
	fs.DurationVar(&o.UnhealthyRequeueBase, "unhealthy-requeue-base", o.UnhealthyRequeueBase, "First wait before an unhealthy Application is looked at again, to report recovery; it doubles with each unhealthy pass up to the Application's re-sync period (or its app.oam.dev/reconcile-interval). 0 keeps unhealthy Applications on their re-sync period.")
	fs.StringVar(&o.DefaultServiceAccount, "default-service-account", o.DefaultServiceAccount, "ServiceAccount, in each Application's namespace, that Applications without the app.oam.dev/service-account-name annotation act as: every request for their objects impersonates it, in every cluster. Empty (the default) acts as Steward itself.")
	fs.BoolVar(&o.NoCrossNamespaceObjects, "no-cross-namespace-objects", o.NoCrossNamespaceObjects, "Refuse namespaced objects outside the Application's namespace, and cluster-scoped objects of Applications that act as Steward itself (no ServiceAccount).")
	fs.IntVar(&o.IdentityClients, "identity-client-cache-size", o.IdentityClients, "Clients kept for impersonated ServiceAccounts, over all clusters; the least recently used is dropped first.")
	fs.StringVar(&o.DriftDetection, "drift-detection", o.DriftDetection, "How drift is found: \"watch\" runs one metadata-only informer per managed kind and cluster, selected by Steward's ownership label, repairs an object as soon as someone else changes or deletes it, and skips unchanged objects on the re-sync pass; \"timer\" reads every object once per re-sync pass.")
	fs.StringVar(&o.ApplyMethod, "apply-method", o.ApplyMethod, "How objects are written: \"server-side\" applies as field manager steward (the API server records who owns which field; objects up to the API server's size limit); \"client-side\" is KubeVela's three-way patch against the app.oam.dev/last-applied-configuration annotation.")
	fs.Int64Var(&o.HelmCacheBytes, "helm-chart-cache-bytes", o.HelmCacheBytes, "Bytes of Helm chart archives kept in memory, shared by every Application (a chart is kept once, by digest); the least recently used goes first.")
	fs.BoolVar(&o.DefinitionRevisions, "definition-revisions", o.DefinitionRevisions, "Record every change of a definition's spec in a DefinitionRevision (<name>-v<N>), render types that pin one (type: webservice@v2) from it, and render Applications annotated app.oam.dev/autoUpdate: \"true\" again when a definition they use changes. Off: no revisions are written, pinned types are refused, and autoUpdate is not carried (as before).")
	fs.IntVar(&o.DefinitionRevisionLimit, "definition-revision-limit", o.DefinitionRevisionLimit, "Revisions kept per definition; older ones go first, but never one an Application pins or the one holding the current spec.")
	fs.BoolVar(&o.UseWebhook, "use-webhook", o.UseWebhook, "Serve the validating admission webhook: Applications and definitions that can never render are refused at kubectl apply, with the field at fault (docs/admission.md). Its ValidatingWebhookConfiguration has failurePolicy Ignore: a Steward that is down never blocks the cluster.")
	fs.StringVar(&o.WebhookHost, "webhook-host", o.WebhookHost, "Address the webhook listens on (empty: every interface).")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "Port the webhook listens on.")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", o.WebhookCertDir, "Directory of the webhook's serving certificate, tls.crt and tls.key; read again when they change.")
	fs.StringVar(&o.WebhookCerts, "webhook-certs", o.WebhookCerts, "Who issues the webhook's certificate: \"self\" (Steward: a CA and certificate kept in --webhook-cert-secret, rotated before they expire, the CA injected into the configuration's caBundle) or \"external\" (cert-manager or another issuer writes --webhook-cert-dir and injects the caBundle).")
	fs.StringVar(&o.WebhookCertSecret, "webhook-cert-secret", o.WebhookCertSecret, "Secret, in the controller's namespace, holding self-managed webhook certificates.")
	fs.StringVar(&o.WebhookConfiguration, "webhook-configuration", o.WebhookConfiguration, "Name of the ValidatingWebhookConfiguration whose caBundle Steward keeps (self-managed certificates).")
	fs.StringVar(&o.WebhookService, "webhook-service", o.WebhookService, "Service in front of the webhook, in the controller's namespace: the certificate is issued for <service>.<namespace>.svc.")
	fs.StringVar(&o.WebhookURL, "webhook-url", o.WebhookURL, "URL the API server calls the webhook at when Steward runs outside the cluster (https://127.0.0.1:9443): Steward writes the ValidatingWebhookConfiguration itself, and the certificate is issued for the URL's host. steward dev sets it.")
	fs.StringVar(&o.DashboardAddr, "dashboard-addr", o.DashboardAddr, "Address the read-only dashboard serves on with the controller's identity (127.0.0.1:8090, reached with kubectl port-forward); empty or \"0\" turns it off. Whoever reaches it sees every Application the controller sees.")
	fs.BoolVar(&o.DashboardAllowRemote, "dashboard-allow-remote", o.DashboardAllowRemote, "Let --dashboard-addr be other than a loopback address. The dashboard has no authentication of its own.")
	fs.DurationVar(&o.HelmFetchTimeout, "helm-fetch-timeout", o.HelmFetchTimeout, "Longest one Helm chart download may take (a chart's options.timeout, when shorter, bounds its own). Downloads run in the background: a render waits for one at most 2s, then is retried.")
	fs.DurationVar(&o.WatchFullReadPeriod, "watch-full-read-period", o.WatchFullReadPeriod, "In watch mode, how often one re-sync pass of an Application reads every object from the API server even when the watch cache shows it unchanged: a safety net under the watch. 0 never does after the first pass of the process.")
	fs.BoolVar(&o.Sharding.Enabled, "enable-sharding", o.Sharding.Enabled, "Reconcile only the Applications of this replica's shard (--shard-id), as KubeVela does: those labelled controller.core.oam.dev/scheduled-shard-id=<shard-id>, with their resource trackers, through label-selected caches. The master shard also assigns unlabelled Applications to live shards and moves the Applications of a shard that is gone.")
	fs.StringVar(&o.Sharding.ShardID, "shard-id", o.Sharding.ShardID, "This replica's shard when sharding is on; \"master\" assigns Applications to shards.")
	fs.StringSliceVar(&o.Sharding.SchedulableShards, "schedulable-shards", o.Sharding.SchedulableShards, "Shards the master assigns Applications to, among those whose Lease is live; empty means every shard with a live Lease.")
	fs.StringVar(&o.Sharding.LeaseNamespace, "sharding-lease-namespace", o.Sharding.LeaseNamespace, "Namespace of the shards' Leases (steward-shard-<id>); default: --leader-election-namespace, else the pod's namespace (POD_NAMESPACE), else --cluster-secret-namespace.")
	fs.DurationVar(&o.Sharding.LeaseDuration, "sharding-lease-duration", o.Sharding.LeaseDuration, "How long a shard's Lease is valid after each renewal.")
	fs.DurationVar(&o.Sharding.RenewPeriod, "sharding-lease-renew-period", o.Sharding.RenewPeriod, "How often each shard renews its Lease; the master also looks at the Leases this often.")
	fs.DurationVar(&o.Sharding.ReassignGrace, "sharding-reassign-grace", o.Sharding.ReassignGrace, "How long a shard's Lease stays expired before the master moves its Applications to live shards; 0 never moves them.")
	fs.StringVar(&o.TrackerCompression, "resource-tracker-compression", o.TrackerCompression, "How ResourceTrackers store managed resources: \"\" (none), gzip or zstd.")
	fs.StringSliceVar(&o.EgressAllow, "egress-allow", o.EgressAllow, "Addresses Steward may reach on a tenant's behalf (workflow steps' http and email, Helm chart repositories, URLs and OCI registries) although the egress policy refuses them by default: CIDRs (127.0.0.1/32), IPs, host names or *.domains. Loopback, link-local (cloud metadata) and the controller's own listeners are refused unless allowed here.")
	fs.StringSliceVar(&o.EgressDeny, "egress-deny", o.EgressDeny, "Addresses Steward never reaches on a tenant's behalf, whatever --egress-allow says: CIDRs (10.0.0.0/8), IPs, host names or *.domains. Checked on the address actually dialled.")
	fs.Var(sandbox.QuantityValue(&o.MaxStepActionResult), "max-step-action-result-size", "Most one provider action of a workflow step (http.do with its headers, kube.list, config.list, ...) may return, as JSON; past it the step fails with reason ResultTooLarge.")
	fs.Var(sandbox.QuantityValue(&o.MaxStepResult), "max-step-result-size", "Most the results of all provider actions of one run of a workflow step may add up to, as JSON (what each evaluation of the step is given); past it the step fails with reason ResultTooLarge.")
	fs.IntVar(&o.StepActionWorkers, "step-action-workers", o.StepActionWorkers, "Remote provider actions of workflow steps (http.do, email.send) running at once, off the reconcile workers: a slow server holds one of these, never a reconcile worker.")
	fs.IntVar(&o.StepActionWorkersPerNamespace, "step-action-workers-per-namespace", o.StepActionWorkersPerNamespace, "Of --step-action-workers, how many the Applications of one namespace may hold at once.")
	o.Budget.BindFlags(fs)
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
	if o.DefinitionRevisionLimit < 1 {
		return fmt.Errorf("--definition-revision-limit %d: want at least 1", o.DefinitionRevisionLimit)
	}
	if o.WebhookCerts != WebhookCertsSelf && o.WebhookCerts != WebhookCertsExternal {
		return fmt.Errorf("--webhook-certs %q: want %q or %q", o.WebhookCerts, WebhookCertsSelf, WebhookCertsExternal)
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
