// Package events records Kubernetes Events (events.k8s.io/v1) about
// Steward's objects with memory bounded by a fixed number of entries,
// whatever the number of Applications or events.
//
// client-go's events broadcaster keeps a full copy of every event it
// recorded for six to twelve minutes, to fold repeats into a series. A
// fleet of a thousand Applications being created emits two thousand events
// and so holds about 2 MiB for that long; an event storm (every
// Application failing on a broken definition) holds one copy per distinct
// message. This recorder keeps, per recent event, only what a repeat needs
// (a 64-bit key, the event's name and its count), at most maxSeen of them,
// and writes from one bounded queue, as client-go does (1,000 events).
//
// Usage:
//
//	rec := events.New(client, scheme, "steward", log)
//	_ = mgr.Add(rec) // writes from its queue while the manager runs
//	rec.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventApplied, "Apply", "applied %s", what)
//
// Event reasons are constants of api/v1beta1 (EventApplied, ...) or
// condition reasons.
//
// Files:
//
//	recorder.go  Recorder: events.k8s.io/v1 Events folded into series, from a bounded memory and queue
package events
