package sharding

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// move assigns one Application to a shard.
type move struct {
	App  types.NamespacedName
	From string // "" for an unassigned Application
	To   string
}

// plan decides the moves of one scheduling round. apps maps every
// Application to its shard label ("" when unassigned); expiry maps every
// shard that has a Lease to when it runs out. An unassigned Application
// goes to the schedulable live shard that holds the fewest (ties: the
// first by name); the Applications of a shard whose Lease has been
// expired for longer than the grace period move the same way. A shard
// without a Lease is left alone: it may not have started yet.
func plan(apps map[types.NamespacedName]string, expiry map[string]time.Time, o Options, now time.Time) []move {
	live := map[string]bool{}
	dead := map[string]bool{}
	for id, exp := range expiry {
		switch {
		case now.Before(exp):
			live[id] = true
		case o.ReassignGrace > 0 && now.After(exp.Add(o.ReassignGrace)):
			dead[id] = true
		}
	}
	var targets []string
	if len(o.SchedulableShards) > 0 {
		for _, id := range o.SchedulableShards {
			if live[id] && !slices.Contains(targets, id) {
				targets = append(targets, id)
			}
		}
	} else {
		for id := range live {
			targets = append(targets, id)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	slices.Sort(targets)
	count := map[string]int{}
	var pending []types.NamespacedName
	for app, shard := range apps {
		if shard == "" || dead[shard] {
			pending = append(pending, app)
			continue
		}
		count[shard]++
	}
	// A stable order: the same fleet is assigned the same way.
	slices.SortFunc(pending, func(a, b types.NamespacedName) int {
		if a.Namespace != b.Namespace {
			if a.Namespace < b.Namespace {
				return -1
			}
			return 1
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	moves := make([]move, 0, len(pending))
	for _, app := range pending {
		to := targets[0]
		for _, id := range targets[1:] {
			if count[id] < count[to] {
				to = id
			}
		}
		count[to]++
		moves = append(moves, move{App: app, From: apps[app], To: to})
	}
	return moves
}
