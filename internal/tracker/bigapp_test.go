package tracker_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// etcdRequestLimit is the largest request etcd accepts (1.5 MiB).
const etcdRequestLimit = 3 << 19

func TestBigApp_FiveHundredResourcesOverThreeMiB(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	opts := managertest.Options()
	opts.KubeAPIQPS, opts.KubeAPIBurst = 1000, 2000
	opts.ReSyncPeriod = time.Hour
	managertest.Start(t, nil, opts)
	start := time.Now()
	controllertest.CreateApp(t, ns, `
metadata: {name: big}
spec:
  components:
    - {name: big, type: test-bulk, properties: {count: 500, keys: 170}}
`)
	controllertest.Eventually(t, 3*time.Minute, "the big app ready", func() error {
		app := controllertest.GetApp(t, ns, "big")
		if app.Status.ObservedGeneration != app.Generation || len(app.Status.AppliedResources) != 500 {
			return controllertest.ErrNotYet
		}
		return nil
	})
	controllertest.WaitReady(t, ns, "big")
	elapsed := time.Since(start)

	var cms corev1.ConfigMapList
	if err := controllertest.Client(t).List(context.Background(), &cms, client.InNamespace(ns),
		client.MatchingLabels{v1beta1.LabelAppName: "big"}); err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 500 {
		t.Fatalf("%d ConfigMaps, want 500", len(cms.Items))
	}
	var rts []v1beta1.ResourceTracker
	for _, rt := range controllertest.TrackersOf(t, ns, "big") {
		if rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned {
			rts = append(rts, rt)
		}
	}
	if len(rts) != 1 {
		t.Fatalf("%d versioned trackers", len(rts))
	}
	raw, stored := tracker.Sizes(&rts[0])
	t.Logf("500 resources dispatched in %s; tracker managedResources raw %d bytes (%.2f MiB), stored %s %d bytes (%.2f MiB)",
		elapsed.Round(time.Millisecond), raw, float64(raw)/(1<<20), rts[0].Spec.Compression.Type, stored, float64(stored)/(1<<20))
	if raw <= 3<<20 {
		t.Errorf("the rendered manifests are %d bytes; this story needs more than 3 MiB", raw)
	}
	if stored >= etcdRequestLimit {
		t.Errorf("the stored tracker is %d bytes, over etcd's limit", stored)
	}
	if rts[0].Spec.Compression.Type != v1beta1.CompressionZstd {
		t.Errorf("compression = %q, want zstd by default", rts[0].Spec.Compression.Type)
	}
}
