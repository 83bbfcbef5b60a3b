// Package facts is what one pass of the Application reconciler records:
// Pass, grouped by the phase that records each part (Actor, Trackers,
// Takeover, Policies, RenderReport, HealthReport, State, KeepReport,
// GCReport), and the small pure questions every phase asks of them. It
// reads nothing and writes nothing: the phases (package application)
// record facts here, and package status turns them into the status and
// events, so a newcomer finds what a pass knows in one place.
//
// Usage:
//
//	s := facts.NewPass(app)            // one per pass
//	s.Keep.Failures = append(s.Keep.Failures, facts.EntryFailure(e, reason, err))
//	s.SetRetry(err)                    // the first transient error is returned to the queue
//	for _, g := range facts.ByCluster(entries) { p := facts.NewClusterShare(); ...; s.Merge(p) }
//
// Files:
//
//	pass.go     Pass and the per-phase facts; the questions asked of a pass (GatedEntry, Dispatching, Healthy, WorkflowRefusal)
//	report.go   Change, Failure, KeepReport (StateKeep), GCReport (garbage collection)
//	cluster.go  ClusterGroup, ClusterShare: per-cluster work merged back in order; failures of a cluster and of an entry
//	health.go   ComponentHealth, PlacedWorkload, health keys, the manifests a component's health reads
//	boundary.go the namespace boundary of an Application's entries, and how an entry's source is named
//	reason.go   ReasonError and ReasonOf: the condition reason an error carries; ApplyReason; BudgetLimit
//	helm.go     HelmRelease: a Helm release a version delivers, as recorded
//	inputs.go   RenderedInputs: what a version's input-taking steps were rendered with
package facts
