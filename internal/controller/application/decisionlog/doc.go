// Package decisionlog writes the decision log: one structured line per
// create, patch, delete or skip at verbosity Decision (1), naming the
// object, its cluster, the component and why; objects found as recorded
// log at Unchanged (2), so the default level logs nothing per unchanged
// object.
//
// Usage:
//
//	decisionlog.Applied(ctx, key, component, res, fields)
//	decisionlog.Deleted(ctx, key, component, why, res)
//	decisionlog.For(ctx, key, decisionlog.Decision).Info("Left behind: the cluster was detached")
//
// Files:
//
//	decisionlog.go the levels, the logger of one object, and the lines of applies, deletes and failures
package decisionlog
