package sharding

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func apps(n int, shard string) map[types.NamespacedName]string {
	out := map[types.NamespacedName]string{}
	for i := range n {
		out[types.NamespacedName{Namespace: "team", Name: fmt.Sprintf("%s-%03d", shard, i)}] = shard
	}
	return out
}

func merge(ms ...map[types.NamespacedName]string) map[types.NamespacedName]string {
	out := map[types.NamespacedName]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func countAfter(fleet map[types.NamespacedName]string, moves []move) map[string]int {
	after := merge(fleet)
	for _, m := range moves {
		after[m.App] = m.To
	}
	count := map[string]int{}
	for _, s := range after {
		count[s]++
	}
	return count
}

// Unassigned Applications fill the emptiest live shards first, so the
// shards end up even; a shard with an expired Lease gets none.
func TestPlan_BalancesUnassignedOverLiveShards(t *testing.T) {
	now := time.Now()
	o := Defaults()
	expiry := map[string]time.Time{"master": now.Add(time.Minute), "shard-1": now.Add(time.Minute), "shard-2": now.Add(time.Minute), "old": now.Add(-time.Second)}
	fleet := merge(apps(10, "master"), apps(90, ""))
	moves := plan(fleet, expiry, o, now)
	if len(moves) != 90 {
		t.Fatalf("%d moves, want every unassigned Application (90)", len(moves))
	}
	got := countAfter(fleet, moves)
	want := map[string]int{"master": 34, "shard-1": 33, "shard-2": 33}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("shard %s holds %d, want %d (all: %v)", id, got[id], n, got)
		}
	}
	if got["old"] != 0 {
		t.Errorf("an expired shard was given %d Applications", got["old"])
	}
	// --schedulable-shards limits the targets to live shards it lists.
	o.SchedulableShards = []string{"shard-2", "old"}
	for _, m := range plan(fleet, expiry, o, now) {
		if m.To != "shard-2" {
			t.Fatalf("assigned to %s, outside the schedulable live shards", m.To)
		}
	}
}

// The Applications of a shard move only once its Lease has been expired
// for the grace period, and never while it is live or merely late; a
// shard without a Lease keeps its Applications.
func TestPlan_MovesAShardsApplicationsOnlyAfterTheGrace(t *testing.T) {
	now := time.Now()
	o := Defaults()
	o.ReassignGrace = time.Minute
	fleet := merge(apps(4, "a"), apps(4, "b"), apps(3, "nolease"))
	live := now.Add(time.Minute)
	for name, c := range map[string]struct {
		expiryB time.Time
		moved   int
	}{
		"live":          {live, 0},
		"within grace":  {now.Add(-30 * time.Second), 0},
		"past grace":    {now.Add(-2 * time.Minute), 4},
		"never renewed": {time.Time{}, 4},
	} {
		moves := plan(fleet, map[string]time.Time{"a": live, "b": c.expiryB}, o, now)
		if len(moves) != c.moved {
			t.Errorf("%s: %d moves, want %d", name, len(moves), c.moved)
		}
		for _, m := range moves {
			if m.From != "b" || m.To != "a" {
				t.Errorf("%s: moved %s from %q to %q", name, m.App, m.From, m.To)
			}
		}
	}
	o.ReassignGrace = 0
	if moves := plan(fleet, map[string]time.Time{"a": live, "b": time.Time{}}, o, now); len(moves) != 0 {
		t.Errorf("grace 0 (never move): %d moves", len(moves))
	}
	if moves := plan(merge(apps(2, "")), map[string]time.Time{}, o, now); len(moves) != 0 {
		t.Errorf("no live shard: %d moves, want none", len(moves))
	}
}
