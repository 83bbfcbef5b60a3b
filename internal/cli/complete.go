package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
)

// AppNames returns the names of the Applications in namespace that start
// with prefix, sorted, for shell completion.
func AppNames(ctx context.Context, hub client.Reader, namespace, prefix string) ([]string, error) {
	var list v1beta1.ApplicationList
	if err := hub.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing applications: %w", err)
	}
	var out []string
	for _, app := range list.Items {
		if strings.HasPrefix(app.Name, prefix) {
			out = append(out, app.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ClusterNames returns the registered clusters that start with prefix,
// sorted, without the hub itself (local) unless withLocal: it cannot be
// detached.
func ClusterNames(ctx context.Context, hub client.Reader, namespace, prefix string, withLocal bool) ([]string, error) {
	clusters, err := cluster.Registry{Reader: hub, Namespace: namespaceOr(namespace)}.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range clusters {
		if (withLocal || !v1beta1.IsLocalCluster(c.Name)) && strings.HasPrefix(c.Name, prefix) {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}
