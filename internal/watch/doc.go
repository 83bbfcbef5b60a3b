// Package watch runs watch mode (--drift-detection=watch): one
// metadata-only informer per (cluster, kind) that Steward's trackers list,
// whose list and watch carry a label selector on Steward's ownership label,
// so the API server sends Steward's own objects only. Memory grows with the
// objects Steward manages, never with the cluster.
//
// The Watcher keeps, per Application, the resourceVersion of every object
// as Steward last wrote or read it. A watch event whose resourceVersion is
// not that one (someone else changed the object) or a delete enqueues the
// Application at once; Steward's own writes are recognised and dropped. A
// StateKeep pass asks Unchanged before it reads an object: an object whose
// cached resourceVersion is the recorded one is neither read nor patched.
//
// In timer mode (--drift-detection=timer, Options.Timer) no informer runs;
// the Watcher keeps the same record, and Unchanged asks the API server for
// the object's metadata alone (one metadata-only GET): an object still at
// the recorded resourceVersion is not read whole, decoded or compared.
//
// Usage:
//
//	w := watch.New(watch.Options{Clusters: clusterManager, Metrics: m})
//	mgr.Add(w)                                    // runs the informers
//	builder.WatchesRawSource(w.Source())          // events enqueue apps
//	w.Use(app, keys)                              // each pass: what it tracks
//	if _, ok := w.Unchanged(ctx, c, app, key, apiVersion, digest); !ok {
//		done := w.Begin(app, key)
//		live := apply(...)
//		done(live.GetResourceVersion(), digest)
//	}
//
// Implementation notes: informers start and stop in one supervising
// goroutine, woken when the kinds in use change and every Supervise
// interval, when it also stops the informers of detached or unreachable
// clusters and rebuilds those whose credentials changed. An "informer" is
// client-go's Reflector (list, watch, relist after a gap, backoff) feeding
// a store of ours rather than a SharedIndexInformer: the store keeps, per
// object, its name and resourceVersion and the namespace and owning
// Application (from the ownership labels) interned, and judges each change
// as the reflector hands it over, so there is no DeltaFIFO, indexer of
// whole objects or listener buffer. A store vouches for nothing from the
// moment a list (or relist, after a watch gap) begins until the list is
// handed over, however long it keeps failing; the store of an informer
// stopped for a kind still in use seeds the next one, so that objects
// deleted in between are found gone. What Steward recorded per object is
// keyed by interned kind and namespace. BenchmarkMemory_CacheEntry and
// BenchmarkMemory_AppliedState measure the two alone (about 180 and 185
// bytes per object); docs/benchmarks.md gives what watch mode adds over
// timer mode in the bench's managed scenario.
//
// Files:
//
//	informers.go  the informers per (cluster, kind): started, stopped and rebuilt by one supervisor
//	store.go      the store an informer feeds: name and resourceVersion per object, and the judgement of each change
//	version.go    resourceVersions kept as numbers when they are; ResourceVersionKey
//	watch.go      Watcher and Options: Use, Unchanged, Begin, Source; what Steward last wrote or read per object
package watch
