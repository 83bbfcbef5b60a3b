package manager

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/steward-oam/steward/internal/controller/application"
	"github.com/steward-oam/steward/internal/controller/cache"
	"github.com/steward-oam/steward/internal/controller/definition"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/metrics"
	"github.com/steward-oam/steward/internal/sharding"
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
		Cache:                   cache.Options(&opts.InformerSyncPeriod, opts.Sharding.Selector()),
		Controller:              config.Controller{SkipNameValidation: &skip},
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
	opts.Listeners = ownListeners(opts)
	r, err := application.New(mgr, cfg, opts.Options, m)
	if err != nil {
		return nil, err
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := definition.Setup(mgr, r.Renderer, r.Recorder, definition.Options{Revisions: opts.DefinitionRevisions,
		SystemNamespace: opts.SystemDefinitionNS, RevisionLimit: opts.DefinitionRevisionLimit, Sharded: opts.Sharding.Enabled}); err != nil {
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

// ownListeners are the addresses the controller listens on, which the
// egress policy refuses tenants' requests to by default.
func ownListeners(opts Options) []string {
	out := []string{opts.MetricsAddr, opts.HealthAddr, opts.PprofAddr, opts.DashboardAddr}
	if opts.UseWebhook {
		out = append(out, net.JoinHostPort(opts.WebhookHost, strconv.Itoa(opts.WebhookPort)))
	}
	return out
}
