package application

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/watch"
)

// An object made client-side applied between Steward's read of it and
// its apply (the chaos suite found it: seed 5353) is not taken for what
// Steward left: the apply lands on top of it, the annotation and the
// stale field stay, and the next pass reads the object again and upgrades
// it, in both drift-detection modes.
func TestStateKeep_ClientSideEditDuringTheApplyIsUpgradedNextPass(t *testing.T) {
	for _, mode := range []string{watch.ModeTimer, watch.ModeWatch} {
		t.Run(mode, func(t *testing.T) {
			ns := newNamespace(t)
			installK8sObjects(t, ns)
			var armed, injected atomic.Bool
			target := "/api/v1/namespaces/" + ns + "/configmaps/cm"
			cfg := rest.CopyConfig(testCfg)
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if req.Method == http.MethodPatch && req.URL.Path == target && armed.CompareAndSwap(true, false) {
						// The object was read; the apply is on its way.
						if err := controllertest.MakeClientSideApplied(context.Background(), testClient, ns, "cm", "stale"); err != nil {
							t.Errorf("making cm client-side: %v", err)
						}
						injected.Store(true)
					}
					return rt.RoundTrip(req)
				})
			})
			opts := testOptions()
			opts.DriftDetection = mode
			startManager(t, cfg, opts)
			createApp(t, ns, objectsApp("cm-app", "", configMapIn(ns, "cm")))
			waitReady(t, ns, "cm-app")

			armed.Store(true)
			ctx := context.Background()
			cm := &corev1.ConfigMap{}
			if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm"}, cm); err != nil {
				t.Fatal(err)
			}
			cm.Data["k"] = "edited by hand"
			if err := testClient.Update(ctx, cm); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "cm upgraded", func() error {
				live := &corev1.ConfigMap{}
				if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm"}, live); err != nil {
					return err
				}
				if !injected.Load() || live.Data["k"] != "v" || live.Data["stale"] != "" || live.Annotations[v1beta1.AnnotationLastApplied] != "" {
					return fmt.Errorf("injected %v, data %v, last-applied %v", injected.Load(), live.Data, live.Annotations[v1beta1.AnnotationLastApplied] != "")
				}
				return nil
			})
		})
	}
}
