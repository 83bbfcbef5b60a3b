package managertest

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/testcp"
	"github.com/steward-oam/steward/internal/watch"
)

// Options are the controller's options for a story: passes every 2s at
// most once a second per Application and without jitter, so that a story
// waits seconds; timer drift detection, because the stories are about what
// a re-sync pass does (watch mode has its own); controller names that
// every test's manager may register again; no metrics or health listeners;
// and loopback allowed by the egress policy, because the stories' chart
// repositories, webhooks and registries are loopback servers (a story
// about the default policy sets EgressAllow back to nil).
func Options() manager.Options {
	o := manager.NewOptions()
	o.MetricsAddr = "0"
	o.HealthAddr = "0"
	o.ReSyncPeriod = 2 * time.Second
	o.MinReconcileInterval = time.Second
	o.ReSyncJitter = 0
	o.SkipNameValidation = true
	o.DriftDetection = watch.ModeTimer
	o.EgressAllow = []string{"127.0.0.1/32", "::1/128"}
	return o
}

// Start runs the whole controller (manager.NewManager) with opts against
// cfg, the suite's control plane when nil, until the test ends, and
// returns a function that stops it earlier, as if the process had been
// killed: nothing runs after it returns.
func Start(t testing.TB, cfg *rest.Config, opts manager.Options) func() {
	t.Helper()
	if cfg == nil {
		cfg = controllertest.Config(t)
	}
	mgr, err := manager.NewManager(cfg, opts)
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	return controllertest.Start(t, mgr)
}

// JoinedSpoke starts one spoke control plane, joins it to the suite's
// control plane under name (as `steward cluster join` does) and detaches
// it when the test ends; it returns the plane and a client of it.
func JoinedSpoke(t testing.TB, name string) (*testcp.Plane, client.Client) {
	t.Helper()
	hub := controllertest.Client(t)
	ctx := context.Background()
	spoke := testcp.StartT(t, testcp.Options{}, name)[0]
	c, err := spoke.Client(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Join(ctx, hub, cli.JoinOptions{KubeconfigPath: spoke.KubeconfigPath, Name: spoke.Name, Force: true}); err != nil {
		t.Fatalf("joining %s: %v", spoke.Name, err)
	}
	t.Cleanup(func() { _, _ = cli.Detach(ctx, hub, cli.DetachOptions{Name: spoke.Name, Force: true}) })
	return spoke, c
}
