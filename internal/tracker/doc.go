// Package tracker names, reads and writes ResourceTrackers, the record of
// every object an Application rendered.
//
// Usage:
//
//	s := &tracker.Store{Client: c, Compression: v1beta1.CompressionZstd}
//	rt, err := s.Record(ctx, tracker.RefOf(app), tracker.VersionOf(app), app.Generation, entries, tracker.DeleteMissing, nil)
//	err = s.Save(ctx, rt, entries, 0)
//
// Implementation notes: tracker names are derived from the Application's
// name and namespace in a way that never collides between different pairs
// (see Name). Entries are keyed by cluster, group, kind, namespace and name.
// Writes are merge patches carrying the resourceVersion read, so a write
// never overwrites a concurrent one: the caller gets a conflict and retries.
//
// Compressed entries are decoded through a small cache keyed by tracker UID
// and resourceVersion (bounded by count and decoded size, least recently
// used out), because every phase of a reconcile pass reads the same
// trackers; the zstd and gzip codecs are built once and shared. Entries
// returns a fresh slice, so callers may change it freely.
//
// Every tracker carries Steward's protection finalizer, which only Delete
// and Release remove: a tracker someone else deletes stays (Doomed) until
// the controller has replaced it (Recreate), so its entries are never lost.
// A pass reads its Application's trackers and rescue copies with one cache
// lookup (ListRestoring), finishing any re-creation a stopped pass left.
//
// Files:
//
//	cache.go        decodedEntries: the last compressed trackers decoded, so a pass decodes each once
//	compression.go  Encode, Decode and Sizes: entries stored plain, gzip or zstd; Compress and Decompress for other records
//	entries.go      Key, Entry, Manifest, Ref and Index: one recorded object and its identity
//	index.go        the cache index (IndexApp) that makes a List cost one Application's trackers and rescue copies
//	marks.go        the annotations (marks) Steward writes on trackers, and Mark, DecodeMark, Parallelism to read them
//	names.go        Kind, Name and Labels: tracker names and the labels trackers carry
//	record.go       Store.Record: a version's entries written before anything is applied; Missing
//	rescue.go       Recreate and the rescue copy of a tracker deleted by hand
//	shard.go        Adopt: trackers relabelled to this replica's shard
//	store.go        Store and AppRef: List, ListRestoring, Entries, Save and SaveMarked
package tracker
