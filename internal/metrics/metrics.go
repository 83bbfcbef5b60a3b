package metrics

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// namespace prefixes every metric name.
const namespace = "steward"

// Stage names one phase of an Application reconcile, the value of the
// stage label of steward_reconcile_stage_duration_seconds.
type Stage string

// Stages of a reconcile, in the order they run.
const (
	StageRender    Stage = "render"
	StageApply     Stage = "apply"
	StageStateKeep Stage = "statekeep"
	StageHealth    Stage = "health"
	StageGC        Stage = "gc"
	StageStatus    Stage = "status"
)

// Tracker size encodings, the values of the encoding label of
// steward_tracker_size_bytes.
const (
	EncodingRaw    = "raw"
	EncodingStored = "stored"
)

// Metrics holds Steward's collectors. Build it once with New; its methods
// are safe for concurrent use and do nothing on a nil *Metrics.
type Metrics struct {
	stageDuration     *prometheus.HistogramVec
	stateKeepDuration prometheus.Histogram
	apps              *appGauges
	apiRequests       *prometheus.CounterVec
	driftRepaired     *prometheus.CounterVec
	fieldsTaken       *prometheus.CounterVec
	gcDeletions       *prometheus.CounterVec
	renderCache       *prometheus.CounterVec
	watchInformers    *prometheus.GaugeVec
	watchEvents       *prometheus.CounterVec
	keepSkipped       prometheus.Counter
	cueEvaluations    *prometheus.CounterVec
	cueBudget         *prometheus.CounterVec
	chartCache        *prometheus.CounterVec
	cueDuration       prometheus.Histogram
	cueStarted        prometheus.Counter
	cueCPU            prometheus.CounterFunc
	// cueCPUSource reads the evaluators' CPU time; set by WatchEvaluatorCPU.
	cueCPUSource atomic.Pointer[func() time.Duration]
}

// Results of a watch event, the values of the result label of
// steward_watch_events_total.
const (
	// WatchChanged: someone else changed or deleted a managed object; its
	// Application was enqueued.
	WatchChanged = "changed"
	// WatchOwn: the event is Steward's own write.
	WatchOwn = "own"
	// WatchUntracked: the object is not (or not yet) applied by Steward in
	// this process.
	WatchUntracked = "untracked"
)

