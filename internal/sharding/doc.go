// Package sharding spreads Applications over several Steward replicas the
// way KubeVela does: an Application belongs to the shard its
// controller.core.oam.dev/scheduled-shard-id label names, and each replica
// (--shard-id) caches and reconciles only its own shard's Applications and
// resource trackers, through label-selected informers, so that memory
// splits with the fleet.
//
// Beyond KubeVela, which assigns a shard once in its admission webhook:
//   - every shard renews a Lease (steward-shard-<id>) while it runs;
//   - the master shard assigns unlabelled Applications to the live shard
//     that holds the fewest, so no webhook is needed;
//   - when a shard's Lease has been expired for a grace period, the master
//     moves that shard's Applications to the live shards. A returning
//     shard takes only what is assigned to it.
package sharding
