package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// KnownDownFor is how long a failed health probe keeps a cluster skipped.
const KnownDownFor = time.Minute

// Prober reports the last health probe of a cluster; *Manager is one.
type Prober interface {
	LastProbe(cluster string) (ProbeResult, bool)
}

// KnownDown returns the last probe's error for a target cluster that
// failed its health probe within KnownDownFor, so that callers skip its
// objects at once instead of each waiting for a connection timeout; nil
// for the hub, a cluster never probed, or one whose last probe succeeded.
// clients that do not probe (no Prober) are never known down.
func KnownDown(clients Clients, cluster string) error {
	p, ok := clients.(Prober)
	if !ok || v1beta1.IsLocalCluster(cluster) {
		return nil
	}
	res, ok := p.LastProbe(cluster)
	if !ok || res.Err == nil || time.Since(res.At) > KnownDownFor {
		return nil
	}
	// No elapsed time in the message: it ends up in a condition, and a
	// message that changes every pass writes status and emits an event
	// every pass.
	return fmt.Errorf("failed its last health probe: %w", res.Err)
}

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
