package sharding

import (
	"context"
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

// Start renews the Lease every RenewPeriod until ctx is done.
func (h *Heartbeat) Start(ctx context.Context) error {
	if h.now == nil {
		h.now = time.Now
	}
	t := time.NewTicker(h.Options.RenewPeriod)
	defer t.Stop()
	for {
		if err := h.renew(ctx); err != nil && ctx.Err() == nil {
			h.Log.Error(err, "Could not renew the shard's Lease", "shard", h.Options.ShardID)
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

// leaseState is what the master reads from a shard's Lease.
type leaseState struct {
	// expiry is when the Lease runs out without a renewal.
	expiry time.Time
}

// expiryOf returns when lease runs out; zero when it was never renewed.
func expiryOf(lease *coordinationv1.Lease) time.Time {
	spec := lease.Spec
	if spec.RenewTime == nil || spec.LeaseDurationSeconds == nil {
		return time.Time{}
	}
	return spec.RenewTime.Add(time.Duration(*spec.LeaseDurationSeconds) * time.Second)
}
