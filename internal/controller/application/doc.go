// Package application is the Application reconciler: render → record →
// apply → StateKeep → health → workflow → garbage collection, over the
// ResourceTracker pattern, for one Application per pass.
//
// Usage (internal/controller/manager does this):
//
//	r, err := application.New(mgr, cfg, opts, metrics) // clients, watcher, evaluators, workers
//	err = r.SetupWithManager(mgr)                      // the fixed watch set
//
// Reconcile has one shape: get the Application, defer the one status
// write, finalize when it is being deleted, ensure the finalizer, then run
// the phases, in this order, over a facts.Pass that records facts; package
// status turns the facts into status and events when the pass ends.
//
//	phase              file           what it does
//	loadTrackers       trackers.go    the Application's trackers; hand-deleted ones re-created
//	renderAndRecord    render.go      a new version rendered and recorded before anything is applied
//	Revisions.Record   package apprev the live version's ApplicationRevision written or taken up; its tracker labelled with it
//	advanceWorkflow    workflow.go    the pass's workflow.Run (gated: the steps this pass reaches; one pass; refused)
//	keepState          statekeep.go   every recorded object applied, drift repaired (dependson.go: who waits)
//	evaluateHealth     health.go      each component's health policy over the live objects
//	dispatchPostTraits postdispatch.go PostDispatch traits over the live, healthy workload, recorded
//	runSteps           steps.go       custom workflow steps (WorkflowStepDefinitions) and the Application their vela/kube actions act as
//	finishWorkflow     workflow.go    the run judged after health; its Report is status.workflow, written by nothing else
//	collectGarbage     gc.go          what inventory.Garbage dooms marked, deleted, settled; old trackers recycled (delete.go: in order)
//
// What is deleted, and why, is decided in package inventory (Garbage,
// Marks, Recycle, Deletion); the phases only carry it out and log each
// decision with its reason. The sub-packages hold what needs no client:
// facts (what a pass records), status (conditions and events), record
// (tracker data beyond manifests), order (apply and delete order), wake
// (watches' predicates, intervals), memory (caches between passes) and
// decisionlog (one line per decision); apprev writes the ApplicationRevisions
// (its Keeper also records their outcome and deletes them with the Application).
//
// Files:
//
//	reconcile.go    Reconcile, the phase table, the one status write, forget, name checks, test hooks
//	options.go      Options (the reconciler's flags, bound by package manager), defaults, validation
//	setup.go        New: indexes, cluster clients, recorder, watcher, evaluators, egress, step workers; AdmissionChecker
//	wake.go         SetupWithManager (the watches; their predicates in package wake) and the requeue after a pass
//	clients.go      the identity a pass acts as, its clients, and per-cluster work in parallel
//	trackers.go     loadTrackers: listing, protecting and re-creating trackers; trackers moved in from another shard;
//	                which tracker records each rendered object (versioned or root), and what the policies say of it
//	render.go       renderAndRecord: a version rendered, recorded, rolled back to; placements
//	revisions.go    component revisions (comprev) and autoUpdate: definitions that moved
//	statekeep.go    keepState: recorded objects applied, drift repaired or reported
//	dependson.go    dependsOn: who waits for a dependency that failed or is not healthy (package order: the order)
//	health.go       evaluateHealth: each component's health from its live objects (cached: package memory); objects watch mode did not read
//	postdispatch.go PostDispatch traits, rendered over the healthy workload and recorded
//	helm.go         Helm releases of helmchart components: charts prepared, records written, uninstalled
//	workflow.go     advanceWorkflow and finishWorkflow: the pass's workflow.Run and what judges it
//	inputs.go       values passed between workflow steps: recorded outputs, steps rendered again
//	steps.go        runSteps: custom workflow steps and their vela/kube actions (provider.Kube)
//	gc.go           collectGarbage: inventory's decision carried out in two phases
//	delete.go       deleting objects in order, each cluster on its own
//	finalize.go     deleting an Application: everything it recorded, then the finalizer; an Application
//	                deleted as its finalizer was added: what it applied is cleaned up
//	kubevela.go     taking over what KubeVela left: its trackers, its context; tookOver
//	events.go       the events of a pass (status.Events), the Applier of its objects, taken fields noted
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
package application