// New creates Steward's collectors and registers them on reg. A collector
// already registered under the same name is reused, so New may be called
// more than once on one registry (several managers in one test process).
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		stageDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "reconcile_stage_duration_seconds",
			Help:    "Time an Application reconcile spends in each stage: render, apply, statekeep, health, gc, status.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1ms to 33s
		}, []string{"stage"}),
		stateKeepDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "statekeep_pass_duration_seconds",
			Help:    "Time one StateKeep pass (a pass that dispatches no new version) takes over every recorded object of an Application.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 16), // 5ms to 164s
		}),
		apps: newAppGauges(),
		apiRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "api_requests_total",
			Help: "Requests to Kubernetes API servers by verb (get, list, watch, create, update, patch, delete, deletecollection, nonresource) and HTTP status code (\"error\" when no response came back).",
		}, []string{"verb", "code"}),
		driftRepaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "drift_repaired_total",
			Help: "Objects StateKeep found changed or deleted and restored, by kind.",
		}, []string{"kind"}),
		fieldsTaken: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "apply_conflicts_total",
			Help: "Fields of a manifest another field manager had set to another value, taken by Steward's server-side apply, by kind and previous manager.",
		}, []string{"kind", "manager"}),
		gcDeletions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "gc_deletions_total",
			Help: "Objects deleted by garbage collection because no current version records them, by kind.",
		}, []string{"kind"}),
		renderCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "render_cache_lookups_total",
			Help: "Lookups of compiled definition templates by definition kind and result (hit, miss); a miss compiles CUE.",
		}, []string{"kind", "result"}),
		watchInformers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "watch_informers",
			Help: "Metadata-only informers of managed kinds running in watch mode (--drift-detection=watch), by cluster.",
		}, []string{"cluster"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "watch_events_total",
			Help: "Watch events on managed objects in watch mode, by result: changed (someone else changed or deleted the object; its Application was enqueued), own (Steward's own write), untracked.",
		}, []string{"result"}),
		keepSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "statekeep_skipped_total",
			Help: "Objects a StateKeep pass did not read whole or patch because they were at the resourceVersion Steward last applied or read: by the watch cache in watch mode, by a metadata-only read in timer mode.",
		}),
		cueEvaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "cue_evaluations_total",
			Help: "CUE evaluations (templates, health policies, custom status, details, workflow expressions) by outcome: ok, error (the definition or its input is at fault), failed (the evaluator failed), or the limit hit (time, memory, object-size, render-size); cached=true when a failure remembered from an earlier evaluation of the same input answered.",
		}, []string{"outcome", "cached"}),
		cueBudget: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "cue_evaluation_budget_exceeded_total",
			Help: "CUE evaluations stopped by a limit of the evaluation budget (time, memory, object-size, render-size; objects for renders with too many objects), remembered failures included.",
		}, []string{"limit"}),
		chartCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "helm_chart_cache_total",
			Help: "Helm chart lookups by result: hit (served from the cache), miss (not cached or expired), fetch (a download made), error (a download failed).",
		}, []string{"result"}),
		cueDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "cue_evaluation_duration_seconds",
			Help:    "Time one CUE evaluation takes, from the request to its answer, waiting for a free evaluator included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16), // 0.5ms to 16s
		}),
		cueStarted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "cue_evaluators_started_total",
			Help: "CUE evaluator processes started: at first use, and after one was stopped by a limit.",
		}),
	}
	m.cueCPU = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: namespace, Name: "cue_evaluator_cpu_seconds_total",
		Help: "CPU time the CUE evaluator processes used, ended ones included: add it to process_cpu_seconds_total for Steward's whole CPU.",
	}, func() float64 {
		if fn := m.cueCPUSource.Load(); fn != nil {
			return (*fn)().Seconds()
		}
		return 0
	})
	var errs []error
	m.stageDuration = register(reg, m.stageDuration, &errs)
	m.stateKeepDuration = register(reg, m.stateKeepDuration, &errs)
	m.apps = register(reg, m.apps, &errs)
	m.apiRequests = register(reg, m.apiRequests, &errs)
	m.driftRepaired = register(reg, m.driftRepaired, &errs)
	m.fieldsTaken = register(reg, m.fieldsTaken, &errs)
	m.gcDeletions = register(reg, m.gcDeletions, &errs)
	m.renderCache = register(reg, m.renderCache, &errs)
	m.watchInformers = register(reg, m.watchInformers, &errs)
	m.watchEvents = register(reg, m.watchEvents, &errs)
	m.keepSkipped = register(reg, m.keepSkipped, &errs)
	m.cueEvaluations = register(reg, m.cueEvaluations, &errs)
	m.cueBudget = register(reg, m.cueBudget, &errs)
	m.chartCache = register(reg, m.chartCache, &errs)
	m.cueDuration = register(reg, m.cueDuration, &errs)
	m.cueStarted = register(reg, m.cueStarted, &errs)
	m.cueCPU = register(reg, m.cueCPU, &errs)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("registering steward metrics: %w", err)
	}
	return m, nil
}

// register registers c, or returns the collector already registered under
// its name when it has the same type.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errs *[]error) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	*errs = append(*errs, err)
	return c
}

// ObserveStage records how long one stage of a reconcile took.
func (m *Metrics) ObserveStage(stage Stage, d time.Duration) {
	if m == nil {
		return
	}
	m.stageDuration.WithLabelValues(string(stage)).Observe(d.Seconds())
}

// StartStage starts timing a stage and returns the function that records
// it: `defer m.StartStage(metrics.StageApply)()`.
func (m *Metrics) StartStage(stage Stage) func() {
	if m == nil {
		return func() {}
	}
	start := time.Now()
	return func() { m.ObserveStage(stage, time.Since(start)) }
}

// ObserveStateKeepPass records the duration of one StateKeep pass over an
// Application's recorded objects.
func (m *Metrics) ObserveStateKeepPass(d time.Duration) {
	if m == nil {
		return
	}
	m.stateKeepDuration.Observe(d.Seconds())
}

// SetTrackedResources sets how many objects an Application's trackers
// record.
func (m *Metrics) SetTrackedResources(namespace, app string, n int) {
	if m == nil {
		return
	}
	m.apps.update(namespace, app, func(s *appSizes) { s.tracked, s.hasTracked = int64(n), true })
}

// SetTrackerSize sets the size in bytes of an Application's current
// versioned tracker, the one that grows with the app: raw is the manifests
// as JSON, stored what the API server holds after compression.
func (m *Metrics) SetTrackerSize(namespace, app string, raw, stored int) {
	if m == nil {
		return
	}
	m.apps.update(namespace, app, func(s *appSizes) {
		s.raw, s.stored, s.hasSize = int64(raw), int64(stored), true
	})
}

