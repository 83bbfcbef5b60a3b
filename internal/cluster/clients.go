package cluster

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Clients returns the client of a target cluster.
type Clients interface {
	GetClient(ctx context.Context, cluster string) (client.Client, error)
}

// NewManagedClient returns a client whose reads go straight to the API
// server, except reads of the kinds in cached, which go to cache. Writes
// always go to the API server.
func NewManagedClient(direct client.Client, cache client.Reader, cached []schema.GroupVersionKind) client.Client {
	if len(cached) == 0 {
		return direct
	}
	set := make(map[schema.GroupVersionKind]bool, len(cached))
	for _, gvk := range cached {
		set[gvk] = true
	}
	return &routedClient{Client: direct, cache: cache, cached: set}
}

type routedClient struct {
	client.Client
	cache  client.Reader
	cached map[schema.GroupVersionKind]bool
}

func (r *routedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.cached[obj.GetObjectKind().GroupVersionKind()] {
		return r.cache.Get(ctx, key, obj, opts...)
	}
	return r.Client.Get(ctx, key, obj, opts...)
}
