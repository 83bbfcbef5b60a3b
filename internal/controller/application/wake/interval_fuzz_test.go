package wake_test

import (
	"testing"
	"time"

	"github.com/steward-oam/steward/internal/controller/application"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/wake"
)

// FuzzReconcileInterval reads an arbitrary app.oam.dev/reconcile-interval
// annotation, which any Application author sets, under any re-sync period
// and minimum the controller accepts. The interval is never negative and
// never under the minimum, whatever the annotation: an app cannot make the
// controller re-sync it in a hot loop. A valid annotation at or above the
// minimum is taken as it is, and anything else is ignored with a warning.
// The unhealthy back-off built on it stays positive and within it.
func FuzzReconcileInterval(f *testing.F) {
	f.Fuzz(func(t *testing.T, value string, present bool, reSync, minimum, base int64, streak uint8) {
		o := application.NewOptions()
		o.ReSyncPeriod, o.MinReconcileInterval, o.UnhealthyRequeueBase = time.Duration(reSync), time.Duration(minimum), time.Duration(base)
		// The minimum is set in code (10s, 1s in tests), never negative;
		// the other two come from flags that Validate checks.
		if o.MinReconcileInterval < 0 || o.Validate() != nil {
			return
		}
		app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "prod"}}
		if present {
			app.Annotations = map[string]string{v1beta1.AnnotationReconcileInterval: value}
		}
		got, warning := wake.Interval(app, o.ReSyncPeriod, o.MinReconcileInterval)
		if got < 0 || got < o.MinReconcileInterval {
			t.Fatalf("annotation %q, re-sync %s, minimum %s: interval %s", value, o.ReSyncPeriod, o.MinReconcileInterval, got)
		}
		if d, err := time.ParseDuration(value); present && value != "" && err == nil && d >= o.MinReconcileInterval {
			if got != d || warning != "" {
				t.Fatalf("annotation %q: interval %s, warning %q; want %s and no warning", value, got, warning, d)
			}
		} else if got != o.ReSyncPeriod || (present && value != "" && warning == "") {
			t.Fatalf("annotation %q: interval %s, warning %q; want the default %s with a warning", value, got, warning, o.ReSyncPeriod)
		}

		// The back-off saturates at the interval however long it is (an
		// annotation of 2500000h at streak 31 once overflowed to 0: seed
		// backoff-overflow), and so does the jitter.
		if j := wake.Jitter(got, o.ReSyncJitter); j <= 0 {
			t.Fatalf("jitter of %s by %v: %s", got, o.ReSyncJitter, j)
		}
		backoff := wake.UnhealthyBackoff(o.UnhealthyRequeueBase, got, int(streak))
		if backoff <= 0 || backoff > got {
			t.Fatalf("unhealthy back-off from %s over %s at streak %d: %s", o.UnhealthyRequeueBase, got, streak, backoff)
		}
	})
}
