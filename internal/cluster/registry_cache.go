package cluster

import (
	"context"
	"sync"
	"time"
)

// ListTTL is how long a ListCache reuses the registry's cluster list.
const ListTTL = 30 * time.Second

// ListCache shares one read of the cluster registry between the many
// Applications of a re-sync wave. The zero value is ready to use.
type ListCache struct {
	mu   sync.Mutex
	list []Cluster
	at   time.Time
}

// Get returns the registered clusters, read again when fresh is asked for
// or the cached list is older than ttl (ListTTL when zero).
func (c *ListCache) Get(ctx context.Context, reg *Registry, fresh bool, ttl time.Duration) ([]Cluster, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ttl == 0 {
		ttl = ListTTL
	}
	if !fresh && c.list != nil && time.Since(c.at) < ttl {
		return c.list, nil
	}
	list, err := reg.List(ctx)
	if err != nil {
		return nil, err
	}
	c.list, c.at = list, time.Now()
	return list, nil
}
