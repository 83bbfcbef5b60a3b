package sharding

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Heartbeat renews this shard's Lease while it runs, so that the master
// knows the shard is alive. It runs on the elected replica of the shard
// only (a manager runnable that needs leader election) and leaves the
// Lease in place when it stops: a restart within the grace period moves
// nothing.
type Heartbeat struct {
	Client   client.Client
	Options  Options
	Identity string
	Log      logr.Logger
	// now is time.Now, but for tests.
	now func() time.Time
}

// Start renews the Lease every RenewPeriod until ctx is done. When no
// renewal has succeeded for LeaseDuration it returns an error, which stops
// the manager: the master may soon hand this shard's Applications to
// others (it waits LeaseDuration and the grace period from the last
// renewal it saw), and a replica that cannot prove it is alive must not
// go on reconciling them alongside their new owner.
func (h *Heartbeat) Start(ctx context.Context) error {
	if h.now == nil {
		h.now = time.Now
	}
	t := time.NewTicker(h.Options.RenewPeriod)
	defer t.Stop()
	last := h.now()
	for {
		err := h.renew(ctx)
		switch {
		case err == nil:
			last = h.now()
		case ctx.Err() != nil:
			return nil
		default:
			h.Log.Error(err, "Could not renew the shard's Lease", "shard", h.Options.ShardID)
			if h.now().Sub(last) >= h.Options.LeaseDuration {
				return fmt.Errorf("shard %s: the Lease was not renewed for %s; stopping so that its Applications have one owner: %w",
					h.Options.ShardID, h.Options.LeaseDuration, err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (h *Heartbeat) renew(ctx context.Context) error {
	now := metav1.NewMicroTime(h.now())
	seconds := int32(h.Options.LeaseDuration / time.Second)
	if seconds < 1 {
		seconds = 1
	}
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: h.Options.LeaseNamespace, Name: LeaseName(h.Options.ShardID)}
	err := h.Client.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{LabelShardID: h.Options.ShardID}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &h.Identity, LeaseDurationSeconds: &seconds,
				AcquireTime: &now, RenewTime: &now},
		}
		if err := h.Client.Create(ctx, lease); err != nil {
			return err
		}
		h.Log.V(1).Info("Created the shard's Lease", "shard", h.Options.ShardID, "lease", key.String())
		return nil
	}
	if err != nil {
		return err
	}
	before := lease.DeepCopy()
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != h.Identity {
		lease.Spec.HolderIdentity, lease.Spec.AcquireTime = &h.Identity, &now
	}
	lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = &seconds, &now
	if lease.Labels[LabelShardID] != h.Options.ShardID {
		if lease.Labels == nil {
			lease.Labels = map[string]string{}
		}
		lease.Labels[LabelShardID] = h.Options.ShardID
	}
	return h.Client.Patch(ctx, lease, client.MergeFrom(before))
}
