package controller

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/chartfetch"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/helmchart"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/steprun"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/events"
	"github.com/steward-oam/steward/internal/metrics"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/sharding"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
)

// NewScheme returns the scheme of the manager: client-go's kinds and OAM.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}

// Run starts the controller manager and blocks until ctx is done.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	mgr, err := NewManager(cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// NewManager builds the manager with every Steward controller registered.
func NewManager(cfg *rest.Config, opts Options) (manager.Manager, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if method, _ := apply.ParseMethod(opts.ApplyMethod); method == apply.ServerSide {
		// The kinds' schemas are parsed once, now, rather than in the
		// first pass that compares an object.
		go apply.LoadSchemas()
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = float32(opts.KubeAPIQPS)
	cfg.Burst = opts.KubeAPIBurst
	m, err := metrics.New(ctrlmetrics.Registry)
	if err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	cfg.Wrap(m.InstrumentTransport)
	skip := opts.SkipNameValidation
	opts.Sharding.LeaseNamespace = leaseNamespace(opts)
	electionID := opts.LeaderElectionID
	if opts.Sharding.Enabled {
		// The replicas of one shard elect a leader among themselves.
		electionID += "-" + opts.Sharding.ShardID
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  NewScheme(),
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.HealthAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.EnableLeaderElection,
		LeaderElectionID:        electionID,
		LeaderElectionNamespace: opts.LeaderElectionNS,
		Cache:                   cacheOptions(&opts.InformerSyncPeriod, opts.Sharding.Selector()),
		Controller:              ctrlConfig(skip),
		WebhookServer:           webhookServer(opts),
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	r, err := newApplicationReconciler(mgr, cfg, opts, m)
	if err != nil {
		return nil, err
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	var keeper *revisionKeeper
	if opts.DefinitionRevisions {
		keeper = &revisionKeeper{client: mgr.GetClient(), apps: mgr.GetClient(), systemNamespace: opts.SystemDefinitionNS,
			limit: opts.DefinitionRevisionLimit, events: r.Recorder}
		if opts.Sharding.Enabled {
			// The cache holds this shard's Applications only: who pins a
			// revision is asked of the API server (only when one would go).
			keeper.apps, keeper.direct = mgr.GetAPIReader(), true
		}
	}
	if err := setupDefinitionReconcilers(mgr, r.Renderer, r.Recorder, keeper); err != nil {
		return nil, err
	}
	if err := setupAdmission(mgr, cfg, opts, r); err != nil {
		return nil, err
	}
	if err := setupSharding(mgr, cfg, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}

// setupSharding adds the shard's Lease heartbeat and, on the master, the
// scheduler. Both run on the elected replica of the shard only.
func setupSharding(mgr manager.Manager, cfg *rest.Config, opts Options) error {
	if !opts.Sharding.Enabled {
		return nil
	}
	direct, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	log := mgr.GetLogger().WithName("sharding")
	identity := os.Getenv("POD_NAME")
	if identity == "" {
		identity, _ = os.Hostname()
	}
	if err := mgr.Add(&sharding.Heartbeat{Client: direct, Options: opts.Sharding, Identity: identity, Log: log}); err != nil {
		return err
	}
	if !opts.Sharding.IsMaster() {
		return nil
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating metadata client: %w", err)
	}
	return mgr.Add(&sharding.Scheduler{Client: direct, Metadata: meta, Options: opts.Sharding, Log: log})
}

// leaseNamespace is where the shards' Leases live: the flag, else the
// leader election namespace, else the pod's, else the cluster secrets'.
func leaseNamespace(opts Options) string {
	for _, ns := range []string{opts.Sharding.LeaseNamespace, opts.LeaderElectionNS, os.Getenv("POD_NAMESPACE")} {
		if ns != "" {
			return ns
		}
	}
	return opts.ClusterSecretNS
}

func newApplicationReconciler(mgr manager.Manager, cfg *rest.Config, opts Options, m *metrics.Metrics) (*ApplicationReconciler, error) {
	direct, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	gvks, err := ParseGVKs(opts.CachedGVKs)
	if err != nil {
		return nil, err
	}
	// Each pass lists its Application's trackers from the cache: through
	// these indexes that costs its own trackers, not the whole fleet's.
	for key, fn := range map[string]client.IndexerFunc{tracker.IndexApp: tracker.AppIndex, tracker.IndexRescueOf: tracker.RescueOfIndex} {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1beta1.ResourceTracker{}, key, fn); err != nil {
			return nil, fmt.Errorf("indexing resource trackers: %w", err)
		}
	}
	if opts.DefinitionRevisions {
		// Who pins a revision, and which autoUpdate Applications use a
		// definition, are read through these: the cost is theirs, not
		// the fleet's.
		for key, fn := range map[string]client.IndexerFunc{indexPinnedRevisions: pinnedRevisionKeys, indexAutoUpdate: autoUpdateKeys} {
			if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1beta1.Application{}, key, fn); err != nil {
				return nil, fmt.Errorf("indexing applications: %w", err)
			}
		}
	}
	clusters, err := cluster.NewManager(cfg, cluster.NewManagedClient(direct, mgr.GetCache(), gvks), cluster.ManagerOptions{
		Namespace: opts.ClusterSecretNS,
		QPS:       float32(opts.KubeAPIQPS),
		Burst:     opts.KubeAPIBurst,
		Scheme:    mgr.GetScheme(),
		Secrets:   direct, // never an informer on Secrets
		// Requests to target clusters count in steward_api_requests_total too.
		WrapTransport:   m.InstrumentTransport,
		IdentityClients: opts.IdentityClients,
	})
	if err != nil {
		return nil, fmt.Errorf("creating cluster clients: %w", err)
	}
	if err := mgr.Add(clusters); err != nil {
		return nil, err
	}
	// Events are written straight to the API server; the client's REST
	// client for Events has a rate limiter of its own, as every kind's does.
	recorder := events.New(direct, mgr.GetScheme(), "steward", mgr.GetLogger().WithName("events"))
	if err := mgr.Add(recorder); err != nil {
		return nil, err
	}
	registry := clusters.Registry()
	var watcher *watch.Watcher
	if opts.DriftDetection == watch.ModeWatch {
		wopts := watch.Options{Clusters: clusters, Metrics: m, Supervise: opts.watchSupervise, FullReadPeriod: opts.WatchFullReadPeriod}
		if opts.Sharding.Enabled {
			// The objects StateKeep applies carry the shard label
			// (apply.Applier.Shard): the API server sends each replica its
			// own shard's objects only, so a replica's watch stores and
			// event traffic split with the fleet. An object not yet
			// relabelled (an Application that moved in, or one from before
			// sharding) is read by its first pass, which relabels it.
			wopts.Selector = v1beta1.LabelAppName + "," + sharding.LabelScheduledShardID + "=" + opts.Sharding.ShardID
			// Only this shard's Applications are in the cache; the watch
			// may still see an object whose Application moved away before
			// its new shard relabelled it.
			apps := mgr.GetCache()
			wopts.Owns = func(app types.NamespacedName) bool {
				// The typed read goes to the cache's Application informer,
				// label-selected; a metadata read would start another one.
				return apps.Get(context.Background(), app, &v1beta1.Application{}) == nil
			}
		}
		watcher = watch.New(wopts)
		if err := mgr.Add(watcher); err != nil {
			return nil, err
		}
		if opts.onWatcher != nil {
			opts.onWatcher(watcher)
		}
	}
	renderer, pool, err := delivery.NewRenderer(opts.Budget, m, render.WithCacheObserver(m.ObserveRenderCache))
	if err != nil {
		return nil, err
	}
	// The manager stops the evaluators when it stops.
	if err := mgr.Add(pool); err != nil {
		return nil, err
	}
	m.WatchEvaluatorCPU(pool.CPUTime)
	policy, err := egress.New(egress.Options{Allow: opts.EgressAllow, Deny: opts.EgressDeny, Listeners: ownListeners(opts)})
	if err != nil {
		return nil, err
	}
	stepDone := make(chan event.TypedGenericEvent[types.NamespacedName], 1024)
	stepJobs := &steprun.Background{
		Workers: opts.StepActionWorkers, PerNamespace: opts.StepActionWorkersPerNamespace,
		Done: func(app types.NamespacedName) {
			select {
			case stepDone <- event.TypedGenericEvent[types.NamespacedName]{Object: app}:
			default: // full: the step's own retry looks at it again
			}
		},
	}
	return &ApplicationReconciler{
		Watch:    watcher,
		Client:   mgr.GetClient(),
		Mapper:   mgr.GetRESTMapper(),
		Clusters: clusters,
		Registry: &registry,
		Trackers: &tracker.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Indexed: true, Shard: opts.Sharding.Label(),
			Compression: v1beta1.CompressionType(opts.TrackerCompression)},
		Renderer:      renderer,
		StepProviders: provider.Defaults(provider.HTTPOptions{Egress: policy}),
		StepJobs:      stepJobs,
		stepDone:      stepDone,
		Charts: &helmchart.Provider{Fetcher: chartfetch.New(chartfetch.Options{
			MaxCacheBytes: opts.HelmCacheBytes, Timeout: opts.HelmFetchTimeout, Observe: m.ChartCache,
			DialContext: policy.DialContext}), Wait: 2 * time.Second},
		Metrics:        m,
		Recorder:       recorder,
		ClusterVersion: delivery.ClusterVersion(cfg),
		Options:        opts,
		hooks:          opts.testHooks,
	}, nil
}

// ownListeners are the addresses the controller listens on, which the
// egress policy refuses tenants' requests to by default.
func ownListeners(opts Options) []string {
	out := []string{opts.MetricsAddr, opts.HealthAddr, opts.PprofAddr, opts.DashboardAddr}
	if opts.UseWebhook {
		out = append(out, net.JoinHostPort(opts.WebhookHost, strconv.Itoa(opts.WebhookPort)))
	}
	return out
}

// appRateLimiter backs off failed Applications from one second to five
// minutes, so that a broken Application never hot-loops.
func appRateLimiter() workqueue.TypedRateLimiter[ctrl.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](time.Second, 5*time.Minute)
}
