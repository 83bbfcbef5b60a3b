package inventory

import (
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Recycled is an older tracker garbage collection deletes, and why.
type Recycled struct {
	Tracker *v1beta1.ResourceTracker
	Why     string
}

// Why an older tracker is deleted.
const (
	RecycledBeyondLimit = "beyond the revision limit"
	RecycledEarlierApp  = "left by an earlier Application of the same name"
	RecycledKubeVela    = "left by KubeVela: what it listed is collected or recorded by Steward's"
)

// Recycle returns the older trackers of t that garbage collection deletes:
// the oldest of this Application's (uid) beyond keep (the revision limit:
// history kept for rollbacks), and every one an earlier Application of the
// same name or KubeVela left. A tracker goes only once it is settled:
// nothing it lists waits for deletion, and it lists no object a rule keeps
// that neither the live version nor the root tracker keeps (the object
// would be left untracked: neither repaired nor deleted with the
// Application; so such a tracker stays beyond the limit). Nor does the
// newest of this Application's trackers that records an object the root
// tracker keeps by a rule after it left the spec: once the rule goes, it
// is the record that a version rendered the object, which lets Garbage
// collect it. t.Older is oldest first.
func Recycle(t Trackers, k Keeper, uid string, keep int) ([]Recycled, error) {
	l, err := liveOf(t, k)
	if err != nil {
		return nil, err
	}
	var out []Recycled
	var mine []*v1beta1.ResourceTracker
	for _, rt := range t.Older {
		why := ""
		switch {
		case tracker.KubeVelas(rt):
			why = RecycledKubeVela
		case rt.Labels[v1beta1.LabelAppUID] != uid:
			why = RecycledEarlierApp
		default:
			mine = append(mine, rt)
			continue
		}
		if settled(rt, l, k) {
			out = append(out, Recycled{Tracker: rt, Why: why})
		}
	}
	witness, err := witnesses(mine, l)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(mine)-keep; i++ {
		if !witness[mine[i]] && settled(mine[i], l, k) {
			out = append(out, Recycled{Tracker: mine[i], Why: RecycledBeyondLimit})
		}
	}
	return out, nil
}

// witnesses returns, of trackers (oldest first), the newest one that
// records each object the root tracker keeps by a rule (not because the
// live version was recorded before versions recorded root objects, nor
// because no version records it).
func witnesses(trackers []*v1beta1.ResourceTracker, l live) (map[*v1beta1.ResourceTracker]bool, error) {
	want := Set{}
	for key, why := range l.root {
		if why != WhyEarlierRecord && why != WhyRootOnly {
			want[key] = true
		}
	}
	out := map[*v1beta1.ResourceTracker]bool{}
	for i := len(trackers) - 1; i >= 0 && len(want) > 0; i-- {
		entries, err := tracker.Entries(trackers[i])
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if key := tracker.KeyOf(e); want[key] {
				delete(want, key)
				out[trackers[i]] = true
			}
		}
	}
	return out, nil
}

// settled reports whether an older tracker can go: no entry waits for
// deletion (an entry KubeVela marked deleted whose object the live
// version or root keeps is Steward's to keep, not garbage) and none is
// the only record of an object a rule keeps. A tracker that cannot be
// read is not settled.
func settled(rt *v1beta1.ResourceTracker, l live, k Keeper) bool {
	entries, err := tracker.Entries(rt)
	if err != nil {
		return false
	}
	kubevelas := tracker.KubeVelas(rt)
	for _, e := range entries {
		kept := l.keeps(tracker.KeyOf(e))
		if e.Deleted && !(kubevelas && kept) {
			return false
		}
		if !kept && k.OnUpdate(e) != "" {
			return false
		}
	}
	return true
}
