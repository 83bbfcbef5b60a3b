package inventory

import (
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Set is a set of objects, by key.
type Set map[tracker.Key]bool

// Has reports whether the set holds k.
func (s Set) Has(k tracker.Key) bool { return s[k] }

// Of returns the entries of the given trackers, decoded, in tracker
// order; nil trackers are skipped.
func Of(rts ...*v1beta1.ResourceTracker) ([]v1beta1.ManagedResource, error) {
	var out []v1beta1.ManagedResource
	for _, rt := range rts {
		if rt == nil {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
	return out, nil
}

// Applies reports whether an entry is an object Steward applies: recorded
// with a manifest and not marked deleted.
func Applies(e v1beta1.ManagedResource) bool { return !e.Deleted && e.Data != nil }

// Applied returns the entries Steward applies (Applies).
func Applied(entries []v1beta1.ManagedResource) []v1beta1.ManagedResource {
	var out []v1beta1.ManagedResource
	for _, e := range entries {
		if Applies(e) {
			out = append(out, e)
		}
	}
	return out
}

// Wanted is the set of objects the entries want to exist (Applies).
func Wanted(entries []v1beta1.ManagedResource) Set {
	return collect(entries, Applies)
}

// Listed is the set of objects the entries list and do not mark for
// deletion, with a manifest or not.
func Listed(entries []v1beta1.ManagedResource) Set {
	return collect(entries, func(e v1beta1.ManagedResource) bool { return !e.Deleted })
}

// Keys is the set of every object the entries name, whatever its state.
func Keys(entries []v1beta1.ManagedResource) Set {
	return collect(entries, func(v1beta1.ManagedResource) bool { return true })
}

func collect(entries []v1beta1.ManagedResource, keep func(v1beta1.ManagedResource) bool) Set {
	out := Set{}
	for _, e := range entries {
		if keep(e) {
			out[tracker.KeyOf(e)] = true
		}
	}
	return out
}

// Unseen is the set of objects of entries that none of the trackers
// names: new to Steward, so created without being read first. nil when a
// tracker cannot be read (nothing is known to be new).
func Unseen(entries []v1beta1.ManagedResource, rts ...*v1beta1.ResourceTracker) Set {
	known, err := Of(rts...)
	if err != nil {
		return nil
	}
	seen := Keys(known)
	out := Set{}
	for _, e := range entries {
		if k := tracker.KeyOf(e); !seen[k] {
			out[k] = true
		}
	}
	return out
}

// WithoutMarked returns entries without those marked deleted whose objects
// are in drop: only a confirmed deletion, or a mark another entry
// overrides, drops an entry.
func WithoutMarked(entries []v1beta1.ManagedResource, drop Set) []v1beta1.ManagedResource {
	out := make([]v1beta1.ManagedResource, 0, len(entries))
	for _, e := range entries {
		if !e.Deleted || !drop[tracker.KeyOf(e)] {
			out = append(out, e)
		}
	}
	return out
}

// AppliedOf returns the entries Steward applies of the given trackers, one
// per object: the first tracker's that applies it. The live version and
// the root tracker both record an object a rule keeps for the
// Application's lifetime; given in that order, the live version's
// manifest is the one (Kept).
func AppliedOf(rts ...*v1beta1.ResourceTracker) ([]v1beta1.ManagedResource, error) {
	entries, err := Of(rts...)
	if err != nil {
		return nil, err
	}
	seen := Set{}
	var out []v1beta1.ManagedResource
	for _, e := range Applied(entries) {
		if k := tracker.KeyOf(e); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// Remove returns entries without the given keys.
func Remove(entries []v1beta1.ManagedResource, drop Set) []v1beta1.ManagedResource {
	out := make([]v1beta1.ManagedResource, 0, len(entries))
	for _, e := range entries {
		if !drop[tracker.KeyOf(e)] {
			out = append(out, e)
		}
	}
	return out
}

// MarkDeleted returns entries with the given keys marked deleted.
func MarkDeleted(entries []v1beta1.ManagedResource, keys Set) []v1beta1.ManagedResource {
	out := make([]v1beta1.ManagedResource, len(entries))
	for i, e := range entries {
		if keys[tracker.KeyOf(e)] {
			e.Deleted = true
		}
		out[i] = e
	}
	return out
}

// WithRoot returns the entries a version records: its own (versioned),
// and those of the objects it renders that the root tracker keeps for the
// Application's lifetime (root), with their manifests, so that a rollback
// to the version applies what it rendered of them. An entry of root
// replaces one of versioned for the same object; the others follow in
// order.
func WithRoot(versioned, root []v1beta1.ManagedResource) []v1beta1.ManagedResource {
	if len(root) == 0 {
		return versioned
	}
	byKey := tracker.IndexOf(root)
	out := make([]v1beta1.ManagedResource, 0, len(versioned)+len(root))
	placed := Set{}
	for _, e := range versioned {
		k := tracker.KeyOf(e)
		if r, ok := byKey[k]; ok {
			e = r
			placed[k] = true
		}
		out = append(out, e)
	}
	for _, e := range root {
		if k := tracker.KeyOf(e); !placed[k] {
			placed[k] = true
			out = append(out, e)
		}
	}
	return out
}

// AppliedIn returns whether an entry's object is applied by one of
// entries (recorded with a manifest and not marked deleted).
func AppliedIn(entries []v1beta1.ManagedResource) func(v1beta1.ManagedResource) bool {
	keys := Wanted(entries)
	return func(e v1beta1.ManagedResource) bool { return keys.Has(tracker.KeyOf(e)) }
}
