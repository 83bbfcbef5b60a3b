// Package wake decides what wakes an Application: which events of its own
// kinds enqueue it (predicates and map functions, given to the manager by
// the reconciler's SetupWithManager) and how long it sleeps after a pass
// (its re-sync interval, jitter, the unhealthy back-off), and when it is
// not reconciled at all (frozen for another controller).
//
// Usage:
//
//	builder.For(&v1beta1.Application{}, builder.WithPredicates(wake.ApplicationChanged()))
//	d, warning := wake.Interval(app, resync, minimum)
//	after := wake.Jitter(wake.UnhealthyBackoff(base, d, streak), fraction)
//
// Files:
//
//	events.go   the predicates and map functions of the Application's watches
//	interval.go the re-sync interval (annotation app.oam.dev/reconcile-interval), jitter, the unhealthy back-off
//	freeze.go   KubeVela's freeze (annotation app.oam.dev/controller-version-require): an Application left alone
package wake
