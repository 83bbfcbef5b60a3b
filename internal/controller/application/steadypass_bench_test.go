package application

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/lazylog"
	"github.com/steward-oam/steward/internal/watch"
)

// soakApp is the bench soak's Application (bench/scenario/soak.go): a
// webservice with the scaler, expose and labels traits, of the built-in
// definitions.
const soakApp = `
metadata: {name: shop}
spec:
  components:
    - name: shop
      type: webservice
      properties: {image: "registry.example.com/shop/shop:1.4.2", ports: [{port: 8080}], env: [{name: LOG_LEVEL, value: info}], cpu: 250m, memory: 256Mi}
      traits:
        - {type: scaler, properties: {replicas: 2}}
        - {type: expose, properties: {port: [8080]}}
        - {type: labels, properties: {team: shop, tier: web}}
`

// BenchmarkReconcile_SteadyPass is one re-sync pass of a delivered,
// healthy, unchanged Application, as the soak re-syncs it: in watch mode
// (its objects skipped on the watch cache) and in timer mode (one
// metadata-only read per object), against a real API server. The pass
// runs as the controller runs it, with its per-request logger. Bytes and
// allocations per pass are what the garbage collector works through; a
// pass that writes anything fails the benchmark, which then measures no
// steady state. Run it with make bench-reconcile.
func BenchmarkReconcile_SteadyPass(b *testing.B) {
	for _, mode := range []string{watch.ModeWatch, watch.ModeTimer} {
		b.Run(mode, func(b *testing.B) {
			ns := newNamespace(b)
			controllertest.InstallBuiltinDefinitions(b, ns, "webservice", "scaler", "expose", "labels")
			log := &requestLog{}
			opts := testOptions()
			opts.DriftDetection = mode
			opts.ReSyncPeriod = time.Hour // only the benchmark's own calls run passes
			opts.watchSupervise = 200 * time.Millisecond
			var r *Reconciler
			opts.onReconciler = func(x *Reconciler) { r = x }
			startManager(b, log.wrap(testCfg), opts)
			createApp(b, ns, soakApp)
			rolledOut(b, ns, "shop", 2)
			waitReady(b, ns, "shop")
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "shop"}}
			newLog := lazylog.RequestLogger(ctrl.Log, "application", v1beta1.GroupVersion.WithKind("Application"))
			pass := func() {
				ctx := ctrl.LoggerInto(context.Background(), newLog(&req).WithValues("reconcileID", "bench"))
				if _, err := r.Reconcile(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			// The process's first pass reads every object; watch mode's
			// informers sync meanwhile.
			time.Sleep(2 * time.Second)
			for range 3 {
				pass()
			}
			log.reset()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				pass()
			}
			b.StopTimer()
			if w := log.writes(); len(w) > 0 {
				b.Fatalf("steady passes wrote: %v", w)
			}
		})
	}
}

// rolledOut plays the Deployment controller for webservice's health
// policy: every replica updated and ready, the generation observed.
func rolledOut(t testing.TB, ns, name string, replicas int32) {
	t.Helper()
	eventually(t, 20*time.Second, "deployment "+ns+"/"+name+" rolled out", func() error {
		dep, err := getDeployment(t, ns, name)
		if err != nil {
			return err
		}
		st := &dep.Status
		st.ObservedGeneration = dep.Generation
		st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas = replicas, replicas, replicas, replicas
		return testClient.Status().Update(context.Background(), dep)
	})
}
