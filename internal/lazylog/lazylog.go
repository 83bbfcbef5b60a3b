package lazylog

import (
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// sink holds values for the sink below, which has no values of this
// sink's loggers yet.
type sink struct {
	base logr.LogSink
	kv   []any
}

// Wrap returns l with a sink that keeps the values it is given until a
// line is written. The values l already has stay encoded in l's sink.
func Wrap(l logr.Logger) logr.Logger {
	base := l.GetSink()
	if base == nil {
		return l
	}
	if _, ok := base.(sink); ok {
		return l
	}
	// This sink's methods are one frame more between the caller and the
	// sink below, which reports the caller's file and line.
	if cd, ok := base.(logr.CallDepthLogSink); ok {
		base = cd.WithCallDepth(1)
	}
	return l.WithSink(sink{base: base})
}

// Init does nothing: the sink below was initialised by the logger it
// came from.
func (s sink) Init(logr.RuntimeInfo) {}

func (s sink) Enabled(level int) bool { return s.base.Enabled(level) }

func (s sink) Info(level int, msg string, kv ...any) {
	s.base.Info(level, msg, s.with(kv)...)
}

func (s sink) Error(err error, msg string, kv ...any) {
	s.base.Error(err, msg, s.with(kv)...)
}

// with returns the kept values followed by kv, in a slice of its own.
func (s sink) with(kv []any) []any {
	if len(s.kv) == 0 {
		return kv
	}
	return slices.Concat(s.kv, kv)
}

func (s sink) WithValues(kv ...any) logr.LogSink {
	return sink{base: s.base, kv: slices.Concat(s.kv, kv)}
}

func (s sink) WithName(name string) logr.LogSink {
	return sink{base: s.base.WithName(name), kv: s.kv}
}

func (s sink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.base.(logr.CallDepthLogSink); ok {
		return sink{base: cd.WithCallDepth(depth), kv: s.kv}
	}
	return s
}

// RequestLogger is a controller-runtime LogConstructor with the values of
// its default for a controller named controller of gvk (controller,
// controllerGroup, controllerKind; then per request the kind's object
// reference, namespace and name), held by Wrap's sink.
func RequestLogger(base logr.Logger, controller string, gvk schema.GroupVersionKind) func(*reconcile.Request) logr.Logger {
	log := base.WithValues("controller", controller, "controllerGroup", gvk.Group, "controllerKind", gvk.Kind)
	lazy := Wrap(log)
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		return lazy.WithValues(gvk.Kind, klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name)
	}
}
