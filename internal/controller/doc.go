// Package controller holds Steward's reconcilers: the Application
// reconciler (render → record → apply → StateKeep → garbage collection) and
// the definition reconcilers that report whether templates compile.
//
// Usage:
//
//	opts := controller.NewOptions()
//	opts.BindFlags(pflag.CommandLine)
//	err := controller.Run(ctx, restConfig, opts)
//
// Implementation notes: the manager watches a fixed set of Steward's own
// kinds (Application, ResourceTracker, the definitions) and never starts
// an informer for a rendered kind. In watch mode (--drift-detection=watch,
// the default) package watch runs label-selected, metadata-only watches of
// managed kinds whose events enqueue the owning Application, and StateKeep
// skips objects they show unchanged. In timer mode managed objects are read
// from the API server, once per object per pass, and kept by a periodic
// pass (StateKeep). Reconcile has one shape: get, finalize when deleting,
// ensure the finalizer, defer one status patch, run the phases over a scope
// that records facts, and let pure functions turn facts into conditions.
package controller
