package readmodel

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
)

// Clients reaches the clusters an Application is delivered to; a
// *cluster.Manager is one.
type Clients interface {
	GetClient(ctx context.Context, cluster string) (client.Client, error)
}

// NewClusterManager reaches target clusters the way the controller does:
// through a cluster.Manager over the cluster Secrets on the hub, in
// namespace (default vela-system). Its metrics go to a registry of its
// own.
func NewClusterManager(hubConfig *rest.Config, hub client.Client, namespace string) (*cluster.Manager, error) {
	return cluster.NewManager(hubConfig, hub, cluster.ManagerOptions{
		Namespace:  namespaceOr(namespace),
		Secrets:    hub,
		Registerer: prometheus.NewRegistry(),
		UserAgent:  "steward-cli",
	})
}

// ClusterRow is one registered cluster and whether it answers.
type ClusterRow struct {
	cluster.Cluster
	// Probed is false for a cluster the probe did not reach (registered
	// meanwhile); Connected is true when it answered, else Error says why.
	Probed    bool
	Connected bool
	Error     string
}

// Clusters lists the clusters m knows, local first, probing each
// concurrently.
func Clusters(ctx context.Context, m *cluster.Manager) ([]ClusterRow, error) {
	clusters, err := m.Registry().List(ctx)
	if err != nil {
		return nil, err
	}
	probes, err := m.ProbeAll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ClusterRow, 0, len(clusters))
	for _, c := range clusters {
		perr, probed := probes[c.Name]
		row := ClusterRow{Cluster: c, Probed: probed, Connected: probed && perr == nil}
		switch {
		case !probed:
			row.Error = "not probed"
		case perr != nil:
			row.Error = perr.Error()
		}
		out = append(out, row)
	}
	return out, nil
}

// ClusterLess orders cluster names with the hub (local) first, as every
// view of the read model lists clusters.
func ClusterLess(a, b string) bool {
	if v1beta1.IsLocalCluster(a) != v1beta1.IsLocalCluster(b) {
		return v1beta1.IsLocalCluster(a)
	}
	return a < b
}

func namespaceOr(ns string) string {
	if ns == "" {
		return cluster.DefaultNamespace
	}
	return ns
}
