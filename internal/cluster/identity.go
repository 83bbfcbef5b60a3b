package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/steward-oam/steward/api/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Identity is the ServiceAccount the requests made for an Application
// impersonate. The zero Identity is Steward's own.
type Identity struct {
	// Namespace of the ServiceAccount: the Application's namespace.
	Namespace string
	// Name of the ServiceAccount.
	Name string
}

// IsZero reports Steward's own identity: nothing is impersonated.
func (id Identity) IsZero() bool { return id.Name == "" }

// UserName is the Kubernetes user name of the ServiceAccount, the one its
// tokens authenticate as and RBAC bindings name.
func (id Identity) UserName() string {
	return "system:serviceaccount:" + id.Namespace + ":" + id.Name
}

// String names the identity in conditions and events.
func (id Identity) String() string {
	if id.IsZero() {
		return "steward's own identity"
	}
	return fmt.Sprintf("ServiceAccount %s/%s", id.Namespace, id.Name)
}

// Validate reports a name no ServiceAccount can have.
func (id Identity) Validate() error {
	if id.IsZero() {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(id.Name); len(errs) > 0 {
		return fmt.Errorf("service account name %q: %s", id.Name, strings.Join(errs, "; "))
	}
	return nil
}

// defaultIdentityClients bounds the identity clients a Manager keeps.
const defaultIdentityClients = 256

// As returns the clients of an identity: every request through them, to
// the hub and to every target cluster, impersonates the ServiceAccount, so
// the API server of each cluster authorises it with the ServiceAccount's
// RBAC (the ServiceAccount must exist there, and the cluster's credentials
// must be allowed to impersonate serviceaccounts). The zero identity
// returns the Manager itself.
//
// The clients are cached, per cluster and identity, in an LRU of
// ManagerOptions.IdentityClients entries. Each shares the connections,
// RESTMapper and metrics of its cluster's own client, and one rate limiter
// per cluster with the other identities; it is rebuilt when the cluster's
// credentials change.
func (m *Manager) As(id Identity) Clients {
	if id.IsZero() {
		return m
	}
	return identityClients{m: m, id: id}
}

type identityClients struct {
	m  *Manager
	id Identity
}

// GetClient returns the identity's client of a cluster.
func (c identityClients) GetClient(ctx context.Context, cluster string) (client.Client, error) {
	return c.m.clientAs(ctx, cluster, c.id)
}

// LastProbe is the cluster's, whoever asks.
func (c identityClients) LastProbe(cluster string) (ProbeResult, bool) { return c.m.LastProbe(cluster) }

type identityKey struct {
	cluster string
	id      Identity
}

// identityClient is one cached client and the connection it was built on.
type identityClient struct {
	client client.Client
	// base is the http client of the cluster it wraps: when the cluster's
	// client is rebuilt (new credentials), this one is rebuilt too.
	base *http.Client
}

// base is what an identity client of a cluster is built from.
type base struct {
	config  *rest.Config
	http    *http.Client
	mapper  meta.RESTMapper
	limiter flowcontrol.RateLimiter
}

func (m *Manager) clientAs(ctx context.Context, cluster string, id Identity) (client.Client, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	cluster = v1beta1.ClusterDisplay(cluster)
	b, err := m.baseOf(ctx, cluster)
	if err != nil {
		return nil, err
	}
	key := identityKey{cluster: cluster, id: id}
	if v, ok := m.identities.Get(key); ok && v.(*identityClient).base == b.http {
		return v.(*identityClient).client, nil
	}
	cfg := rest.CopyConfig(b.config)
	imp := rest.ImpersonationConfig{UserName: id.UserName()}
	cfg.Impersonate = imp
	cfg.RateLimiter = b.limiter
	hc := &http.Client{
		Transport: transport.NewImpersonatingRoundTripper(transport.ImpersonationConfig{UserName: imp.UserName}, b.http.Transport),
		Timeout:   b.http.Timeout,
	}
	c, err := client.New(cfg, client.Options{Scheme: m.opts.Scheme, HTTPClient: hc, Mapper: b.mapper})
	if err != nil {
		return nil, fmt.Errorf("cluster %q: building client for %s: %w", cluster, id, err)
	}
	m.identities.Add(key, &identityClient{client: c, base: b.http})
	m.identityGauge.Set(float64(m.identities.Len()))
	return c, nil
}

// baseOf returns the connection of a cluster's own client.
func (m *Manager) baseOf(ctx context.Context, cluster string) (base, error) {
	if v1beta1.IsLocalCluster(cluster) {
		cfg, hc, e, err := m.localTarget()
		if err != nil {
			return base{}, err
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if e.limiter == nil {
			e.limiter = newLimiter(m.hubConfig.QPS, m.hubConfig.Burst)
		}
		return base{config: cfg, http: hc, mapper: m.hub.RESTMapper(), limiter: e.limiter}, nil
	}
	e := m.entry(cluster)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := m.refresh(ctx, cluster, e); err != nil {
		return base{}, err
	}
	if e.client == nil {
		return base{}, fmt.Errorf("cluster %q has no client", cluster)
	}
	if e.limiter == nil {
		e.limiter = newLimiter(m.opts.QPS, m.opts.Burst)
	}
	return base{config: e.config, http: e.http, mapper: e.client.RESTMapper(), limiter: e.limiter}, nil
}

// newLimiter returns the rate limiter client-go would build for qps and
// burst: its defaults for zero, none for a negative qps.
func newLimiter(qps float32, burst int) flowcontrol.RateLimiter {
	if qps < 0 {
		return flowcontrol.NewFakeAlwaysRateLimiter()
	}
	if qps == 0 {
		qps = rest.DefaultQPS
	}
	if burst == 0 {
		burst = rest.DefaultBurst
	}
	return flowcontrol.NewTokenBucketRateLimiter(qps, burst)
}

// newIdentityCache returns the LRU of identity clients and the gauge that
// counts them.
func newIdentityCache(size int, reg prometheus.Registerer) (*lru.Cache, prometheus.Gauge, error) {
	if size <= 0 {
		size = defaultIdentityClients
	}
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "steward_identity_clients",
		Help: "Clients cached for impersonated ServiceAccounts, over all clusters (bounded by the LRU size).",
	})
	if err := reg.Register(gauge); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, nil, fmt.Errorf("registering steward_identity_clients: %w", err)
		}
		existing, ok := are.ExistingCollector.(prometheus.Gauge)
		if !ok {
			return nil, nil, fmt.Errorf("registering steward_identity_clients: %w", err)
		}
		gauge = existing
	}
	return lru.New(size), gauge, nil
}
