package inventory

import (
	"cmp"
	"slices"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Removal is what deleting the Application does with each object its
// trackers record, one decision per object.
type Removal struct {
	// Doomed are deleted (WhyAppDeleted).
	Doomed []Decision
	// Left stay where they are, with their ownership labels: Steward must
	// never delete them.
	Left []Decision
	// Released stay, without Steward's ownership (the orphan finalizer).
	Released []Decision
}

// Deletion decides what deleting the Application does with the objects of
// trackers, given newest first (NewestFirst). The newest record of each
// object decides: an object is left when that record is marked skipGC (the
// version that recorded it last had a never or read-only rule for it) or
// when the policies as they are now say never or read-only for it; so a
// rule added in a later version protects an object an earlier version
// created, and a rule removed lets it go with the Application. With
// orphan (KubeVela's orphan finalizer) every other object is released
// instead of deleted.
func Deletion(trackers []*v1beta1.ResourceTracker, k Keeper, orphan bool) (Removal, error) {
	var out Removal
	seen := Set{}
	for _, rt := range trackers {
		entries, err := tracker.Entries(rt)
		if err != nil {
			return Removal{}, err
		}
		for _, e := range entries {
			key := tracker.KeyOf(e)
			if seen[key] {
				continue
			}
			seen[key] = true
			d := Decision{Entry: e, Tracker: rt, Why: k.OnDelete(e)}
			switch {
			case e.SkipGC:
				d.Why = WhySkipGC
				out.Left = append(out.Left, d)
			case d.Why != "":
				out.Left = append(out.Left, d)
			case orphan:
				d.Why = WhyAppDeleted
				out.Released = append(out.Released, d)
			default:
				d.Why = WhyAppDeleted
				out.Doomed = append(out.Doomed, d)
			}
		}
	}
	return out, nil
}

// NewestFirst orders an Application's trackers (of uid) by how recent
// their view of it is: its live version (the versioned tracker of this
// Application kept at the highest generation: each pass moves the live
// one to the Application's generation, a rollback included), root, the
// other versioned trackers of this Application by generation (newest
// first), then those of an earlier Application of the same name. The live version is not found by name: deleting an
// Application bumps its generation.
func NewestFirst(uid string, trackers []v1beta1.ResourceTracker) []*v1beta1.ResourceTracker {
	out := make([]*v1beta1.ResourceTracker, len(trackers))
	for i := range trackers {
		out[i] = &trackers[i]
	}
	mine := func(rt *v1beta1.ResourceTracker) bool {
		return rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned && rt.Labels[v1beta1.LabelAppUID] == uid
	}
	var live *v1beta1.ResourceTracker
	for _, rt := range out {
		if mine(rt) && (live == nil || rt.Spec.ApplicationGeneration > live.Spec.ApplicationGeneration) {
			live = rt
		}
	}
	rank := func(rt *v1beta1.ResourceTracker) int {
		switch {
		case rt == live:
			return 0
		case rt.Spec.Type == v1beta1.ResourceTrackerTypeRoot:
			return 1
		case mine(rt):
			return 2
		default:
			return 3
		}
	}
	slices.SortStableFunc(out, func(a, b *v1beta1.ResourceTracker) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return cmp.Compare(b.Spec.ApplicationGeneration, a.Spec.ApplicationGeneration)
	})
	return out
}

// Unmark returns entries with the marks of keys cleared.
func Unmark(entries []v1beta1.ManagedResource, keys Set) []v1beta1.ManagedResource {
	for i := range entries {
		if keys[tracker.KeyOf(entries[i])] {
			entries[i].Deleted = false
		}
	}
	return entries
}

// OnePerObject returns decisions with one per object: several trackers
// may doom the same one.
func OnePerObject(ds []Decision) []Decision {
	seen := Set{}
	out := make([]Decision, 0, len(ds))
	for _, d := range ds {
		if k := d.Key(); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}
