package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// probeConcurrency bounds the clusters probed at once by ProbeAll.
const probeConcurrency = 8

// Probe asks a cluster's API server whether it is ready (GET /readyz, which
// every authenticated user may read) within ProbeTimeout, and records the
// result in steward_cluster_connected and LastProbe.
func (m *Manager) Probe(ctx context.Context, cluster string) error {
	cfg, httpClient, e, err := m.probeTarget(ctx, cluster)
	if err == nil {
		err = probe(ctx, cfg, httpClient, m.opts.ProbeTimeout)
		if err != nil {
			err = fmt.Errorf("cluster %q at %s: %w", cluster, cfg.Host, err)
		}
	}
	if errors.Is(err, ErrNotRegistered) {
		return err
	}
	m.record(ctx, cluster, e, err)
	return err
}

// probeTarget returns how to reach a cluster, building its client first.
func (m *Manager) probeTarget(ctx context.Context, cluster string) (*rest.Config, *http.Client, *entry, error) {
	if v1beta1.IsLocalCluster(cluster) {
		return m.localTarget()
	}
	e := m.entry(cluster)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := m.refresh(ctx, cluster, e); err != nil {
		return nil, nil, e, err
	}
	return e.config, e.http, e, nil
}

func (m *Manager) localTarget() (*rest.Config, *http.Client, *entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.local == nil {
		cfg := m.withLimits(m.hubConfig)
		cfg.QPS, cfg.Burst = m.hubConfig.QPS, m.hubConfig.Burst
		httpClient, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("cluster %q: building http client: %w", v1beta1.ClusterLocal, err)
		}
		m.local = &entry{config: cfg, http: httpClient}
	}
	return m.local.config, m.local.http, m.local, nil
}

// record stores a probe result and logs when the cluster's state changed.
func (m *Manager) record(ctx context.Context, cluster string, e *entry, err error) {
	name := cluster
	name = v1beta1.ClusterDisplay(name)
	value := 1.0
	if err != nil {
		value = 0
	}
	m.connected.WithLabelValues(name).Set(value)
	e.mu.Lock()
	before := e.last
	e.last = ProbeResult{Err: err, At: m.now()}
	e.mu.Unlock()
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", name)
	switch {
	case err != nil && (before.At.IsZero() || before.Err == nil):
		log.Info("Cluster is unreachable", "error", err.Error())
	case err == nil && before.Err != nil:
		log.Info("Cluster is reachable again")
	}
}

// ProbeAll probes local and every registered cluster concurrently (each
// within ProbeTimeout, at most eight at once), and forgets the clusters
// whose Secret is gone, deleting their metric series. It returns each
// cluster's probe error, nil for the healthy ones.
func (m *Manager) ProbeAll(ctx context.Context) (map[string]error, error) {
	clusters, err := m.registry.List(ctx)
	if err != nil {
		return nil, err
	}
	m.forgetAllBut(clusters)
	results := make(map[string]error, len(clusters))
	var mu sync.Mutex
	var eg errgroup.Group
	eg.SetLimit(probeConcurrency)
	for _, c := range clusters {
		eg.Go(func() error {
			err := m.Probe(ctx, c.Name)
			mu.Lock()
			results[c.Name] = err
			mu.Unlock()
			return nil
		})
	}
	_ = eg.Wait() // probe errors are results, not failures of ProbeAll
	return results, nil
}

// forgetAllBut forgets the cached clusters that are not in clusters.
func (m *Manager) forgetAllBut(clusters []Cluster) {
	keep := make(map[string]bool, len(clusters))
	for _, c := range clusters {
		keep[c.Name] = true
	}
	m.mu.Lock()
	var gone []string
	for name := range m.entries {
		if !keep[name] {
			gone = append(gone, name)
		}
	}
	m.mu.Unlock()
	sort.Strings(gone)
	for _, name := range gone {
		if e := m.existing(name); e != nil {
			e.mu.Lock()
			e.reset()
			e.mu.Unlock()
			m.forget(name, e)
		}
	}
}

// Start probes every cluster each ProbeInterval until ctx is done, so that
// steward_cluster_connected and LastProbe stay current and detached
// clusters are forgotten. It makes Manager a manager.Runnable.
func (m *Manager) Start(ctx context.Context) error {
	ticker := time.NewTicker(m.opts.ProbeInterval)
	defer ticker.Stop()
	for {
		if _, err := m.ProbeAll(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list clusters to probe")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// NeedLeaderElection is false: every replica keeps its own clients and
// metrics current.
func (m *Manager) NeedLeaderElection() bool { return false }

// ProbeConfig probes the API server of cfg like Manager.Probe, for a
// cluster that is not registered yet (steward cluster join).
func ProbeConfig(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = (&net.Dialer{Timeout: timeout}).DialContext
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("building http client: %w", err)
	}
	defer httpClient.CloseIdleConnections()
	return probe(ctx, cfg, httpClient, timeout)
}

func probe(ctx context.Context, cfg *rest.Config, httpClient *http.Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg = rest.CopyConfig(cfg)
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("building probe client: %w", err)
	}
	if err := rc.Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		return fmt.Errorf("probing /readyz: %w", err)
	}
	return nil
}

// IsUnreachable reports whether err says the cluster could not be reached
// (connection refused or reset, timeout, TLS failure, server unavailable)
// rather than that the request itself was wrong. The controller stops
// sending a pass's remaining requests to such a cluster.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}
