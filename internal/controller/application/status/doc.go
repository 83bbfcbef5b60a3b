// Package status turns the facts of a pass (facts.Pass) into the
// Application's status and events, as pure functions: the same facts give
// the same status, and a condition moves its transition time only when its
// status changes. It is the only writer of status.workflow (the pass's
// workflow.Run reports it), and of every condition Steward sets.
//
// Usage:
//
//	status.Compute(s, now)                   // conditions, phase, services, latestRevision, workflow
//	ev := status.Events{Recorder: rec, Metrics: m, FirstTime: warned.FirstTime}
//	ev.Emit(s, before)                       // what really changed, once
//	if status.Same(&before.Status, &s.App.Status) { /* nothing to write */ }
//
// Files:
//
//	status.go   Compute and Deleting; one function per condition (Rendered, Dispatched, StateKept, Healthy, GarbageCollected, Ready); phase
//	describe.go condition and event messages: failures, changes, conflicts, unsupported features
//	events.go   Events: the events of a pass and of a deletion
//	kubevela.go KubeVela's condition types, dropped from an Application Steward took over
//	equal.go    Same: whether a status write would change anything, by its stored encoding
package status
