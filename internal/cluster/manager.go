package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/steward-oam/steward/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ManagerOptions configure a Manager. Zero values take the defaults noted.
type ManagerOptions struct {
	// Namespace holds the cluster Secrets (default vela-system).
	Namespace string
	// QPS and Burst rate-limit each target cluster's client separately;
	// pass the hub's --kube-api-qps and --kube-api-burst.
	QPS   float32
	Burst int
	// DialTimeout bounds opening a connection to a cluster (default 5s), so
	// an unreachable cluster fails fast.
	DialTimeout time.Duration
	// RequestTimeout bounds every request to a target cluster (default
	// 15s), so a cluster that accepts connections but hangs fails too.
	RequestTimeout time.Duration
	// ProbeTimeout bounds one health probe (default 5s).
	ProbeTimeout time.Duration
	// ProbeInterval is how often Start probes every cluster (default 30s).
	ProbeInterval time.Duration
	// RecheckInterval is how long a cluster's client is used before its
	// Secret's resourceVersion is read again (default 10s).
	RecheckInterval time.Duration
	// Scheme of the target clusters' clients (default client-go's).
	Scheme *runtime.Scheme
	// Secrets reads cluster Secrets on the hub; it must not be backed by
	// an informer. Default: a direct client built from the hub config.
	Secrets client.Reader
	// Registerer receives steward_cluster_connected (default
	// controller-runtime's metrics.Registry).
	Registerer prometheus.Registerer
	// UserAgent of requests to target clusters.
	UserAgent string
	// WrapTransport wraps the transport of every target cluster's client,
	// for example to count requests in metrics.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// IdentityClients bounds the clients kept for impersonated
	// ServiceAccounts (see As), over all clusters (default 256); the least
	// recently used is dropped first.
	IdentityClients int
}

