package lazylog

import (
	"io"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// BenchmarkRequestLogger is the logger of one reconcile as the
// controller's production logger (zap, JSON, info level, sampled) makes
// it, with the reconcile ID controller-runtime adds, and one decision
// line at V(1), which is off: eager is controller-runtime's default
// constructor, lazy this package's.
func BenchmarkRequestLogger(b *testing.B) {
	base := zap.New(zap.WriteTo(io.Discard))
	gvk := schema.GroupVersionKind{Group: "core.oam.dev", Version: "v1beta1", Kind: "Application"}
	req := &reconcile.Request{}
	req.Namespace, req.Name = "shop", "web"
	eagerBase := base.WithValues("controller", "application", "controllerGroup", gvk.Group, "controllerKind", gvk.Kind)
	for _, c := range []struct {
		name string
		make func(*reconcile.Request) logr.Logger
	}{
		{"eager", func(r *reconcile.Request) logr.Logger {
			return eagerBase.WithValues(gvk.Kind, klog.KRef(r.Namespace, r.Name)).WithValues("namespace", r.Namespace, "name", r.Name)
		}},
		{"lazy", RequestLogger(base, "application", gvk)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				log := c.make(req).WithValues("reconcileID", "6f1c0c56-0b1e-4b8e-9d0a-7f4c9a1f2e3d")
				log.V(1).Info("Unchanged", "component", "web")
			}
		})
	}
}
