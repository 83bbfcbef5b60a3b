// Package sharding spreads Applications over several Steward replicas the
// way KubeVela does: an Application belongs to the shard its
// controller.core.oam.dev/scheduled-shard-id label names, and each replica
// (--shard-id) caches and reconciles only its own shard's Applications and
// resource trackers, through label-selected informers, so that memory
// splits with the fleet.
//
// Usage:
//
//	opts := sharding.Defaults() // the controller's --enable-sharding, --shard-id, ...
//	mgr.Add(&sharding.Heartbeat{Client: c, Options: opts, Identity: pod, Log: log})
//	if opts.IsMaster() {
//		mgr.Add(&sharding.Scheduler{Client: c, Metadata: meta, Options: opts, Log: log})
//	}
//	sel := opts.Selector() // what this replica's cache selects Applications and trackers by
//
// Beyond KubeVela, which assigns a shard once in its admission webhook:
//   - every shard renews a Lease (steward-shard-<id>) while it runs;
//   - the master shard assigns unlabelled Applications to the live shard
//     that holds the fewest, so no webhook is needed;
//   - when a shard's Lease has been expired for a grace period, the master
//     moves that shard's Applications to the live shards. A returning
//     shard takes only what is assigned to it.
//
// Files:
//
//	lease.go      Heartbeat: the shard's Lease (steward-shard-<id>), renewed while the replica runs
//	plan.go       plan: which Applications move to which live shard (pure, table-tested)
//	scheduler.go  Scheduler: the master shard's watch of Applications and Leases, carrying out the plan
//	sharding.go   Options and their flags, Validate, IsMaster, and the label selector of a shard
package sharding
