package sharding

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/steward-oam/steward/api/v1beta1"
)

const (
	// LabelScheduledShardID names the shard an Application (and its
	// resource trackers) belongs to: KubeVela's label.
	LabelScheduledShardID = v1beta1.LabelScheduledShardID
	// LabelShardID marks the Lease of a shard with the shard's id.
	LabelShardID = "controller.core.oam.dev/shard-id"
	// MasterShardID is the shard that assigns Applications: KubeVela's
	// default --shard-id.
	MasterShardID = "master"
	// leasePrefix starts the name of every shard's Lease.
	leasePrefix = "steward-shard-"
)

// Options configure sharding. The zero value is off.
type Options struct {
	// Enabled turns sharding on (--enable-sharding).
	Enabled bool
	// ShardID is this replica's shard (--shard-id).
	ShardID string
	// SchedulableShards are the shards the master assigns to
	// (--schedulable-shards); empty means every shard whose Lease is live.
	SchedulableShards []string
	// LeaseNamespace holds the shards' Leases.
	LeaseNamespace string
	// LeaseDuration is how long a shard's Lease is valid after a renewal.
	LeaseDuration time.Duration
	// RenewPeriod is how often a shard renews its Lease, and how often
	// the master looks at the Leases and the shards' sizes even when no
	// Application changed.
	RenewPeriod time.Duration
	// ReassignGrace is how long a shard's Lease stays expired before the
	// master moves its Applications to live shards; 0 never moves them.
	ReassignGrace time.Duration
}

// Defaults are the defaults of the sharding flags.
func Defaults() Options {
	return Options{
		ShardID:       MasterShardID,
		LeaseDuration: 40 * time.Second,
		RenewPeriod:   10 * time.Second,
		ReassignGrace: 2 * time.Minute,
	}
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if !o.Enabled {
		return nil
	}
	for _, id := range append([]string{o.ShardID}, o.SchedulableShards...) {
		if errs := validation.IsValidLabelValue(id); len(errs) > 0 || id == "" {
			return fmt.Errorf("shard id %q: want a non-empty label value", id)
		}
		if errs := validation.IsDNS1123Subdomain(leasePrefix + id); len(errs) > 0 {
			return fmt.Errorf("shard id %q: %s must be a valid Lease name", id, leasePrefix+id)
		}
	}
	if o.LeaseDuration <= o.RenewPeriod || o.RenewPeriod <= 0 {
		return fmt.Errorf("sharding: the lease duration %s must be longer than the renew period %s", o.LeaseDuration, o.RenewPeriod)
	}
	if o.ReassignGrace < 0 {
		return fmt.Errorf("--sharding-reassign-grace %s: want 0 or more", o.ReassignGrace)
	}
	return nil
}

// IsMaster reports whether this replica assigns Applications to shards.
func (o Options) IsMaster() bool { return o.Enabled && o.ShardID == MasterShardID }

// Selector selects the objects of this replica's shard; nil when sharding
// is off.
func (o Options) Selector() labels.Selector {
	if !o.Enabled {
		return nil
	}
	return labels.SelectorFromSet(labels.Set{LabelScheduledShardID: o.ShardID})
}

// Label is the shard label value this replica writes on the trackers it
// creates; empty when sharding is off.
func (o Options) Label() string {
	if !o.Enabled {
		return ""
	}
	return o.ShardID
}

// LeaseName is the name of the Lease of shard id.
func LeaseName(id string) string { return leasePrefix + id }
