// Package metrics defines Steward's Prometheus metrics, all prefixed
// steward_, and the few methods the controller records them with.
//
// Usage:
//
//	m, err := metrics.New(ctrlmetrics.Registry) // once, in NewManager
//	cfg.Wrap(m.InstrumentTransport)             // API requests by verb and code
//	r := render.NewRenderer(render.WithCacheObserver(m.ObserveRenderCache))
//
//	defer m.StartStage(metrics.StageRender)()   // in each phase
//	m.SetTrackedResources(ns, app, n)
//	m.DeleteApp(ns, app)                        // when the app is finalized
//
// Implementation notes:
//
//   - All state lives in one *Metrics built by New; there are no package
//     globals besides what the Registerer holds. New registers on the given
//     Registerer (controller-runtime's metrics.Registry in production, so the
//     manager's /metrics endpoint serves them; a fresh prometheus.Registry in
//     tests). When a collector of the same name is already registered there,
//     as when a test process starts several managers, New reuses it, so
//     calling New twice on one registry is safe and both share the series.
//   - Every method works on a nil *Metrics and does nothing, so code paths
//     and tests that do not care about metrics pass nil.
//   - Cardinality is bounded: per-application series (tracked resources,
//     tracker sizes) carry namespace and app and are deleted by DeleteApp;
//     kind labels carry the object kind only, never a name.
//
// Files:
//
//	apps.go       per-Application gauges (tracked resources, tracker sizes), deleted with their Application
//	metrics.go    Metrics and New: every steward_ metric, and the stages a reconcile is timed by
//	transport.go  InstrumentTransport: API requests counted by verb, resource and code
package metrics
