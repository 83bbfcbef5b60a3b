package inventory

import (
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestGarbage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		components []string // the spec's, as keeper reads them
		policies   string
		trackers   Trackers
		collected  []int // indexes of Older already collected against the live version
		doomed     []string
		left       []string
		unmarked   []string
	}{{
		name:       "an object that left the spec is doomed (onAppUpdate)",
		components: []string{"a"},
		trackers:   Trackers{Current: version("v2", 2, cm("a", "1")), Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
		doomed:     []string{"app.ns.v1: b (no longer in the current version)"},
	}, {
		name:       "kept by onAppDelete",
		components: []string{"a"},
		policies:   gc("b", "onAppDelete"),
		trackers:   Trackers{Current: version("v2", 2, cm("a", "1")), Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
		left:       []string{"app.ns.v1: b (garbage-collect onAppDelete)"},
	}, {
		name:       "kept by never",
		components: []string{"a"},
		policies:   gc("b", "never"),
		trackers:   Trackers{Current: version("v2", 2, cm("a", "1")), Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
		left:       []string{"app.ns.v1: b (garbage-collect never)"},
	}, {
		name:       "kept by read-only",
		components: []string{"a"},
		policies:   readOnly("b"),
		trackers:   Trackers{Current: version("v2", 2, cm("a", "1")), Older: ptrs(version("v1", 1, cm("a", "1"), skip(cm("b", "1"))))},
		left:       []string{"app.ns.v1: b (read-only)"},
	}, {
		name: "a rule added after the version that recorded the object keeps it",
		// v1 had no rule for b; the spec has one now.
		components: []string{"a"},
		policies:   gc("b", "never"),
		trackers:   Trackers{Current: version("v2", 2, cm("a", "1")), Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
		left:       []string{"app.ns.v1: b (garbage-collect never)"},
	}, {
		name: "skipGC decides nothing on update: the rule that set it is gone",
		// v1 recorded b under a never rule (skipGC, in root and v1); v2
		// dropped b and the rule in one edit.
		components: []string{"a"},
		trackers: Trackers{Current: version("v2", 2, cm("a", "1")), Root: root(skip(meta(cm("b", "1")))),
			Older: ptrs(version("v1", 1, cm("a", "1"), skip(cm("b", "1"))))},
		doomed: []string{"app.ns.v1: b (no longer in the current version)", "app.ns.root: b (left the spec, and no rule keeps it any more)"},
	}, {
		name:       "root keeps an object that left the spec while its rule stays",
		components: []string{"a"},
		policies:   gc("b", "onAppDelete"),
		trackers: Trackers{Current: version("v2", 2, cm("a", "1")), Root: root(meta(cm("b", "1"))),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
		left: []string{"app.ns.root: b (garbage-collect onAppDelete)"},
	}, {
		name: "rule removed after the object left the spec: collected",
		// v2 dropped b under onAppDelete (root kept it); v3 removes the
		// rule.
		components: []string{"a"},
		trackers: Trackers{Current: version("v3", 3, cm("a", "1")), Root: root(meta(cm("b", "1"))),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")), version("v2", 2, cm("a", "1")))},
		doomed: []string{"app.ns.root: b (left the spec, and no rule keeps it any more)", "app.ns.v1: b (no longer in the current version)"},
	}, {
		name: "a live version recorded before versions recorded root objects: root keeps what it lists",
		// Steward before this change: nothing tells whether v2 renders b.
		components: []string{"a"},
		trackers: Trackers{Current: earlierVersion("v2", 2, cm("a", "1")), Root: root(meta(cm("b", "1"))),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
		left: []string{"app.ns.root: b (kept in the root tracker: the live version does not say whether it renders it)"},
	}, {
		name: "moved from root to the version (rule removed, object in the spec): nothing goes",
		// The root entry lost its manifest when v2 recorded b itself.
		components: []string{"a", "b"},
		trackers: Trackers{Current: version("v2", 2, cm("a", "1"), cm("b", "1")), Root: root(meta(cm("b", "1"))),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
	}, {
		name: "moved from the version to root (rule added): nothing goes",
		// v2 records b in root and, with its manifest, in itself.
		components: []string{"a", "b"},
		policies:   gc("b", "onAppDelete"),
		trackers: Trackers{Current: version("v2", 2, cm("a", "1"), cm("b", "2")), Root: root(cm("b", "2")),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
	}, {
		name: "rollback to a version that renders a root object: it is live",
		// p1 and p2 both render b under onAppDelete; publishVersion went
		// back to p1, whose tracker is live again.
		components: []string{"a", "b"},
		policies:   gc("b", "onAppDelete"),
		trackers: Trackers{Current: version("pv-p1", 3, cm("a", "1"), cm("b", "1")), Root: root(cm("b", "2")),
			Older: ptrs(version("pv-p2", 2, cm("a", "2"), cm("b", "2"), cm("c", "2")))},
		doomed: []string{"app.ns.pv-p2: c (no longer in the current version)"},
	}, {
		name: "rollback to a version without a root object, whose rule the spec no longer has",
		// p2 added b under onAppDelete; the spec's rule went (not
		// published); publishVersion back to p1.
		components: []string{"a", "b"},
		trackers: Trackers{Current: version("pv-p1", 3, cm("a", "1")), Root: root(cm("b", "2")),
			Older: ptrs(version("pv-p2", 2, cm("a", "2"), cm("b", "2")))},
		doomed: []string{"app.ns.root: b (the live version does not render it, and no rule keeps it)", "app.ns.pv-p2: b (no longer in the current version)"},
	}, {
		name:       "KubeVela's tracker: what the live version lists stays, the rest goes, its stale marks are cleared",
		components: []string{"a"},
		trackers: Trackers{Current: version("v2", 2, cm("a", "1")),
			Older: ptrs(kubevela("app-v1-ns", 1, marked(cm("a", "0")), cm("c", "0")))},
		doomed:   []string{"app-v1-ns: c (no longer in the current version)"},
		unmarked: []string{"app-v1-ns: a (the live version records it)"},
	}, {
		name: "what KubeVela's root tracker kept, and no recorded version rendered, stays until the Application is deleted",
		// Adopted into Steward's root without a manifest (migration).
		components: []string{"a"},
		trackers:   Trackers{Current: version("v3", 3, cm("a", "1")), Root: root(meta(cm("kept-by-kubevela", "0")))},
		left:       []string{"app.ns.root: kept-by-kubevela (kept in the root tracker until the Application is deleted: no recorded version rendered it)"},
	}, {
		name: "an older tracker already collected against the live version still tells what its version rendered",
		// v1 was collected against v3 before; a rule removed since (a
		// spec edit under a pinned publishVersion moves the generation
		// v3 is kept at, so this is the stamp's own edge).
		components: []string{"a"},
		trackers: Trackers{Current: version("v3", 3, cm("a", "1")), Root: root(meta(cm("b", "1"))),
			Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")), version("v2", 2, cm("a", "1"), cm("c", "1")))},
		collected: []int{0, 1},
		doomed:    []string{"app.ns.root: b (left the spec, and no rule keeps it any more)"},
	}, {
		name:       "an earlier Application's tracker is collected like an older version",
		components: []string{"a"},
		trackers: Trackers{Current: version("v1", 1, cm("a", "1")),
			Older: ptrs(earlierApp("app.ns.v3", 3, cm("a", "0"), cm("old", "0")))},
		doomed: []string{"app.ns.v3: old (no longer in the current version)"},
	}, {
		name: "marked entries: doomed again, or un-marked when live or kept after all",
		// A pass marked b, c and d in v1 and stopped; since then a
		// rollback made c live again and a rule keeps d.
		components: []string{"a", "c"},
		policies:   gc("d", "never"),
		trackers: Trackers{Current: version("v3", 3, cm("a", "1"), cm("c", "1")),
			Older: ptrs(version("v1", 1, cm("a", "1"), marked(cm("b", "1")), marked(cm("c", "1")), marked(cm("d", "1"))))},
		doomed:   []string{"app.ns.v1: b (no longer in the current version)"},
		left:     []string{"app.ns.v1: d (garbage-collect never)"},
		unmarked: []string{"app.ns.v1: c (the live version records it)", "app.ns.v1: d (garbage-collect never)"},
	}, {
		name: "marked entries of the live version and root are StateKeep's",
		// Marks decides them.
		components: []string{"a"},
		trackers:   Trackers{Current: version("v2", 2, cm("a", "1"), marked(cm("x", "1"))), Root: root(marked(meta(cm("y", "1"))))},
	}, {
		name: "a component no longer in the spec has no known type: a type rule may keep it",
		// b was a k8s-objects component; the rule selects by type.
		components: []string{"a"},
		policies:   `[{"name": "gc", "type": "garbage-collect", "properties": {"rules": [{"selector": {"componentTypes": ["webservice"]}, "strategy": "onAppDelete"}]}}]`,
		trackers:   Trackers{Current: version("v2", 2, cm("a", "1")), Older: ptrs(version("v1", 1, cm("a", "1"), cm("b", "1")))},
		left:       []string{"app.ns.v1: b (" + string(WhyTypeUnknown) + ")"},
	}, {
		name:       "a component in the spec has its type: a rule for another type does not keep it",
		components: []string{"a"},
		policies:   `[{"name": "gc", "type": "garbage-collect", "properties": {"rules": [{"selector": {"componentTypes": ["webservice"]}, "strategy": "onAppDelete"}]}}]`,
		trackers:   Trackers{Current: version("v2", 2), Older: ptrs(version("v1", 1, cm("a", "1")))},
		doomed:     []string{"app.ns.v1: a (no longer in the current version)"},
	}, {
		name:       "no live version: nothing is garbage",
		components: []string{"a"},
		trackers:   Trackers{Root: root(meta(cm("b", "1"))), Older: ptrs(version("v1", 1, cm("a", "1")))},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, i := range tc.collected {
				if tc.trackers.Collected == nil {
					tc.trackers.Collected = map[*v1beta1.ResourceTracker]bool{}
				}
				tc.trackers.Collected[tc.trackers.Older[i]] = true
			}
			got, err := Garbage(tc.trackers, keeper(t, tc.components, tc.policies))
			if err != nil {
				t.Fatal(err)
			}
			sameList(t, "doomed", shown(got.Doomed), tc.doomed)
			sameList(t, "left", shown(got.Left), tc.left)
			sameList(t, "unmarked", shown(got.Unmarked), tc.unmarked)
		})
	}
}

func ptrs(rts ...*v1beta1.ResourceTracker) []*v1beta1.ResourceTracker { return rts }
