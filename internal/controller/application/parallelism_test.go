package application

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/placement"
)

// A deploy step's parallelism bounds how many clusters are worked on at
// once; without one, --cluster-concurrency does.
func TestEachCluster_AtMostTheStepsParallelism(t *testing.T) {
	r := &Reconciler{Options: Options{ClusterConcurrency: 8}}
	groups := make([]facts.ClusterGroup, 6)
	for i := range groups {
		groups[i] = facts.ClusterGroup{Cluster: string(rune('a' + i))}
	}
	peak := func(limit int) int32 {
		var running, most atomic.Int32
		var mu sync.Mutex
		r.eachClusterAtMost(limit, groups, func(facts.ClusterGroup, *facts.ClusterShare) {
			n := running.Add(1)
			mu.Lock()
			if n > most.Load() {
				most.Store(n)
			}
			mu.Unlock()
			time.Sleep(30 * time.Millisecond)
			running.Add(-1)
		})
		return most.Load()
	}
	if got := peak(2); got != 2 {
		t.Errorf("parallelism 2: %d clusters at once", got)
	}
	if got := peak(0); got != 6 {
		t.Errorf("no parallelism: %d clusters at once, want all 6 (cluster concurrency 8)", got)
	}
	r.Options.ClusterConcurrency = 3
	if got := peak(5); got != 3 {
		t.Errorf("parallelism 5 under cluster concurrency 3: %d at once", got)
	}
	steps := []placement.Step{{Parallelism: 5}, {Parallelism: 3, ParallelismSet: true}, {Parallelism: 4, ParallelismSet: true}}
	if got := delivery.ParallelismOf(steps); got != 3 {
		t.Errorf("ParallelismOf = %d, want the smallest set, 3", got)
	}
	if got := delivery.ParallelismOf(steps[:1]); got != 0 {
		t.Errorf("ParallelismOf without a set one = %d, want 0", got)
	}
}
