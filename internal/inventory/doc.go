// Package inventory is the set logic over what ResourceTrackers record:
// which objects the entries want to exist, which they list at all, which
// no tracker listed before, and which entry of several trackers is the
// newest for an object. StateKeep, garbage collection, health, recording
// and deletion all ask these questions; they are answered here once, with
// one rule each, as Flux keeps its inventory's set logic in one small
// package.
//
// Usage:
//
//	entries, err := inventory.Of(current, root)      // decoded, nil trackers skipped
//	wanted := inventory.Wanted(entries)              // recorded with a manifest, not marked deleted
//	if wanted.Has(key) { ... }
//	unseen, err := inventory.Unseen(rendered, current, root) // new to every tracker
//
// An entry's states: with a manifest (Data) it is an object Steward
// applies; without, it is listed but not applied (a manifest dropped by
// an older version, or an entry kept for a policy); marked Deleted, it is
// to be deleted and is dropped once the deletion is confirmed.
package inventory
