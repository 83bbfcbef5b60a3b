package record

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Results are everything a run measured; they are written as JSON and
// rendered into docs/benchmarks.md.
type Results struct {
	Profile     Profile      `json:"profile"`
	Started     time.Time    `json:"started"`
	Elapsed     Duration     `json:"elapsed"`
	Host        Host         `json:"host"`
	QPS         float64      `json:"qps"`
	Burst       int          `json:"burst"`
	Controllers []Controller `json:"controllers"`
	Variants    []Controller `json:"bigAppVariants,omitempty"`
	// Note says what the run measures, e.g. the code before a fix.
	Note string `json:"note,omitempty"`
	// Earlier are runs whose scenarios were kept by Merge.
	Earlier []EarlierRun `json:"earlier,omitempty"`

	Memory      []MemoryResult      `json:"memory,omitempty"`
	Steady      []SteadyResult      `json:"steady,omitempty"`
	Drift       []DriftResult       `json:"drift,omitempty"`
	Fleet       []FleetResult       `json:"fleet,omitempty"`
	BigApp      []BigAppResult      `json:"bigApp,omitempty"`
	Managed     []ManagedResult     `json:"managed,omitempty"`
	Scale       []ScaleResult       `json:"scale,omitempty"`
	Shards      []ShardsResult      `json:"shards,omitempty"`
	Soak        []SoakResult        `json:"soak,omitempty"`
	Helm        []HelmResult        `json:"helm,omitempty"`
	Definitions []DefinitionsResult `json:"definitions,omitempty"`
	// CPU is what each controller process spent in each scenario.
	CPU []ScenarioCPU `json:"cpu,omitempty"`
	// SoakBefore is an earlier soak the report compares with (stewardbench
	// --soak-before), e.g. of the code before a memory fix.
	SoakBefore *SoakReference `json:"soakBefore,omitempty"`
	// Errors are scenarios that failed; the run goes on without them.
	Errors []string `json:"errors,omitempty"`
}

// ScenarioCPU is the CPU a controller's process spent in one scenario,
// from its start until the scenario ended (the last process of a
// scenario that restarts its controller; each replica of a sharded one is
// measured in the shards table instead).
type ScenarioCPU struct {
	Scenario   string `json:"scenario"`
	Controller string `json:"controller"`
	CPUCost
	// Seconds is how long the process ran; Cores is CPUSeconds over it.
	Seconds float64 `json:"seconds"`
	Cores   float64 `json:"cores"`
}

// EarlierRun is a run some scenarios of merged results come from.
type EarlierRun struct {
	Scenarios []string  `json:"scenarios"`
	Profile   string    `json:"profile"`
	Started   time.Time `json:"started"`
	Commit    string    `json:"commit,omitempty"`
	Note      string    `json:"note,omitempty"`
}

