// Package cache says what the manager's informer cache keeps of Steward's
// own kinds (Applications, ResourceTrackers, definitions) and keeps it
// small: managed fields are dropped, repeated strings are shared, and
// with sharding only this shard's Applications and trackers are cached.
// Managed objects are never cached here (see package watch).
//
// Usage:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Cache: cache.Options(&syncPeriod, shardSelector)})
//
// Files:
//
//	cache.go  the cache options, the transforms and the bounded interner
package cache
