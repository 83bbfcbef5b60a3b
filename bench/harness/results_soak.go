package harness

import (
	"time"
)

// SoakResult is one controller's heap over a long run of re-syncs.
type SoakResult struct {
	Controller string      `json:"controller"`
	Apps       int         `json:"apps"`
	Interval   Duration    `json:"interval"`
	Duration   Duration    `json:"duration"`
	Points     []SoakPoint `json:"points"`
	// CPUCost is from the first point to the last; zero in results
	// recorded before the harness measured CPU.
	CPUCost
}

// CPUCost is the CPU a controller's process tree used over a window of a
// scenario, against the Application reconciles and renders in it: what
// evaluating CUE in child processes costs a normal render (issue 27).
type CPUCost struct {
	// CPUSeconds is the user and system time of the controller and of
	// every process it started (Steward's CUE evaluators), alive or
	// exited; ChildCPUSeconds is the part its descendants used.
	CPUSeconds      float64 `json:"cpuSeconds,omitempty"`
	ChildCPUSeconds float64 `json:"childCPUSeconds,omitempty"`
	// Reconciles is the increase of
	// controller_runtime_reconcile_total{controller="application"}, and
	// CPUPerReconcileMs CPUSeconds over it, in milliseconds.
	Reconciles        float64 `json:"reconciles,omitempty"`
	CPUPerReconcileMs float64 `json:"cpuPerReconcileMs,omitempty"`
	// Renders and RenderMeanSeconds are the count and mean duration of the
	// reconciles' render stage (the histogram
	// steward_reconcile_stage_duration_seconds{stage="render"}); zero for a
	// controller without it.
	Renders           float64 `json:"renders,omitempty"`
	RenderMeanSeconds float64 `json:"renderMeanSeconds,omitempty"`
}

// Measured reports whether the harness measured CPU (results recorded
// before it did hold none).
func (c CPUCost) Measured() bool { return c.CPUSeconds > 0 }

// coresOver is the CPU spread over a wall time: the cores used.
func (c CPUCost) coresOver(wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return c.CPUSeconds / wall.Seconds()
}

// ChildShare is the share of the CPU the descendants used.
func (c CPUCost) ChildShare() float64 {
	if c.CPUSeconds == 0 {
		return 0
	}
	return c.ChildCPUSeconds / c.CPUSeconds
}

// SoakPoint is a controller's memory at one moment of the soak: heap in
// use and live heap right after a forced collection, RSS, and the
// reconciles since the first point.
type SoakPoint struct {
	Minute     float64 `json:"minute"`
	HeapInuse  float64 `json:"heapInuseBytes"`
	HeapAlloc  float64 `json:"heapAllocBytes"`
	RSS        float64 `json:"rssBytes"`
	Reconciles float64 `json:"reconciles"`
	// Children is the number of the controller's descendants (Steward's
	// CUE evaluators), ChildRSS the sum of their VmRSS (shared pages
	// counted in each) and ChildRSSAnon of their RssAnon. Zero in results
	// recorded before the harness read them.
	Children     int     `json:"childProcesses,omitempty"`
	ChildRSS     float64 `json:"childRSSBytes,omitempty"`
	ChildRSSAnon float64 `json:"childRSSAnonBytes,omitempty"`
}

// From returns the first point at or after minute 2 (the first point when
// the soak is shorter).
func (s SoakResult) From() (SoakPoint, bool) {
	for _, p := range s.Points {
		if p.Minute >= soakFrom-0.05 {
			return p, true
		}
	}
	if len(s.Points) > 0 {
		return s.Points[0], true
	}
	return SoakPoint{}, false
}

// Last returns the last point.
func (s SoakResult) Last() (SoakPoint, bool) {
	if len(s.Points) == 0 {
		return SoakPoint{}, false
	}
	return s.Points[len(s.Points)-1], true
}

// Growth is the relative growth of heap in use after GC from minute 2 to
// the last point.
func (s SoakResult) Growth() float64 {
	from, ok := s.From()
	last, _ := s.Last()
	if !ok || from.HeapInuse == 0 {
		return 0
	}
	return last.HeapInuse/from.HeapInuse - 1
}

// RetainedPerReconcile is the heap in use gained from minute 2 to the last
// point divided by the reconciles in between.
func (s SoakResult) RetainedPerReconcile() float64 {
	from, ok := s.From()
	last, _ := s.Last()
	if !ok || last.Reconciles <= from.Reconciles {
		return 0
	}
	return (last.HeapInuse - from.HeapInuse) / (last.Reconciles - from.Reconciles)
}

// SoakReference is a soak from another run, shown next to this run's.
type SoakReference struct {
	// Label says what the reference is, e.g. "before render: ...".
	Label   string       `json:"label"`
	Commit  string       `json:"commit,omitempty"`
	Started time.Time    `json:"started"`
	Soak    []SoakResult `json:"soak"`
}
