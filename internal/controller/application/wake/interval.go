package wake

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Interval returns the re-sync period of an Application: its
// app.oam.dev/reconcile-interval annotation when valid, else the global
// period. A warning says why an annotation was ignored.
func Interval(app *v1beta1.Application, resync, least time.Duration) (time.Duration, string) {
	v, ok := app.Annotations[v1beta1.AnnotationReconcileInterval]
	if !ok || v == "" {
		return resync, ""
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return resync, fmt.Sprintf("annotation %s=%q is not a duration (like 30s or 2m); using the default %s", v1beta1.AnnotationReconcileInterval, v, resync)
	}
	if d < least {
		return resync, fmt.Sprintf("annotation %s=%q is under the minimum %s; using the default %s", v1beta1.AnnotationReconcileInterval, v, least, resync)
	}
	return d, ""
}

// Jitter spreads d by ±fraction so that thousands of Applications created
// together do not all requeue in the same second.
func Jitter(d time.Duration, fraction float64) time.Duration {
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

// UnhealthyBackoff is how long an unhealthy Application waits before its
// next pass: base after the first unhealthy pass, doubled after each
// further one, and never more than the Application's own re-sync period,
// so that a fleet-wide outage does not multiply the load on the API
// server and an app that asked for a long interval keeps it. A base of 0
// turns the back-off off: unhealthy apps keep their re-sync period.
func UnhealthyBackoff(base, interval time.Duration, streak int) time.Duration {
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
