package manager

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/steward-oam/steward/internal/controller/application"
	"github.com/steward-oam/steward/internal/sandbox"
)

// Options configure the controller manager: its listeners, leader
// election, webhook and dashboard, and the Application reconciler's
// options (embedded). Flag names and defaults follow KubeVela's vela-core
// where it has the same setting, so operators can carry their command
// lines over.
type Options struct {
	application.Options

	MetricsAddr          string
	HealthAddr           string
	PprofAddr            string
	EnableLeaderElection bool
	LeaderElectionNS     string
	LeaderElectionID     string
	InformerSyncPeriod   time.Duration
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
}

// NewOptions returns the defaults.
func NewOptions() Options {
	return Options{
		Options:                 application.NewOptions(),
		MetricsAddr:             ":8080",
		HealthAddr:              ":9440",
		LeaderElectionID:        "steward-controller-leader",
		InformerSyncPeriod:      10 * time.Hour,
		WebhookPort:             9443,
		WebhookCertDir:          "/k8s-webhook-server/serving-certs",
		WebhookCerts:            WebhookCertsSelf,
		WebhookCertSecret:       "steward-webhook-certs",
		WebhookConfiguration:    "steward",
		WebhookService:          "steward-webhook",
		DefinitionRevisionLimit: 20,
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
	fs.IntVar(&o.RevisionLimit, "application-revision-limit", o.RevisionLimit, "ApplicationRevisions and versioned resource trackers kept per Application as history, besides the live one.")
	fs.BoolVar(&o.ApplicationRevisions, "application-revisions", o.ApplicationRevisions, "Write an ApplicationRevision (<app>-v<N>, compressed) per version, as KubeVela does, so that vela revision list, live-diff, workflow rollback and up --revision work. Off: none is written, and status.latestRevision names the version's tracker as before.")
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

// Validate reports options that cannot work: the reconciler's, then the
// manager's own.
func (o Options) Validate() error {
	if err := o.Options.Validate(); err != nil {
		return err
	}
	if o.DefinitionRevisionLimit < 1 {
		return fmt.Errorf("--definition-revision-limit %d: want at least 1", o.DefinitionRevisionLimit)
	}
	if o.WebhookCerts != WebhookCertsSelf && o.WebhookCerts != WebhookCertsExternal {
		return fmt.Errorf("--webhook-certs %q: want %q or %q", o.WebhookCerts, WebhookCertsSelf, WebhookCertsExternal)
	}
	return nil
}
