package application

import (
	"context"
	"fmt"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/admission"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/controller/application/apprev"
	"github.com/steward-oam/steward/internal/controller/definition"
	resolve "github.com/steward-oam/steward/internal/definition"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/events"
	"github.com/steward-oam/steward/internal/helm/fetch"
	"github.com/steward-oam/steward/internal/helm/release"
	"github.com/steward-oam/steward/internal/metrics"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/sharding"
	"github.com/steward-oam/steward/internal/steprun"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// New builds the Application reconciler for mgr: its indexes, the cluster
// clients, the event recorder, watch mode's watcher, the evaluator
// processes, the egress policy and the step action workers, each added
// to mgr so that they stop with it. SetupWithManager registers it.
func New(mgr manager.Manager, cfg *rest.Config, opts Options, m *metrics.Metrics) (*Reconciler, error) {
	direct, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	gvks, err := ParseGVKs(opts.CachedGVKs)
	if err != nil {
		return nil, err
	}
	// Each pass lists its Application's trackers and rescue copies from
	// the cache: through this index that costs its own, not the whole
	// fleet's.
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1beta1.ResourceTracker{}, tracker.IndexApp, tracker.AppIndex); err != nil {
		return nil, fmt.Errorf("indexing resource trackers: %w", err)
	}
	if opts.DefinitionRevisions {
		// Who pins a revision, and which autoUpdate Applications use a
		// definition, are read through these: the cost is theirs, not
		// the fleet's.
		for key, fn := range map[string]client.IndexerFunc{definition.IndexPinnedRevisions: definition.PinnedRevisionKeys, definition.IndexAutoUpdate: definition.AutoUpdateKeys} {
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
	// Timer mode keeps the same record, for metadata-only reads, and runs
	// no informer.
	wopts := watch.Options{Clusters: clusters, Metrics: m, Timer: opts.DriftDetection != watch.ModeWatch}
	if !wopts.Timer {
		wopts.Supervise, wopts.FullReadPeriod = opts.watchSupervise, opts.WatchFullReadPeriod
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
	}
	watcher := watch.New(wopts)
	if err := mgr.Add(watcher); err != nil {
		return nil, err
	}
	if opts.onWatcher != nil {
		opts.onWatcher(watcher)
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
	policy, err := egress.New(egress.Options{Allow: opts.EgressAllow, Deny: opts.EgressDeny, Listeners: opts.Listeners})
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
	return &Reconciler{
		Watch:    watcher,
		Client:   mgr.GetClient(),
		Mapper:   mgr.GetRESTMapper(),
		Clusters: clusters,
		Registry: &registry,
		Trackers: &tracker.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Indexed: true, Shard: opts.Sharding.Label(),
			Compression: v1beta1.CompressionType(opts.TrackerCompression)},
		Revisions: &apprev.Keeper{On: opts.ApplicationRevisions, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Limit: opts.RevisionLimit,
			Resolver: resolve.Resolver{Reader: mgr.GetClient(), SystemNamespace: opts.SystemDefinitionNS, NoRevisions: !opts.DefinitionRevisions}},
		Renderer:      renderer,
		StepProviders: provider.Defaults(provider.HTTPOptions{Egress: policy}),
		StepJobs:      stepJobs,
		stepDone:      stepDone,
		Charts: &release.Provider{Fetcher: fetch.New(fetch.Options{
			MaxCacheBytes: opts.HelmCacheBytes, Timeout: opts.HelmFetchTimeout, Observe: m.ChartCache,
			DialContext: policy.DialContext}), Wait: 2 * time.Second},
		Metrics:        m,
		Recorder:       recorder,
		ClusterVersion: delivery.ClusterVersion(cfg),
		Options:        opts,
		hooks:          opts.testHooks,
	}, nil
}

// appRateLimiter backs off failed Applications from one second to five
// minutes, so that a broken Application never hot-loops.
func appRateLimiter() workqueue.TypedRateLimiter[ctrl.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](time.Second, 5*time.Minute)
}

// AdmissionChecker returns the admission checks with what this reconciler
// renders with: the same definition resolver, renderer, placements and
// context, so that what admission refuses is what a pass would fail on.
func (r *Reconciler) AdmissionChecker() *admission.Checker {
	return &admission.Checker{
		Resolver: r.resolver(),
		Renderer: r.Renderer,
		Placements: func(ctx context.Context, app *v1beta1.Application) ([]placement.Step, error) {
			return r.placements(ctx, app, false)
		},
		Context: func(app *v1beta1.Application) render.AppContext {
			// The context the controller renders the version with.
			gen := max(app.Generation, 1)
			return render.AppContext{AppRevision: delivery.RevisionName(app, gen), AppRevisionNum: gen,
				PublishVersion: tracker.VersionOf(app).PublishVersion, ClusterVersion: r.ClusterVersion, DeferPostDispatch: true}
		},
	}
}