// Host describes the machine, so numbers are read against it.
type Host struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"goVersion"`
	Commit    string `json:"commit,omitempty"`
}

// MemoryResult is one controller's memory at each number of unrelated
// Deployments.
type MemoryResult struct {
	Controller string `json:"controller"`
	Apps       int    `json:"apps"`
	Resources  int    `json:"resources"`
	// UnrelatedBytes is the JSON size of one unrelated Deployment as the
	// apiserver returns it.
	UnrelatedBytes int           `json:"unrelatedBytes"`
	Points         []MemoryPoint `json:"points"`
}

// MemoryPoint is the memory of a controller at one level: heap in use
// right after garbage collection (the lowest sample taken after one) and
// the median RSS.
type MemoryPoint struct {
	Unrelated       int     `json:"unrelated"`
	HeapInuse       float64 `json:"heapInuseBytes"`
	HeapInuseMedian float64 `json:"heapInuseMedianBytes"`
	RSS             float64 `json:"rssBytes"`
	GCs             float64 `json:"gcs"`
	// SampleCount is how many samples the level took; the samples
	// themselves are not kept, to keep results small.
	SampleCount int `json:"sampleCount"`
	// ForcedGC is true when the harness forced each collection through
	// /debug/pprof/heap?gc=1 (HeapInuse is then the median of those).
	ForcedGC bool `json:"forcedGC,omitempty"`
}

// HeapStats is the Go heap of a controller right after a collection.
type HeapStats struct {
	// HeapInuse is runtime.MemStats.HeapInuse: bytes in spans holding at
	// least one object, the figure go_memstats_heap_inuse_bytes exports.
	HeapInuse float64 `json:"heapInuseBytes"`
	// HeapAlloc is the bytes of live objects (no span fragmentation).
	HeapAlloc float64 `json:"heapAllocBytes"`
	RSS       float64 `json:"rssBytes"`
}

// Growth is the relative growth of heap in use from the first to the last
// point.
func (m MemoryResult) Growth() float64 {
	if len(m.Points) < 2 || m.Points[0].HeapInuse == 0 {
		return 0
	}
	return m.Points[len(m.Points)-1].HeapInuse/m.Points[0].HeapInuse - 1
}

// SteadyResult is one controller's API cost in steady state.
type SteadyResult struct {
	Controller string   `json:"controller"`
	Apps       int      `json:"apps"`
	Resources  int      `json:"resources"`
	Interval   Duration `json:"interval"`
	Window     Duration `json:"window"`
	// Reconciles is the increase of controller_runtime_reconcile_total in
	// the window; Passes is what the interval predicts (apps × window ÷
	// interval). Per-pass numbers divide by Reconciles when the controller
	// exports it, else by Passes.
	Reconciles float64 `json:"reconciles"`
	Passes     float64 `json:"expectedPasses"`
	// Skipped is the increase of steward_statekeep_skipped_total: objects
	// a pass found unchanged in the watch cache and neither read nor
	// patched (watch mode); SkippedPerResource divides it like
	// PerResource. HasSkipped is false for a controller without the metric.
	Skipped            float64            `json:"statekeepSkipped,omitempty"`
	SkippedPerResource float64            `json:"statekeepSkippedPerResourcePerPass,omitempty"`
	HasSkipped         bool               `json:"hasStatekeepSkipped,omitempty"`
	Requests           []RequestCount     `json:"requests"`
	EventWrites        float64            `json:"eventWrites"`
	PerResource        float64            `json:"requestsPerResourcePerPass"`
	ByVerb             map[string]float64 `json:"requestsPerResourcePerPassByVerb"`
	EventsPerPass      float64            `json:"eventWritesPerPass"`
	// CPU is the controller's process-tree CPU in the window, with its
	// reconciles; Cores is that CPU over the window.
	CPU   CPUCost `json:"cpu,omitempty"`
	Cores float64 `json:"cores,omitempty"`
}

// ManagedResult is one controller's heap against the number of objects it
// manages.
type ManagedResult struct {
	Controller   string `json:"controller"`
	ResourcesPer int    `json:"resourcesPerApp"`
	// Points start with the controller managing nothing (Objects 0), the
	// baseline PerObject subtracts.
	Points []ManagedPoint `json:"points"`
}

// ManagedPoint is a controller's memory while it manages Objects objects
// of Apps Applications.
type ManagedPoint struct {
	Objects   int     `json:"objects"`
	Apps      int     `json:"apps"`
	HeapInuse float64 `json:"heapInuseBytes"`
	RSS       float64 `json:"rssBytes"`
	ForcedGC  bool    `json:"forcedGC,omitempty"`
	// Ready is how long the apps added for this level took to be Ready.
	Ready Duration `json:"ready"`
	// Informers is steward_watch_informers summed over clusters (watch
	// mode), 0 for a controller without the metric.
	Informers float64 `json:"watchInformers,omitempty"`
}

// Base returns the point with no managed objects.
func (m ManagedResult) Base() (ManagedPoint, bool) {
	if len(m.Points) == 0 || m.Points[0].Objects != 0 {
		return ManagedPoint{}, false
	}
	return m.Points[0], true
}

// PerObject is the heap in use a point holds beyond the baseline, per
// managed object; 0 for the baseline itself or without one.
func (m ManagedResult) PerObject(p ManagedPoint) float64 {
	base, ok := m.Base()
	if !ok || p.Objects == 0 {
		return 0
	}
	return (p.HeapInuse - base.HeapInuse) / float64(p.Objects)
}

// Slope is the heap gained from the first level with objects to the last,
// per object added: what each managed object costs once the fixed costs
// of a first app (informers, compiled definitions, caches) are paid.
func (m ManagedResult) Slope() (float64, bool) {
	var first, last ManagedPoint
	found := false
	for _, p := range m.Points {
		if p.Objects == 0 {
			continue
		}
		if !found {
			first, found = p, true
		}
		last = p
	}
	if !found || last.Objects <= first.Objects {
		return 0, false
	}
	return (last.HeapInuse - first.HeapInuse) / float64(last.Objects-first.Objects), true
}

// Top returns the point with the most objects.
func (m ManagedResult) Top() (ManagedPoint, bool) {
	if len(m.Points) == 0 {
		return ManagedPoint{}, false
	}
	return m.Points[len(m.Points)-1], true
}

// Incremental is the heap gained from the point before i to point i, per
// object added; false for the first point.
func (m ManagedResult) Incremental(i int) (float64, bool) {
	if i <= 0 || i >= len(m.Points) || m.Points[i].Objects <= m.Points[i-1].Objects {
		return 0, false
	}
	p, q := m.Points[i-1], m.Points[i]
	return (q.HeapInuse - p.HeapInuse) / float64(q.Objects-p.Objects), true
}

// ScaleResult is one controller's run of the scale scenario.
type ScaleResult struct {
	Controller string  `json:"controller"`
	Apps       int     `json:"apps"`
	Resources  int     `json:"resources"`
	QPS        float64 `json:"qps"`
	Burst      int     `json:"burst"`
	// Converged is from the process start until every app was Ready;
	// Requests is the work the controller sent meanwhile.
	Converged Duration `json:"converged"`
	Requests  float64  `json:"workRequests"`
	// Settled is heap and RSS once converged and settled.
	Settled MemoryPoint `json:"settled"`
	// Pass is from a restart until the new process had reconciled every
	// app once, with the requests it sent, the bound they set (busiest
	// kind, as in the fleet scenario) and the peaks of heap in use (not
	// after GC) and RSS sampled meanwhile.
	Pass            Duration `json:"pass"`
	PassRequests    float64  `json:"passRequests"`
	PassBound       Duration `json:"passBound"`
	PassBusiestKind string   `json:"passBusiestKind"`
	PassPeakHeap    float64  `json:"passPeakHeapInuseBytes"`
	PassPeakRSS     float64  `json:"passPeakRSSBytes"`
	// ConvergeCPU is what the first process spent until every app was
	// Ready; Steady its CPU over a window at the default re-sync period
	// once settled; Drift the hand changes made after it, each timed until
	// repaired; PassCPU what the restarted process spent on its full pass.
	ConvergeCPU CPUCost      `json:"convergeCPU"`
	Steady      SteadyWindow `json:"steady"`
	Drift       FleetDrift   `json:"drift"`
	PassCPU     CPUCost      `json:"passCPU"`
}

// ShardsResult is one controller's run of the shards scenario.
type ShardsResult struct {
	Controller string `json:"controller"`
	Apps       int    `json:"apps"`
	Resources  int    `json:"resources"`
	Shards     int    `json:"shards"`
	// SingleConverged and Single are one controller's time until every
	// app was Ready (from its start) and its memory once settled.
	SingleConverged Duration    `json:"singleConverged"`
	Single          MemoryPoint `json:"single"`
	// ShardedConverged is from the replicas' start until every app was
	// Ready (the apps are created right after the start).
	ShardedConverged Duration        `json:"shardedConverged"`
	Replicas         []ReplicaResult `json:"replicas"`
	// SingleSteady is one controller's CPU over the steady window; Drift
	// the hand changes made to the sharded fleet, each timed until
	// repaired by the replica of its shard.
	SingleSteady SteadyWindow `json:"singleSteady"`
	Drift        FleetDrift   `json:"drift"`
}

// ReplicaResult is one shard's replica once the fleet is Ready.
type ReplicaResult struct {
	Shard  string      `json:"shard"`
	Apps   int         `json:"apps"`
	Memory MemoryPoint `json:"memory"`
	// Steady is the replica's CPU over the steady window.
	Steady SteadyWindow `json:"steady"`
}

// PassRatio is the pass's duration over its bound.
func (s ScaleResult) PassRatio() float64 { return boundRatio(s.Pass, s.PassBound) }

// boundRatio is d over bound, 0 without a bound.
func boundRatio(d, bound Duration) float64 {
	if bound == 0 {
		return 0
	}
	return d.Seconds() / bound.Seconds()
}

// FleetResult is one controller's cold-start convergence of a fleet.
type FleetResult struct {
	Controller string  `json:"controller"`
	Apps       int     `json:"apps"`
	Resources  int     `json:"resources"`
	QPS        float64 `json:"qps"`
	// Burst is the client burst the fleet ran at; zero in results
	// recorded before it was kept (the run's burst applied then).
	Burst     int            `json:"burst,omitempty"`
	Converged Duration       `json:"converged"`
	Requests  []RequestCount `json:"requests"`
	// Work is the number of requests (events and leases aside) the
	// controller sent until the last app was ready.
	Work float64 `json:"workRequests"`
	// Bound is the fastest a controller sending those requests could
	// converge under its client rate limits. client-go gives every REST
	// client its own token bucket and controller-runtime makes one REST
	// client per kind, so the bound is set by the busiest kind:
	// (its requests − burst) ÷ QPS.
	Bound       Duration `json:"bound"`
	BusiestKind string   `json:"busiestKind"`
	// OneLimiterBound is Work ÷ QPS, the bound if all requests shared one
	// token bucket.
	OneLimiterBound Duration `json:"oneLimiterBound"`
	// CPUCost is from the process start until the last app was ready;
	// zero in results recorded before the harness measured CPU.
	CPUCost
}

// Ratio is convergence time over the bound.
func (f FleetResult) Ratio() float64 { return boundRatio(f.Converged, f.Bound) }

// BigAppResult is one controller's dispatch of one big Application.
type BigAppResult struct {
	Controller string   `json:"controller"`
	Resources  int      `json:"resources"`
	Dispatch   Duration `json:"dispatch"`
	Requests   float64  `json:"workRequests"`
	// Trackers, RawBytes and StoredBytes describe the ResourceTrackers of
	// the app; zero for a controller that writes none. RawBytes is the
	// JSON of the decoded managed resources, StoredBytes the JSON of the
	// tracker objects as the apiserver returns them (what etcd stores).
	Trackers    int    `json:"trackers"`
	Compression string `json:"compression,omitempty"`
	RawBytes    int    `json:"rawBytes"`
	StoredBytes int    `json:"storedBytes"`
	// PerTracker breaks the sizes down by tracker.
	PerTracker []TrackerSize `json:"perTracker,omitempty"`
}

// CompressionName names the trackers' compression, "uncompressed" for
// none.
func (a BigAppResult) CompressionName() string {
	if a.Compression == "" {
		return "uncompressed"
	}
	return a.Compression
}

// TrackerSize is one ResourceTracker of the big app.
type TrackerSize struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Entries     int    `json:"entries"`
	RawBytes    int    `json:"rawBytes"`
	StoredBytes int    `json:"storedBytes"`
}

// HelmResult is one controller's convergence of the helm scenario.
type HelmResult struct {
	Controller  string         `json:"controller"`
	Apps        int            `json:"apps"`
	Resources   int            `json:"resources"`
	QPS         float64        `json:"qps"`
	Burst       int            `json:"burst"`
	Converged   Duration       `json:"converged"`
	Requests    []RequestCount `json:"requests"`
	Work        float64        `json:"workRequests"`
	Bound       Duration       `json:"bound"`
	BusiestKind string         `json:"busiestKind"`
	// Downloads are the chart archives the repository served, and
	// IndexReads its index.yaml.
	Downloads  int64 `json:"downloads"`
	IndexReads int64 `json:"indexReads"`
	// Cache is steward_helm_chart_cache_total by result.
	Cache map[string]float64 `json:"cache"`
	// Heap is read after a forced collection once every app is Ready.
	Heap HeapStats `json:"heap"`
	CPUCost
}

// Ratio is convergence time over the bound.
func (h HelmResult) Ratio() float64 { return boundRatio(h.Converged, h.Bound) }

// DefinitionsResult is one controller's run of the definitions scenario.
type DefinitionsResult struct {
	Controller string `json:"controller"`
	Apps       int    `json:"apps"`
	AutoUpdate int    `json:"autoUpdate"`
	Changes    int    `json:"changes"`
	// Revisions is the DefinitionRevisions of the definition at the end.
	Revisions int `json:"revisions"`
	// ChangeLatency is, per change, the time until every autoUpdate
	// Application delivered it.
	ChangeLatency []Duration `json:"changeLatency"`
	// ChangeRequests are the controller's requests over all changes, and
	// PlainRerendered the Applications without autoUpdate that delivered a
	// change (0 when a change costs only the Applications that use it).
	ChangeRequests  float64 `json:"changeRequests"`
	PlainRerendered int     `json:"plainRerendered"`
	// Heap after a forced collection before the first change and after
	// the last.
	HeapBefore HeapStats `json:"heapBefore"`
	HeapAfter  HeapStats `json:"heapAfter"`
	// Admission latencies of a valid Application (dry-run create through
	// the API server and the webhook).
	AdmissionP50 Duration `json:"admissionP50"`
	AdmissionP95 Duration `json:"admissionP95"`
	AdmissionP99 Duration `json:"admissionP99"`
	AdmissionMax Duration `json:"admissionMax"`
}

// WriteJSON writes results to path.
func (r *Results) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	return nil
}

// Read reads results written by WriteJSON.
func Read(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	r := &Results{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return r, nil
}
