// Package inventory is the set logic over what ResourceTrackers record,
// and the one home of the delete decision: which objects the entries want
// to exist, which they list at all, which no tracker listed before, which
// entry of several trackers is the newest for an object, and what is
// deleted, or left, and why. StateKeep, garbage collection, health,
// recording and deletion all ask these questions; they are answered here
// once, with one rule each, as Flux keeps its inventory's set logic in one
// small package. The package is pure: it reads trackers and the
// Application's policies, never a cluster; the controller carries its
// decisions out (marks, deletes, writes) and logs each with its Why.
//
// Usage:
//
//	entries, err := inventory.Of(current, root)      // decoded, nil trackers skipped
//	wanted := inventory.Wanted(entries)              // recorded with a manifest, not marked deleted
//	unseen := inventory.Unseen(rendered, current, root) // new to every tracker
//	recorded := inventory.WithRoot(versioned, root)  // what a version records
//
//	keeper := inventory.KeeperOf(app, rules)         // the policies as they are now
//	t := inventory.Trackers{Current: live, Root: root, Older: older}
//	col, err := inventory.Garbage(t, keeper)         // after a dispatch: col.Doomed, col.Left, col.Unmarked
//	marks, err := inventory.Marks(t, keeper)         // StateKeep: entries marked deleted
//	gone, err := inventory.Recycle(t, keeper, uid, limit) // older trackers that can go
//	rm, err := inventory.Deletion(inventory.NewestFirst(uid, all), keeper, orphan) // the Application is deleted
//
// An entry's states: with a manifest (Data) it is an object Steward
// applies; without, it is listed but not applied (the root tracker's
// entry of an object kept after it left the spec, or an entry kept for a
// policy); marked Deleted, it is to be deleted and is dropped once the
// deletion is confirmed.
//
// The rules, in one place each:
//
//   - garbage.go: an object is garbage once the live version does not
//     list it and no rule, as the policies are now, keeps it (never,
//     onAppDelete, read-only), whichever tracker lists it; the root tracker
//     lets an object go only when an older version records it. A version
//     records the root tracker's objects too (WithRoot), so that this can
//     be told, and versions recorded before it did are never taken to
//     lack an object (tracker.RecordsRootObjects).
//   - statekeep.go: StateKeep applies one entry per object, the live
//     version's before the root tracker's (Kept: a rollback restores what
//     the version rendered), and what becomes of entries marked deleted
//     (Marks).
//   - recycle.go: which older trackers go (the revision limit, earlier
//     Applications' and KubeVela's), once nothing they list waits or is
//     kept by them alone.
//   - deletion.go: deleting the Application, where the newest record of
//     each object decides (skipGC, never, read-only, the orphan
//     finalizer), and the order that says which record is newest.
//   - keeper.go: what the policies keep of one entry; a component no
//     longer in the spec has no known type, so every type a rule could
//     select it by is tried.
//   - inventory.go: the set helpers (Wanted, Listed, Keys, Unseen,
//     AppliedOf, MarkDeleted, WithoutMarked, Remove, WithRoot).
package inventory
