package application

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/metrics"
	"github.com/steward-oam/steward/internal/render"
)

// Under load a pass can start from a cached copy of the Application that
// does not show the previous pass's status write yet. Writing from that
// copy must never leave the phase of one pass beside the conditions of
// another (seen before: status.status "unhealthy" with Ready and Healthy
// True). Every write derives phase and conditions together, and is made
// only over the copy it was derived from.
func TestStatus_AWriteFromAStaleCopyNeverMixesTwoPasses(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	app := &v1beta1.Application{}
	app.Name, app.Namespace = "web", ns
	app.Spec.Components = []v1beta1.ApplicationComponent{{Name: "web", Type: "webservice"}}
	if err := testClient.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: testClient, Metrics: m}
	pass := func(from *v1beta1.Application, healthy bool, applied int) (*v1beta1.Application, error) {
		s := &facts.Pass{App: from.DeepCopy(), HealthReport: facts.HealthReport{Health: map[string]facts.ComponentHealth{
			"web": {Health: render.Health{Healthy: healthy, Message: map[bool]string{true: "ready 1/1", false: "ready 0/1"}[healthy]}}}}}
		s.Keep.Ran, s.Keep.Applied = true, applied
		err := r.patchStatus(ctx, s)
		return s.App, err
	}
	read := func() *v1beta1.Application {
		got := &v1beta1.Application{}
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	consistent := func(when string) *v1beta1.Application {
		t.Helper()
		got := read()
		if want := status.PhaseOf(got.Status.Conditions); got.Status.Phase != want {
			t.Fatalf("%s: status.status is %q but the conditions say %q: %+v", when, got.Status.Phase, want, got.Status.Conditions)
		}
		return got
	}

	// Pass 0: healthy. The cache keeps this copy (it lags behind).
	stale, err := pass(read(), true, 1)
	if err != nil {
		t.Fatal(err)
	}
	consistent("after a healthy pass")
	// Pass 1, from a fresh copy: the workload became unhealthy.
	if _, err := pass(read(), false, 1); err != nil {
		t.Fatal(err)
	}
	if got := consistent("after an unhealthy pass"); got.Status.Phase != v1beta1.ApplicationUnhealthy {
		t.Fatalf("phase %q after an unhealthy pass, want unhealthy", got.Status.Phase)
	}
	// Pass 2, from the stale copy that does not show pass 1: healthy
	// again, and two objects applied, so its conditions differ from the
	// copy but its phase does not.
	_, err = pass(stale, true, 2)
	got := consistent("after a pass that worked from a stale copy")
	if err == nil {
		// Written: then it must have been written whole.
		if got.Status.Phase != v1beta1.ApplicationRunning {
			t.Fatalf("phase %q after a healthy pass, want running", got.Status.Phase)
		}
	} else if !errors.Is(err, errStatusMoved) {
		t.Fatalf("a write from a stale copy failed with %v, want it refused as moved (read again soon)", err)
	}
	// The next pass reads the Application again and writes the whole
	// status.
	if _, err := pass(read(), true, 2); err != nil {
		t.Fatal(err)
	}
	got = consistent("after the next pass")
	if got.Status.Phase != v1beta1.ApplicationRunning || !metav1IsTrue(got, v1beta1.ConditionReady) {
		t.Fatalf("phase %q, conditions %+v; want running and Ready", got.Status.Phase, got.Status.Conditions)
	}
}

func metav1IsTrue(app *v1beta1.Application, typ string) bool {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
