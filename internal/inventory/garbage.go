package inventory

import (
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Why says why an object is deleted or left in place. The controller logs
// it as the decision's reason, so "why was this object deleted?" is
// answered by one of these.
type Why string

// Why an object is deleted.
const (
	// WhyOlderVersion: an older version recorded it, the live version
	// does not, and no rule keeps it.
	WhyOlderVersion Why = "no longer in the current version"
	// WhyLeftSpec: the root tracker kept it after it left the spec, and
	// no rule keeps it any more.
	WhyLeftSpec Why = "left the spec, and no rule keeps it any more"
	// WhyNotLive: the root tracker lists it with the manifest of a newer
	// version; the live version (rolled back to) does not render it, and
	// no rule keeps it.
	WhyNotLive Why = "the live version does not render it, and no rule keeps it"
	// WhyMarked: its entry was marked deleted in the live version's or
	// the root tracker (a version re-recorded without it, or a deletion
	// started before the pass stopped), and nothing keeps it.
	WhyMarked Why = "marked for deletion in its tracker"
	// WhyAppDeleted: the Application is deleted.
	WhyAppDeleted Why = "application deleted"
)

// Why an object stays although no version renders it, or an entry marked
// deleted is dropped without deleting anything.
const (
	WhyNever       Why = "garbage-collect never"
	WhyOnAppDelete Why = "garbage-collect onAppDelete"
	WhyReadOnly    Why = "read-only"
	// WhyTypeUnknown: its component left the spec, so its type is not
	// known, and a rule selecting by component type may keep it.
	WhyTypeUnknown Why = "a rule selecting by component type may keep it (its component left the spec, so its type is not known)"
	// WhySkipGC: on deletion, its newest record is marked skipGC (the
	// version that recorded it last had a never or read-only rule for it).
	WhySkipGC Why = "its newest record is marked skipGC"
	// WhyEarlierRecord: the root tracker keeps it, and the live version
	// was recorded before versions recorded the root tracker's objects,
	// so whether it renders the object is not known.
	WhyEarlierRecord Why = "kept in the root tracker: the live version does not say whether it renders it"
	// WhyRootOnly: the root tracker keeps it, and no recorded version of
	// the Application rendered it: KubeVela's root tracker kept it, or the
	// versions that rendered it were recycled. It stays until the
	// Application is deleted, as it did before.
	WhyRootOnly Why = "kept in the root tracker until the Application is deleted: no recorded version rendered it"
	// WhyStillWanted: another entry of the live version or the root
	// tracker applies or keeps the object (it moved between them).
	WhyStillWanted Why = "still wanted by another tracker"
	// WhyLive: the live version records it again.
	WhyLive Why = "the live version records it"
)

// Trackers are the trackers of one Application that a decision reads.
type Trackers struct {
	// Current is the live version's tracker; nil before one is recorded.
	Current *v1beta1.ResourceTracker
	// Root lists the objects rules keep for the Application's lifetime.
	Root *v1beta1.ResourceTracker
	// Older are the other versioned trackers: this Application's earlier
	// versions, those an earlier Application of the same name left, and
	// KubeVela's, oldest first.
	Older []*v1beta1.ResourceTracker
	// Collected are the older trackers already collected against the live
	// version: Garbage decides nothing of theirs again, though what they
	// list still counts as what a version rendered.
	Collected map[*v1beta1.ResourceTracker]bool
}

// Decision is what happens to one entry's object, with the tracker that
// lists the entry and why.
type Decision struct {
	Entry   v1beta1.ManagedResource
	Tracker *v1beta1.ResourceTracker
	Why     Why
}

// Key is the key of the decision's object.
func (d Decision) Key() tracker.Key { return tracker.KeyOf(d.Entry) }

// Collection is what garbage collection does once the live version is
// dispatched.
type Collection struct {
	// Doomed are the entries whose objects are deleted: each is marked
	// deleted in its tracker before anything is deleted; once the object
	// is gone an older tracker keeps the entry, un-marked, as the history
	// of its version, and the root tracker drops it. One object may be
	// doomed in several trackers.
	Doomed []Decision
	// Left are entries whose objects no live entry wants and that stay,
	// kept by a rule.
	Left []Decision
	// Unmarked are entries of older trackers marked deleted whose objects
	// are live or kept after all: the mark is cleared, nothing deleted.
	Unmarked []Decision
}

// Garbage decides what garbage collection deletes once the live version is
// fully dispatched. An object is garbage when the live version does not
// list it and no rule, as the policies are now, keeps it (never,
// onAppDelete, read-only): whether an older version's entry or the root
// tracker's lists it. A skipGC mark on an entry only says what the rules
// were when it was recorded, and decides nothing here; it counts when the
// Application is deleted (Deletion).
//
// The root tracker keeps an object while a rule keeps it or the live
// version records it, and lets it go only when an older version records
// it: a version rendered it, and the live one does not. What no recorded
// version rendered (what KubeVela's root tracker kept, or what versions
// since recycled rendered) stays until the Application is deleted. When
// the live version was recorded before versions recorded the root
// tracker's objects (tracker.RecordsRootObjects), it does not say whether
// it delivers the object, and the object stays.
//
// Entries of the live version and the root tracker that are marked deleted
// are StateKeep's (Marks), not garbage collection's. Nil trackers are
// skipped; without a live version nothing is garbage.
func Garbage(t Trackers, k Keeper) (Collection, error) {
	var out Collection
	if t.Current == nil {
		return out, nil
	}
	l, err := liveOf(t, k)
	if err != nil {
		return out, err
	}
	out.Doomed, out.Left = l.rootDoomed, l.rootLeft
	for _, rt := range t.Older {
		if t.Collected[rt] {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			return Collection{}, err
		}
		for _, e := range entries {
			key := tracker.KeyOf(e)
			d := Decision{Entry: e, Tracker: rt}
			switch {
			case l.current[key]:
				if e.Deleted {
					d.Why = WhyLive
					out.Unmarked = append(out.Unmarked, d)
				}
			case l.root[key] != "":
				if e.Deleted {
					d.Why = l.root[key]
					out.Unmarked = append(out.Unmarked, d)
				}
			default:
				if d.Why = k.OnUpdate(e); d.Why != "" {
					out.Left = append(out.Left, d)
					if e.Deleted {
						out.Unmarked = append(out.Unmarked, d)
					}
					continue
				}
				d.Why = WhyOlderVersion
				out.Doomed = append(out.Doomed, d)
			}
		}
	}
	return out, nil
}

// live is what the live version and the root tracker keep.
type live struct {
	// current lists what the live version lists, not marked deleted.
	current Set
	// root says why the root tracker keeps an object the live version does
	// not list.
	root map[tracker.Key]Why
	// rootDoomed and rootLeft are the root tracker's entries garbage
	// collection deletes, and those it keeps.
	rootDoomed, rootLeft []Decision
}

// liveOf decides what the live version and the root tracker keep.
func liveOf(t Trackers, k Keeper) (live, error) {
	l := live{current: Set{}, root: map[tracker.Key]Why{}}
	if t.Current != nil {
		entries, err := tracker.Entries(t.Current)
		if err != nil {
			return live{}, err
		}
		l.current = Listed(entries)
	}
	if t.Root == nil {
		return l, nil
	}
	entries, err := tracker.Entries(t.Root)
	if err != nil {
		return live{}, err
	}
	records := tracker.RecordsRootObjects(t.Current)
	var candidates []Decision
	for _, e := range entries {
		key := tracker.KeyOf(e)
		if e.Deleted || l.current[key] {
			// Marked: StateKeep's. Listed by the live version: it goes
			// when that version's successor drops it, unless a rule
			// keeps it then.
			continue
		}
		d := Decision{Entry: e, Tracker: t.Root, Why: k.OnUpdate(e)}
		switch {
		case d.Why != "":
		case !records:
			d.Why = WhyEarlierRecord
		default:
			candidates = append(candidates, d)
			continue
		}
		l.keep(d)
	}
	if len(candidates) == 0 {
		return l, nil
	}
	// Only now are the older trackers read: what they list is what the
	// versions before the live one rendered.
	rendered, err := listedBy(t.Older)
	if err != nil {
		return live{}, err
	}
	for _, d := range candidates {
		switch {
		case !rendered[d.Key()]:
			d.Why = WhyRootOnly
			l.keep(d)
		case d.Entry.Data == nil:
			d.Why = WhyLeftSpec
			l.rootDoomed = append(l.rootDoomed, d)
		default:
			d.Why = WhyNotLive
			l.rootDoomed = append(l.rootDoomed, d)
		}
	}
	return l, nil
}

// keep records that the root tracker keeps d's object.
func (l *live) keep(d Decision) {
	l.root[d.Key()] = d.Why
	l.rootLeft = append(l.rootLeft, d)
}

// listedBy is the set of objects the trackers name.
func listedBy(rts []*v1beta1.ResourceTracker) (Set, error) {
	out := Set{}
	for _, rt := range rts {
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			out[tracker.KeyOf(e)] = true
		}
	}
	return out, nil
}

// keeps reports whether the live version or the root tracker keeps key.
func (l live) keeps(key tracker.Key) bool { return l.current[key] || l.root[key] != "" }
