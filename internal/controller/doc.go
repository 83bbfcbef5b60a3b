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
// Reconcile has one shape: get the Application, defer the one status
// write, finalize when it is being deleted, ensure the finalizer, then run
// the phases, in this order, over a scope that records facts; pure
// functions turn the facts into status and events when the pass ends.
//
//	phase            file (application_controller_<concern>.go)
//	loadTrackers     trackers     the Application's trackers; hand-deleted ones re-created
//	renderAndRecord  render       a new version rendered and recorded before anything is applied
//	advanceWorkflow  workflow     the run of a workflow with gates: the steps this pass reaches
//	keepState        statekeep    every recorded object applied, drift repaired (dependson: order)
//	evaluateHealth   health       each component's health policy over the live objects
//	dispatchPostTraits postdispatch PostDispatch traits over the live, healthy workload, recorded
//	runSteps         steps        custom workflow steps (WorkflowStepDefinitions); their vela/kube actions: stepkube
//	finishWorkflow   workflow     which steps succeeded, after health
//	collectGarbage   gc           objects only older versions record deleted (delete: one object)
//
// Other concerns, one file each: finalize (deleting an Application),
// runstatus (status.workflow of a version delivered in one pass),
// status (every condition, as pure functions), events, inputs (values
// passed between workflow steps), identity (acting as a ServiceAccount),
// clusters (per-cluster work in parallel), vanished (an Application
// deleted as its finalizer was added), shard (trackers of Applications
// that moved shard), revisions (component revisions), requeue (when the
// next pass runs), watches (what enqueues an Application).
//
// Implementation notes: the manager watches a fixed set of Steward's own
// kinds (Application, ResourceTracker, the definitions) and never starts
// an informer for a rendered kind. In watch mode (--drift-detection=watch,
// the default) package watch runs label-selected, metadata-only watches of
// managed kinds whose events enqueue the owning Application, and StateKeep
// skips objects they show unchanged. In timer mode managed objects are read
// from the API server, once per object per pass, and kept by a periodic
// pass. Every CUE evaluation goes to the evaluator processes of package
// sandbox, through the Renderer.
package controller
