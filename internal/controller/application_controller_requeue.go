package controller

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

// reconcileInterval returns the re-sync period of an Application: its
// app.oam.dev/reconcile-interval annotation when valid, else the global
// period. A warning says why an annotation was ignored.
func reconcileInterval(app *v1beta1.Application, o Options) (time.Duration, string) {
	v, ok := app.Annotations[v1beta1.AnnotationReconcileInterval]
	if !ok || v == "" {
		return o.ReSyncPeriod, ""
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return o.ReSyncPeriod, fmt.Sprintf("annotation %s=%q is not a duration (like 30s or 2m); using the default %s", v1beta1.AnnotationReconcileInterval, v, o.ReSyncPeriod)
	}
	if d < o.MinReconcileInterval {
		return o.ReSyncPeriod, fmt.Sprintf("annotation %s=%q is under the minimum %s; using the default %s", v1beta1.AnnotationReconcileInterval, v, o.MinReconcileInterval, o.ReSyncPeriod)
	}
	return d, ""
}

// jitter spreads d by ±fraction so that thousands of Applications created
// together do not all requeue in the same second.
func jitter(d time.Duration, fraction float64) time.Duration {
	if fraction <= 0 {
		return d
	}
	spread := (rand.Float64()*2 - 1) * fraction
	out := float64(d) * (1 + spread)
	if out >= math.MaxInt64 {
		// Past about 290 years a Duration overflows: keep d.
		return d
	}
	return time.Duration(out)
}

// unhealthyBackoff is how long an unhealthy Application waits before its
// next pass: base after the first unhealthy pass, doubled after each
// further one, and never more than the Application's own re-sync period,
// so that a fleet-wide outage does not multiply the load on the API
// server and an app that asked for a long interval keeps it. A base of 0
// turns the back-off off: unhealthy apps keep their re-sync period.
func unhealthyBackoff(base, interval time.Duration, streak int) time.Duration {
	if base <= 0 || base >= interval {
		return interval
	}
	d := base
	for range max(streak-1, 0) {
		if d >= interval/2 {
			// Doubling would reach the interval (or overflow).
			return interval
		}
		d *= 2
		if d >= interval {
			return interval
		}
	}
	return d
}

// unhealthyStreaks counts, per Application, the passes in a row that found
// it unhealthy. An entry lives while its Application is unhealthy and is
// dropped when it is healthy again or deleted, so the map holds at most
// one entry per unhealthy Application.
type unhealthyStreaks struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

// next records one more unhealthy pass and returns the streak.
func (u *unhealthyStreaks) next(key types.NamespacedName) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n == nil {
		u.n = map[types.NamespacedName]int{}
	}
	u.n[key]++
	return u.n[key]
}

// forget ends the streak of an Application.
func (u *unhealthyStreaks) forget(key types.NamespacedName) {
	u.mu.Lock()
	delete(u.n, key)
	u.mu.Unlock()
}

// requeue schedules the next pass after the re-sync period. An unhealthy
// app is looked at sooner, to report recovery, backing off from
// --unhealthy-requeue-base up to its own period. When something transient
// failed, Reconcile also returns s.retryErr and the work queue's
// exponential back-off retries sooner.
func (r *ApplicationReconciler) requeue(s *scope) ctrl.Result {
	interval, warning := reconcileInterval(s.app, r.Options)
	s.intervalWarning = warning
	key := types.NamespacedName{Namespace: s.app.Namespace, Name: s.app.Name}
	if s.healthy() && !s.flow.Waiting() {
		r.unhealthy.forget(key)
	} else {
		interval = unhealthyBackoff(r.Options.UnhealthyRequeueBase, interval, r.unhealthy.next(key))
	}
	after := jitter(interval, r.Options.ReSyncJitter)
	if f := s.flow; f != nil {
		switch {
		case f.Next && !f.Started:
			// A deploy step finished: the next step runs at once. A run
			// this pass started moves on once its status is written
			// (endPass, startedRunMovesOn): were the write lost (an
			// Application CRD that prunes status.workflow) nothing loops.
			after = conflictRetry
		case f.Requeue > 0 && f.Requeue < after:
			// A suspend step's duration ends.
			after = f.Requeue
		}
	}
	if s.postRecorded || s.stepRecorded {
		// PostDispatch traits recorded objects: apply them now.
		after = conflictRetry
	}
	if r.Options.onRequeue != nil {
		r.Options.onRequeue(key, after)
	}
	return ctrl.Result{RequeueAfter: after}
}

// healthy reports whether every evaluated component is healthy.
// healthy reports whether every component is healthy; a workflow step
// waiting for something else (another Application) is looked at on the
// same back-off.
func (s *scope) healthy() bool {
	for _, h := range s.health {
		if !h.Healthy {
			return false
		}
	}
	return true
}
