package application

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/steward-oam/steward/internal/controller/application/wake"
	"k8s.io/apimachinery/pkg/types"
)

func TestUnhealthyBackoff_DoublesUpToTheAppsOwnPeriod(t *testing.T) {
	for _, tc := range []struct {
		base, interval time.Duration
		streak         int
		want           time.Duration
	}{
		{5 * time.Second, 5 * time.Minute, 1, 5 * time.Second},
		{5 * time.Second, 5 * time.Minute, 2, 10 * time.Second},
		{5 * time.Second, 5 * time.Minute, 4, 40 * time.Second},
		{5 * time.Second, 5 * time.Minute, 7, 5 * time.Minute},
		{5 * time.Second, 5 * time.Minute, 1000, 5 * time.Minute},
		{5 * time.Second, time.Hour, 11, time.Hour},
		{5 * time.Second, time.Hour, 9, 5 * time.Second << 8},
		{5 * time.Second, 3 * time.Second, 1, 3 * time.Second}, // the app's period is shorter than the base
		{0, 5 * time.Minute, 3, 5 * time.Minute},               // back-off turned off
	} {
		if got := wake.UnhealthyBackoff(tc.base, tc.interval, tc.streak); got != tc.want {
			t.Errorf("unhealthyBackoff(%s, %s, %d) = %s, want %s", tc.base, tc.interval, tc.streak, got, tc.want)
		}
	}
}

// requeueLog records the requeue of every pass of one Application.
type requeueLog struct {
	mu    sync.Mutex
	app   types.NamespacedName
	after []time.Duration
}

func (l *requeueLog) record(app types.NamespacedName, after time.Duration) {
	if app != l.app {
		return
	}
	l.mu.Lock()
	l.after = append(l.after, after)
	l.mu.Unlock()
}

func (l *requeueLog) all() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.after...)
}

func TestUnhealthy_BacksOffUpToTheAnnotatedIntervalAndResetsWhenHealthy(t *testing.T) {
	ns := newNamespace(t)
	const base = 200 * time.Millisecond
	requeues := &requeueLog{app: types.NamespacedName{Namespace: ns, Name: "slow"}}
	opts := testOptions()
	opts.UnhealthyRequeueBase = base
	opts.onRequeue = requeues.record
	startManager(t, testCfg, opts)
	createApp(t, ns, `
metadata: {name: slow, annotations: {app.oam.dev/reconcile-interval: 1h}}
spec: {components: [{name: slow, type: test-healthy, properties: {image: nginx}}]}
`)

	// Unhealthy (no Deployment controller runs in envtest): each pass waits
	// twice as long as the one before, starting from the base; never the
	// fixed 15s that overrode the app's own hour.
	eventually(t, 30*time.Second, "five unhealthy passes", func() error {
		if n := len(requeues.all()); n < 5 {
			return fmt.Errorf("%d passes", n)
		}
		return nil
	})
	got := requeues.all()
	if got[0] != base {
		t.Errorf("first unhealthy requeue after %s, want %s (all: %v)", got[0], base, got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != 2*got[i-1] {
			t.Fatalf("requeues %v do not double", got)
		}
	}

	// Healthy: the app's own hour, and the streak is over.
	dep, _ := getDeployment(t, ns, "slow")
	dep.Status.Replicas, dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = 2, 2, 2
	if err := testClient.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "slow")
	if got := requeues.all(); got[len(got)-1] != time.Hour {
		t.Errorf("a healthy app requeued after %s, want its 1h interval", got[len(got)-1])
	}

	// Unhealthy again: the back-off starts over from the base.
	dep, _ = getDeployment(t, ns, "slow")
	dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = 0, 0
	if err := testClient.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	n := len(requeues.all())
	pokeAndWaitPass(t, ns, "slow", 0)
	eventually(t, 10*time.Second, "a pass that finds the app unhealthy again", func() error {
		got := requeues.all()
		for _, d := range got[n:] {
			if d == base {
				return nil
			}
		}
		return fmt.Errorf("requeues since: %v", got[n:])
	})
}