func (o *ManagerOptions) setDefaults() {
	durations := []struct {
		d   *time.Duration
		def time.Duration
	}{
		{&o.DialTimeout, 5 * time.Second},
		{&o.RequestTimeout, 15 * time.Second},
		{&o.ProbeTimeout, 5 * time.Second},
		{&o.ProbeInterval, 30 * time.Second},
		{&o.RecheckInterval, 10 * time.Second},
	}
	for _, x := range durations {
		if *x.d <= 0 {
			*x.d = x.def
		}
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Scheme == nil {
		o.Scheme = clientgoscheme.Scheme
	}
	if o.Registerer == nil {
		o.Registerer = ctrlmetrics.Registry
	}
	if o.UserAgent == "" {
		o.UserAgent = "steward"
	}
}

// Manager serves the clients of every registered cluster: the hub client
// for local, and for each other cluster a client built from its Secret,
// cached and rebuilt when the Secret changes. Clients read straight from
// each API server; nothing is watched. Manager implements Clients, and
// manager.Runnable for periodic probes.
type Manager struct {
	hub       client.Client
	hubConfig *rest.Config
	registry  Registry
	opts      ManagerOptions
	connected *prometheus.GaugeVec
	now       func() time.Time

	// identities caches the clients of impersonated ServiceAccounts.
	identities    *lru.Cache
	identityGauge prometheus.Gauge

	mu      sync.Mutex
	entries map[string]*entry
	local   *entry
}

var _ Clients = (*Manager)(nil)

// entry is one cluster's cached connection. Its mutex serialises rebuilds
// of that cluster only, so a slow Secret read never blocks other clusters.
type entry struct {
	mu sync.Mutex
	// resourceVersion of the Secret the client was built from.
	resourceVersion string
	checked         time.Time
	// buildErr is why the Secret gave no client, kept until the next check.
	buildErr error
	client   client.Client
	config   *rest.Config
	http     *http.Client
	last     ProbeResult
	// limiter is shared by the identity clients of the cluster (see As).
	limiter flowcontrol.RateLimiter
}

// ProbeResult is the outcome of the last health probe of a cluster.
type ProbeResult struct {
	// Err is nil when the cluster answered.
	Err error
	At  time.Time
}

// NewManager returns a Manager that serves hub for local (and ""), and
// reaches the other clusters with the Secrets in opts.Namespace.
// hubConfig is used to probe the hub and, unless opts.Secrets is set, to
// read the Secrets.
func NewManager(hubConfig *rest.Config, hub client.Client, opts ManagerOptions) (*Manager, error) {
	opts.setDefaults()
	if opts.Secrets == nil {
		direct, err := client.New(hubConfig, client.Options{Scheme: clientgoscheme.Scheme})
		if err != nil {
			return nil, fmt.Errorf("creating secret reader: %w", err)
		}
		opts.Secrets = direct
	}
	gauge, err := registerConnected(opts.Registerer)
	if err != nil {
		return nil, err
	}
	identities, identityGauge, err := newIdentityCache(opts.IdentityClients, opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &Manager{
		hub:           hub,
		hubConfig:     hubConfig,
		registry:      Registry{Reader: opts.Secrets, Namespace: opts.Namespace},
		opts:          opts,
		connected:     gauge,
		now:           time.Now,
		entries:       map[string]*entry{},
		identities:    identities,
		identityGauge: identityGauge,
	}, nil
}

// Registry returns the registry the Manager reads clusters from.
func (m *Manager) Registry() Registry { return m.registry }

// GetClient returns the client of a cluster. It does not contact the
// cluster, so it is cheap; requests through the client fail within
// DialTimeout or RequestTimeout when the cluster is unreachable. The error
// wraps ErrNotRegistered when the cluster has no Secret.
func (m *Manager) GetClient(ctx context.Context, cluster string) (client.Client, error) {
	if v1beta1.IsLocalCluster(cluster) {
		return m.hub, nil
	}
	e := m.entry(cluster)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := m.refresh(ctx, cluster, e); err != nil {
		return nil, err
	}
	if e.client == nil {
		return nil, fmt.Errorf("cluster %q has no client", cluster)
	}
	return e.client, nil
}

// entry returns the cache entry of a cluster, creating it.
func (m *Manager) entry(cluster string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[cluster]
	if !ok {
		e = &entry{}
		m.entries[cluster] = e
	}
	return e
}

// refresh makes e current with the cluster's Secret, reading the Secret at
// most once per RecheckInterval. Called with e.mu held.
func (m *Manager) refresh(ctx context.Context, cluster string, e *entry) error {
	if !e.checked.IsZero() && m.now().Sub(e.checked) < m.opts.RecheckInterval {
		return e.buildErr
	}
	s, err := m.registry.Secret(ctx, cluster)
	switch {
	case errors.Is(err, ErrNotRegistered):
		// Detached: callers already waiting on this entry see the error;
		// later ones start from a fresh entry.
		e.reset()
		e.buildErr, e.checked = err, m.now()
		m.forget(cluster, e)
		return err
	case err != nil && e.client != nil:
		// The hub did not answer: keep using what the Secret last said.
		return nil
	case err != nil:
		return err
	}
	e.checked = m.now()
	if s.ResourceVersion == e.resourceVersion {
		return e.buildErr
	}
	e.reset()
	e.resourceVersion = s.ResourceVersion
	e.buildErr = m.build(cluster, s.DeepCopy(), e)
	if e.buildErr != nil {
		m.connected.WithLabelValues(cluster).Set(0)
	}
	return e.buildErr
}

// build makes the client of a cluster from its Secret into e.
func (m *Manager) build(cluster string, s *corev1.Secret, e *entry) error {
	cred, err := CredentialsFromSecret(s)
	if err != nil {
		return err
	}
	cfg, err := cred.RESTConfig()
	if err != nil {
		return fmt.Errorf("cluster %q: %w", cluster, err)
	}
	cfg = m.withLimits(cfg)
	if m.opts.WrapTransport != nil {
		cfg.Wrap(m.opts.WrapTransport)
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("cluster %q: building http client: %w", cluster, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: m.opts.Scheme, HTTPClient: httpClient})
	if err != nil {
		return fmt.Errorf("cluster %q: building client: %w", cluster, err)
	}
	e.client, e.config, e.http = c, cfg, httpClient
	return nil
}

// withLimits adds the hub's rate limits and the fail-fast timeouts.
func (m *Manager) withLimits(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = m.opts.QPS, m.opts.Burst
	cfg.Timeout = m.opts.RequestTimeout
	cfg.Dial = (&net.Dialer{Timeout: m.opts.DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	cfg.UserAgent = m.opts.UserAgent
	return cfg
}

// reset drops the connection of an entry and closes its idle connections.
func (e *entry) reset() {
	if e.http != nil {
		e.http.CloseIdleConnections()
	}
	e.client, e.config, e.http, e.buildErr, e.resourceVersion, e.limiter = nil, nil, nil, nil, "", nil
}

// forget removes a detached cluster: its cache entry and its metric series.
func (m *Manager) forget(cluster string, e *entry) {
	m.mu.Lock()
	if m.entries[cluster] == e {
		delete(m.entries, cluster)
	}
	m.mu.Unlock()
	m.connected.DeleteLabelValues(cluster)
}

// Connection is how to list and watch one cluster's objects.
type Connection struct {
	// Config reaches the cluster as Steward, with the cluster's rate
	// limits and no overall request timeout: watches are long requests.
	Config *rest.Config
	// Mapper maps the cluster's kinds to resources (cached discovery).
	Mapper meta.RESTMapper
	// Version changes whenever the cluster's credentials do, so that
	// whoever built something from Config knows to build it again.
	Version string
}

// Connection returns how to list and watch a cluster. The error wraps
// ErrNotRegistered when the cluster has no Secret (it was detached).
func (m *Manager) Connection(ctx context.Context, cluster string) (Connection, error) {
	if v1beta1.IsLocalCluster(cluster) {
		cfg := rest.CopyConfig(m.hubConfig)
		cfg.Timeout = 0
		return Connection{Config: cfg, Mapper: m.hub.RESTMapper(), Version: "hub"}, nil
	}
	e := m.entry(cluster)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := m.refresh(ctx, cluster, e); err != nil {
		return Connection{}, err
	}
	if e.client == nil {
		return Connection{}, fmt.Errorf("cluster %q has no client", cluster)
	}
	cfg := rest.CopyConfig(e.config)
	cfg.Timeout = 0
	return Connection{Config: cfg, Mapper: e.client.RESTMapper(), Version: e.resourceVersion}, nil
}

// LastProbe returns the last probe of a cluster, if any: the controller can
// skip a cluster known to be down instead of waiting for timeouts.
func (m *Manager) LastProbe(cluster string) (ProbeResult, bool) {
	e := m.existing(cluster)
	if e == nil {
		return ProbeResult{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last, !e.last.At.IsZero()
}

func (m *Manager) existing(cluster string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v1beta1.IsLocalCluster(cluster) {
		return m.local
	}
	return m.entries[cluster]
}

func registerConnected(reg prometheus.Registerer) (*prometheus.GaugeVec, error) {
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "steward_cluster_connected",
		Help: "1 when the last probe of the cluster's API server succeeded, 0 when it failed.",
	}, []string{"cluster"})
	if err := reg.Register(gauge); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.GaugeVec); ok {
				return existing, nil
			}
		}
		return nil, fmt.Errorf("registering steward_cluster_connected: %w", err)
	}
	return gauge, nil
}
