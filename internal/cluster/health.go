package cluster

import (
	"fmt"
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