// DriftRepaired counts one object of kind that StateKeep restored.
func (m *Metrics) DriftRepaired(kind string) {
	if m == nil {
		return
	}
	m.driftRepaired.WithLabelValues(kind).Inc()
}

// FieldTaken counts one field of kind Steward took from manager.
func (m *Metrics) FieldTaken(kind, manager string) {
	if m == nil {
		return
	}
	m.fieldsTaken.WithLabelValues(kind, manager).Inc()
}

// GCDeleted counts one object of kind deleted by garbage collection.
func (m *Metrics) GCDeleted(kind string) {
	if m == nil {
		return
	}
	m.gcDeletions.WithLabelValues(kind).Inc()
}

// ObserveRenderCache counts one compile-cache lookup of the renderer. Its
// signature is render.CacheObserver's:
// render.NewRenderer(render.WithCacheObserver(m.ObserveRenderCache)).
func (m *Metrics) ObserveRenderCache(kind string, hit bool) {
	if m == nil {
		return
	}
	result := "miss"
	if hit {
		result = "hit"
	}
	m.renderCache.WithLabelValues(kind, result).Inc()
}

// SetWatchInformers records the informers running for a cluster; 0
// removes the cluster's series.
func (m *Metrics) SetWatchInformers(cluster string, n int) {
	if m == nil {
		return
	}
	if n == 0 {
		m.watchInformers.DeleteLabelValues(cluster)
		return
	}
	m.watchInformers.WithLabelValues(cluster).Set(float64(n))
}

// WatchEvent counts one watch event on a managed object by result.
func (m *Metrics) WatchEvent(result string) {
	if m == nil {
		return
	}
	m.watchEvents.WithLabelValues(result).Inc()
}

// KeepSkipped counts one object a StateKeep pass found unchanged (watch
// cache, or metadata-only read in timer mode) and did not read whole.
func (m *Metrics) KeepSkipped() {
	if m == nil {
		return
	}
	m.keepSkipped.Inc()
}

// observeRequest counts one API request.
func (m *Metrics) observeRequest(verb string, code int) {
	c := "error"
	if code > 0 {
		c = strconv.Itoa(code)
	}
	m.apiRequests.WithLabelValues(verb, c).Inc()
}

// DeleteApp deletes every series of one Application, so that a deleted
// Application leaves no metrics behind. Call it once the Application's
// finalizer is removed.
func (m *Metrics) DeleteApp(namespace, app string) {
	if m == nil {
		return
	}
	m.apps.delete(namespace, app)
}

// Outcomes of a CUE evaluation that are not a limit.
const (
	EvaluationOK     = "ok"
	EvaluationError  = "error"
	EvaluationFailed = "failed"
)

// Evaluated counts one CUE evaluation by outcome: EvaluationOK,
// EvaluationError, EvaluationFailed or the limit it hit. It implements
// sandbox.Observer.
func (m *Metrics) Evaluated(outcome string, cached bool, d time.Duration) {
	if m == nil {
		return
	}
	m.cueEvaluations.WithLabelValues(outcome, strconv.FormatBool(cached)).Inc()
	switch outcome {
	case EvaluationOK, EvaluationError, EvaluationFailed:
	default:
		m.cueBudget.WithLabelValues(outcome).Inc()
	}
	if !cached {
		m.cueDuration.Observe(d.Seconds())
	}
}

// BudgetExceeded counts a render refused by a render limit checked after
// evaluation (the number of objects, their size).
func (m *Metrics) BudgetExceeded(limit string) {
	if m == nil || limit == "" {
		return
	}
	m.cueBudget.WithLabelValues(limit).Inc()
}

// ChartCache counts one Helm chart cache event: hit, miss, fetch or
// error.
func (m *Metrics) ChartCache(result string) {
	if m == nil {
		return
	}
	m.chartCache.WithLabelValues(result).Inc()
}

// EvaluatorStarted counts one CUE evaluator process started. It
// implements sandbox.Observer.
func (m *Metrics) EvaluatorStarted() {
	if m == nil {
		return
	}
	m.cueStarted.Inc()
}

// WatchEvaluatorCPU makes steward_cue_evaluator_cpu_seconds_total read
// fn, the evaluator pool's CPUTime.
func (m *Metrics) WatchEvaluatorCPU(fn func() time.Duration) {
	if m == nil {
		return
	}
	m.cueCPUSource.Store(&fn)
}
