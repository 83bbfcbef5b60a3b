package record

import (
	"slices"
	"sort"
)

// DriftResult is how long one controller took to repair the Deployment of
// an app, each time: to bring it back once deleted (Repairs) and to
// revert an edit of its spec.replicas (Edits).
type DriftResult struct {
	Controller string    `json:"controller"`
	Interval   Duration  `json:"interval"`
	Repairs    []float64 `json:"repairSeconds"`
	Edits      []float64 `json:"editRepairSeconds,omitempty"`
}

// Stats returns min, median, mean and max of the repairs of deletes.
func (d DriftResult) Stats() (lo, median, mean, hi float64) { return stats(d.Repairs) }

// EditStats returns min, median, mean and max of the repairs of edits.
func (d DriftResult) EditStats() (lo, median, mean, hi float64) { return stats(d.Edits) }

// FleetDrift is what fleet drift measured: the repair time of every
// change in seconds, by operation and kind, and the changes not repaired
// within the timeout.
type FleetDrift struct {
	Edits      int            `json:"edits"`
	Deletes    int            `json:"deletes"`
	ByKind     map[string]int `json:"byKind"`
	Repairs    []float64      `json:"repairSeconds"`
	Unrepaired int            `json:"unrepaired,omitempty"`
}

// Quantiles returns the p50, p95, p99 and max of the repairs, nearest
// rank; an unrepaired change counts as the timeout, above every repair.
func (d FleetDrift) Quantiles() (p50, p95, p99, hi float64) {
	if len(d.Repairs) == 0 {
		return 0, 0, 0, 0
	}
	s := slices.Sorted(slices.Values(d.Repairs))
	q := func(p float64) float64 {
		i := int(p*float64(len(s)+d.Unrepaired)+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return q(0.50), q(0.95), q(0.99), s[len(s)-1]
}

func stats(xs []float64) (lo, median, mean, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return s[0], medianOfSorted(s), sum / float64(len(s)), s[len(s)-1]
}

func medianOfSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
