package inventory

import (
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Kept returns the entries StateKeep goes through, in order: the live
// version's, then the root tracker's, except the root tracker's entries,
// not marked deleted, for objects the live version applies. Both record
// such an object (a version records the objects the root tracker keeps
// for it too), and the live version's manifest is what it delivers: after
// a rollback it is the earlier content, while the root tracker has the
// newest version's.
func Kept(current, root []v1beta1.ManagedResource) []v1beta1.ManagedResource {
	out := append(make([]v1beta1.ManagedResource, 0, len(current)+len(root)), current...)
	if len(root) == 0 {
		return out
	}
	applied := Wanted(current)
	for _, e := range root {
		if e.Deleted || !applied[tracker.KeyOf(e)] {
			out = append(out, e)
		}
	}
	return out
}

// Mark says what StateKeep does with an entry marked deleted in the live
// version's tracker or the root tracker.
type Mark int

const (
	// DeleteMarked: the object is deleted, and the entry dropped once it
	// is confirmed gone.
	DeleteMarked Mark = iota
	// DropMarked: another entry of the two trackers applies or keeps the
	// object: the marked entry is dropped and nothing is deleted.
	DropMarked
	// KeepMarked: a rule keeps the object, which no other entry lists:
	// the entry stays, un-marked and without its manifest (listed, not
	// applied), so that the object stays tracked.
	KeepMarked
)

// MarkDecision is what StateKeep does with one marked entry, and why.
type MarkDecision struct {
	Mark Mark
	Why  Why
}

// Marks decides, for every entry of the live version and the root tracker
// marked deleted, what StateKeep does with it, by object. An entry is
// marked in the live version when the version is recorded again without
// the object (a tracker taken over from an earlier Application of the
// same name, or a version rendered again for moved clusters), and in the
// root tracker when garbage collection doomed it (Garbage) and the pass
// stopped before the object was gone. Nothing marked is deleted while
// another entry wants the object or a rule keeps it.
func Marks(t Trackers, k Keeper) (map[tracker.Key]MarkDecision, error) {
	var current, root []v1beta1.ManagedResource
	var err error
	if t.Current != nil {
		if current, err = tracker.Entries(t.Current); err != nil {
			return nil, err
		}
	}
	if t.Root != nil {
		if root, err = tracker.Entries(t.Root); err != nil {
			return nil, err
		}
	}
	marked := map[tracker.Key]bool{}
	for _, e := range current {
		if e.Deleted {
			marked[tracker.KeyOf(e)] = true
		}
	}
	var inRoot []v1beta1.ManagedResource
	for _, e := range root {
		if e.Deleted {
			marked[tracker.KeyOf(e)] = true
			inRoot = append(inRoot, e)
		}
	}
	if len(marked) == 0 {
		return nil, nil
	}
	l, err := liveOf(t, k)
	if err != nil {
		return nil, err
	}
	records := tracker.RecordsRootObjects(t.Current)
	out := make(map[tracker.Key]MarkDecision, len(marked))
	for _, e := range append(current, root...) {
		key := tracker.KeyOf(e)
		if !e.Deleted {
			continue
		}
		if _, done := out[key]; done {
			continue
		}
		switch {
		case l.keeps(key):
			out[key] = MarkDecision{Mark: DropMarked, Why: WhyStillWanted}
		case k.OnUpdate(e) != "":
			out[key] = MarkDecision{Mark: KeepMarked, Why: k.OnUpdate(e)}
		case !records && Keys(inRoot)[key]:
			// Doomed while another version was live: the one live now
			// may deliver it.
			out[key] = MarkDecision{Mark: KeepMarked, Why: WhyEarlierRecord}
		default:
			out[key] = MarkDecision{Mark: DeleteMarked, Why: WhyMarked}
		}
	}
	return out, nil
}

// SettleMarks returns entries with the marks StateKeep settles without
// deleting anything: entries DropMarked are dropped, entries KeepMarked
// un-marked and without their manifests. Entries not marked are kept as
// they are.
func SettleMarks(entries []v1beta1.ManagedResource, marks map[tracker.Key]MarkDecision) []v1beta1.ManagedResource {
	out := make([]v1beta1.ManagedResource, 0, len(entries))
	for _, e := range entries {
		if e.Deleted {
			switch marks[tracker.KeyOf(e)].Mark {
			case DropMarked:
				continue
			case KeepMarked:
				e.Deleted, e.Data = false, nil
			}
		}
		out = append(out, e)
	}
	return out
}
