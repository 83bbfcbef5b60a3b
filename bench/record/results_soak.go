package record

import (
	"fmt"
	"strings"
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
	// HeapProfile is the path of the heap profile read after the last
	// point (in the run's log directory), HeapByPackage its in-use space
	// by the package of the allocating function, largest first; empty in
	// results recorded before the harness read it.
	HeapProfile   string        `json:"heapProfile,omitempty"`
	HeapByPackage []HeapPackage `json:"heapByPackage,omitempty"`
}

// HeapPackage is the heap in use that the functions of one Go package
// allocated, as a heap profile estimates it from its samples, and its
// share of the profile's in-use space.
type HeapPackage struct {
	Package string  `json:"package"`
	Bytes   float64 `json:"bytes"`
	Share   float64 `json:"share"`
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

// SoakFrom is the minute growth is measured from: the first minute holds
// caches and pools still filling up.
const SoakFrom = 2

// From returns the first point at or after minute 2 (the first point when
// the soak is shorter).
func (s SoakResult) From() (SoakPoint, bool) {
	for _, p := range s.Points {
		if p.Minute >= SoakFrom-0.05 {
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

// HeapPackagesText is the first n of pkgs as one line, "4.2 MiB
// k8s.io/client-go/tools/cache (31%), 1.5 MiB cuelang.org/go/internal/core/adt
// (11%)", then the in-use space of the rest.
func HeapPackagesText(pkgs []HeapPackage, n int) string {
	var parts []string
	rest := 0.0
	for i, h := range pkgs {
		if i < n {
			parts = append(parts, fmt.Sprintf("%.1f MiB %s (%.0f%%)", h.Bytes/(1<<20), h.Package, h.Share*100))
		} else {
			rest += h.Bytes
		}
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("%.1f MiB elsewhere", rest/(1<<20)))
	}
	return strings.Join(parts, ", ")
}
