package inventory

import (
	"fmt"
	"slices"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestRecycle(t *testing.T) {
	history := func(n int) []*v1beta1.ResourceTracker {
		var out []*v1beta1.ResourceTracker
		for i := 1; i <= n; i++ {
			out = append(out, version(fmt.Sprintf("v%d", i), int64(i), cm("a", "1")))
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		components []string
		policies   string
		trackers   Trackers
		keep       int
		want       []string
	}{{
		name:       "beyond the revision limit, oldest first",
		components: []string{"a"},
		trackers:   Trackers{Current: version("v7", 7, cm("a", "1")), Older: history(6)},
		keep:       4,
		want:       []string{"app.ns.v1 (beyond the revision limit)", "app.ns.v2 (beyond the revision limit)"},
	}, {
		name:       "a tracker waiting for a deletion stays",
		components: []string{"a"},
		trackers: Trackers{Current: version("v4", 4, cm("a", "1")),
			Older: ptrs(version("v1", 1, marked(cm("b", "1"))), version("v2", 2), version("v3", 3))},
		keep: 1,
		want: []string{"app.ns.v2 (beyond the revision limit)"},
	}, {
		name: "a tracker that alone records an object a rule keeps stays beyond the limit",
		// b left the spec in v2 under a never rule recorded nowhere else.
		components: []string{"a"},
		policies:   gc("b", "never"),
		trackers: Trackers{Current: version("v4", 4, cm("a", "1")),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")), version("v2", 2, cm("a", "1")), version("v3", 3, cm("a", "1")))},
		keep: 0,
		want: []string{"app.ns.v2 (beyond the revision limit)", "app.ns.v3 (beyond the revision limit)"},
	}, {
		name: "the newest version that rendered an object root keeps after it left the spec stays beyond the limit",
		// It is the record that a version rendered b: once the rule goes,
		// b is collected (Garbage).
		components: []string{"a"},
		policies:   gc("b", "onAppDelete"),
		trackers: Trackers{Current: version("v4", 4, cm("a", "1")), Root: root(meta(cm("b", "1"))),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")), version("v2", 2, cm("a", "1"), cm("b", "1")), version("v3", 3, cm("a", "1")))},
		keep: 0,
		want: []string{"app.ns.v1 (beyond the revision limit)", "app.ns.v3 (beyond the revision limit)"},
	}, {
		name:       "an earlier Application's trackers go once settled, whatever the limit",
		components: []string{"a"},
		trackers: Trackers{Current: version("v1", 1, cm("a", "1")),
			Older: ptrs(earlierApp("app.ns.v5", 5, cm("old", "0")), earlierApp("app.ns.v6", 6, marked(cm("gone", "0"))))},
		keep: 10,
		want: []string{"app.ns.v5 (left by an earlier Application of the same name)"},
	}, {
		name: "KubeVela's trackers go once settled; its marks on objects Steward keeps do not hold them",
		// KubeVela marked a deleted in its tracker, and the live version
		// records it: Steward's to keep, not garbage.
		components: []string{"a"},
		trackers: Trackers{Current: version("v1", 1, cm("a", "1")),
			Older: ptrs(kubevela("app-v1-ns", 1, marked(cm("a", "0"))), kubevela("app-v2-ns", 2, marked(cm("c", "0"))))},
		keep: 10,
		want: []string{"app-v1-ns (left by KubeVela: what it listed is collected or recorded by Steward's)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Recycle(tc.trackers, keeper(t, tc.components, tc.policies), uid, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			var shownGot []string
			for _, r := range got {
				shownGot = append(shownGot, fmt.Sprintf("%s (%s)", r.Tracker.Name, r.Why))
			}
			slices.Sort(shownGot)
			sameList(t, "recycled", shownGot, tc.want)
		})
	}
}

func TestDeletion(t *testing.T) {
	for _, tc := range []struct {
		name       string
		components []string
		policies   string
		trackers   []*v1beta1.ResourceTracker
		orphan     bool
		doomed     []string
		left       []string
		released   []string
	}{{
		name:       "everything goes but what Steward must never delete",
		components: []string{"a", "b", "c"},
		policies:   gc("b", "never"),
		trackers:   ptrs(version("v2", 2, cm("a", "1")), root(skip(cm("b", "1")), cm("c", "1")), version("v1", 1, cm("old", "1"))),
		doomed:     []string{"app.ns.v2: a (application deleted)", "app.ns.root: c (application deleted)", "app.ns.v1: old (application deleted)"},
		left:       []string{"app.ns.root: b (its newest record is marked skipGC)"},
	}, {
		name: "the newest record decides: a rule removed in a later version lets it go",
		// v1 recorded b under never; v2 records it without.
		components: []string{"b"},
		trackers:   ptrs(version("v2", 2, cm("b", "2")), version("v1", 1, skip(cm("b", "1")))),
		doomed:     []string{"app.ns.v2: b (application deleted)"},
	}, {
		name: "a rule added since protects what an earlier version created",
		// The spec has a never rule for old, which v1 recorded without.
		components: []string{"a"},
		policies:   gc("old", "never"),
		trackers:   ptrs(version("v2", 2, cm("a", "1")), version("v1", 1, cm("old", "1"))),
		doomed:     []string{"app.ns.v2: a (application deleted)"},
		left:       []string{"app.ns.v1: old (garbage-collect never)"},
	}, {
		name: "rolled back: the live version's record wins over root's",
		// p1 recorded b under never (skipGC); p2 under onAppDelete. Rolled
		// back to p1, live again.
		components: []string{"b"},
		trackers:   ptrs(version("pv-p1", 3, skip(cm("b", "1"))), root(cm("b", "2"))),
		left:       []string{"app.ns.pv-p1: b (its newest record is marked skipGC)"},
	}, {
		name:       "read-only objects stay",
		components: []string{"a"},
		policies:   readOnly("a"),
		trackers:   ptrs(version("v1", 1, cm("a", "1"))),
		left:       []string{"app.ns.v1: a (read-only)"},
	}, {
		name:       "the orphan finalizer releases instead of deleting",
		components: []string{"a", "b"},
		policies:   gc("b", "never"),
		trackers:   ptrs(version("v1", 1, cm("a", "1"), skip(cm("b", "1")))),
		orphan:     true,
		left:       []string{"app.ns.v1: b (its newest record is marked skipGC)"},
		released:   []string{"app.ns.v1: a (application deleted)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Deletion(tc.trackers, keeper(t, tc.components, tc.policies), tc.orphan)
			if err != nil {
				t.Fatal(err)
			}
			sameList(t, "doomed", shown(got.Doomed), tc.doomed)
			sameList(t, "left", shown(got.Left), tc.left)
			sameList(t, "released", shown(got.Released), tc.released)
		})
	}
}

func TestNewestFirst(t *testing.T) {
	trackers := []v1beta1.ResourceTracker{
		*earlierApp("app.ns.v9", 9), *version("v1", 1), *root(), *version("v3", 7), *version("v2", 2), *kubevela("app-v4-ns", 4),
	}
	var got []string
	for _, rt := range NewestFirst(uid, trackers) {
		got = append(got, rt.Name)
	}
	// The live version is the one kept at the highest generation (a
	// rollback moves it), not the newest name.
	want := []string{"app.ns.v3", "app.ns.root", "app-v4-ns", "app.ns.v2", "app.ns.v1", "app.ns.v9"}
	if !slices.Equal(got, want) {
		t.Errorf("NewestFirst = %q, want %q", got, want)
	}
}
