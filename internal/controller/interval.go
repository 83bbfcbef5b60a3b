package controller

import (
	"fmt"
	"math/rand/v2"
	"time"

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
	return time.Duration(float64(d) * (1 + spread))
}
