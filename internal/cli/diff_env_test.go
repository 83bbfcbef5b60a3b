package cli_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/localcp"
	"github.com/steward-oam/steward/internal/testcp"
)

// deliveryHub is a real API server with the CRDs and built-in definitions
// installed and, when started with a controller, Steward reconciling it.
type deliveryHub struct {
	cfg    *rest.Config
	client client.Client
	planes []*testcp.Plane
}

// startDeliveryHub starts a hub plane (plus the named spoke planes) and, with
// withController, the controller manager on the hub, until the test ends.
func startDeliveryHub(t *testing.T, withController bool, spokes ...string) deliveryHub {
	t.Helper()
	planes := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd")}},
		append([]string{"hub"}, spokes...)...)
	h := deliveryHub{cfg: planes[0].Config, planes: planes}
	c, err := cli.NewClient(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.client = c
	if _, err := localcp.ApplyDefinitions(context.Background(), c, builtinDefinitions, localcp.DefaultDefinitionNamespace); err != nil {
		t.Fatalf("installing definitions: %v", err)
	}
	if withController {
		opts := manager.NewOptions()
		opts.MetricsAddr, opts.HealthAddr = "0", "0"
		opts.ReSyncPeriod, opts.MinReconcileInterval, opts.ReSyncJitter = 2*time.Second, time.Second, 0
		opts.SkipNameValidation = true
		mgr, err := manager.NewManager(h.cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = mgr.Start(ctx)
		}()
		// Registered after StartT's cleanup, so it runs first: the
		// controller stops before its API server does.
		t.Cleanup(func() { cancel(); wg.Wait() })
	}
	return h
}

// apply creates or updates the Application of doc, as kubectl apply
// would for these tests.
func (h deliveryHub) apply(t *testing.T, doc string) {
	t.Helper()
	app := &v1beta1.Application{}
	if err := yaml.UnmarshalStrict([]byte(doc), app); err != nil {
		t.Fatalf("decoding %s: %v", doc, err)
	}
	ctx := context.Background()
	live := &v1beta1.Application{}
	err := h.client.Get(ctx, client.ObjectKeyFromObject(app), live)
	if err != nil {
		if err := h.client.Create(ctx, app); err != nil {
			t.Fatalf("creating %s: %v", app.Name, err)
		}
		return
	}
	live.Spec, live.Annotations = app.Spec, app.Annotations
	if err := h.client.Update(ctx, live); err != nil {
		t.Fatalf("updating %s: %v", app.Name, err)
	}
}

// waitRevision waits until Application default/name reports revision as
// delivered, for its current generation. revision names the version as
// `steward history` does (<app>-v<generation>, or <app>-<publishVersion>,
// which the status gives as revisionHash beside the name of the
// version's ApplicationRevision).
func (h deliveryHub) waitRevision(t *testing.T, name, revision string) *v1beta1.Application {
	t.Helper()
	var app v1beta1.Application
	pollUntil(t, 60*time.Second, "revision "+revision, func() error {
		if err := h.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &app); err != nil {
			return err
		}
		if r := app.Status.LatestRevision; r == nil || (r.Name != revision && app.Name+"-"+r.RevisionHash != revision) || app.Status.ObservedGeneration != app.Generation {
			return fmt.Errorf("latestRevision %+v at observed generation %d of %d", r, app.Status.ObservedGeneration, app.Generation)
		}
		return nil
	})
	return &app
}

// pollUntil polls cond until it returns nil or timeout passes.
func pollUntil(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = cond(); last == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, last)
}
