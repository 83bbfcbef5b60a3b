package inventory

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

func names(entries []v1beta1.ManagedResource) []string {
	var out []string
	for _, e := range entries {
		s := e.Name
		if e.Data != nil {
			s += "=" + value(e)
		}
		if e.Deleted {
			s += " (marked)"
		}
		out = append(out, s)
	}
	return out
}

// value is the data.v of an entry's manifest.
func value(e v1beta1.ManagedResource) string {
	obj, err := tracker.Manifest(e)
	if err != nil || obj == nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, "data", "v")
	return v
}

func TestKept_TheLiveVersionsManifestWinsOverRoots(t *testing.T) {
	// Rolled back to p1: the live version records b as p1 rendered it,
	// root as p2 did. c left the spec (root keeps it, metadata only), d is
	// marked in root.
	current := []v1beta1.ManagedResource{cm("a", "1"), cm("b", "1")}
	rootEntries := []v1beta1.ManagedResource{cm("b", "2"), meta(cm("c", "2")), marked(meta(cm("d", "2")))}
	got := names(Kept(current, rootEntries))
	want := []string{"a=1", "b=1", "c", "d (marked)"}
	if !slices.Equal(got, want) {
		t.Errorf("Kept = %q, want %q", got, want)
	}
	// A version recorded before versions recorded root objects: root's
	// manifest is the only one, and is applied.
	if got, want := names(Kept([]v1beta1.ManagedResource{cm("a", "1")}, []v1beta1.ManagedResource{cm("b", "2")})), []string{"a=1", "b=2"}; !slices.Equal(got, want) {
		t.Errorf("Kept = %q, want %q", got, want)
	}
}

func TestAppliedOf_OneEntryPerObjectTheFirstTrackers(t *testing.T) {
	got, err := AppliedOf(version("pv-p1", 3, cm("a", "1"), cm("b", "1")), root(cm("b", "2"), meta(cm("c", "2"))))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(got), []string{"a=1", "b=1"}; !slices.Equal(got, want) {
		t.Errorf("AppliedOf = %q, want %q", got, want)
	}
}

func TestWithRoot_AVersionRecordsItsRootObjects(t *testing.T) {
	versioned := []v1beta1.ManagedResource{cm("a", "1"), cm("b", "old")}
	rootEntries := []v1beta1.ManagedResource{cm("b", "1"), cm("c", "1")}
	if got, want := names(WithRoot(versioned, rootEntries)), []string{"a=1", "b=1", "c=1"}; !slices.Equal(got, want) {
		t.Errorf("WithRoot = %q, want %q", got, want)
	}
	if got := WithRoot(versioned, nil); len(got) != 2 {
		t.Errorf("WithRoot without root = %q", names(got))
	}
}

func TestMarks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		components []string
		policies   string
		trackers   Trackers
		want       map[string]string // object: mark (why)
		settled    map[string][]string
	}{{
		name: "marked in the version, applied by root: dropped",
		// The version was recorded again with b moved to root.
		components: []string{"a", "b"},
		policies:   gc("b", "onAppDelete"),
		trackers:   Trackers{Current: version("v1", 1, cm("a", "1"), marked(cm("b", "1"))), Root: root(cm("b", "1"))},
		want:       map[string]string{"b": "drop (still wanted by another tracker)"},
		settled:    map[string][]string{"current": {"a=1"}, "root": {"b=1"}},
	}, {
		name:       "marked in the version, wanted by nothing: deleted",
		components: []string{"a"},
		trackers:   Trackers{Current: version("v1", 1, cm("a", "1"), marked(cm("b", "1")))},
		want:       map[string]string{"b": "delete (marked for deletion in its tracker)"},
		settled:    map[string][]string{"current": {"a=1", "b=1 (marked)"}},
	}, {
		name: "marked in the version, kept by a rule: kept, listed without a manifest",
		// A tracker taken over from an earlier Application of the same
		// name: b is not rendered, and a never rule selects it.
		components: []string{"a"},
		policies:   gc("b", "never"),
		trackers:   Trackers{Current: version("v1", 1, cm("a", "1"), marked(cm("b", "0")))},
		want:       map[string]string{"b": "keep (garbage-collect never)"},
		settled:    map[string][]string{"current": {"a=1", "b"}},
	}, {
		name: "marked in root by garbage collection, the pass stopped: deleted",
		// seed 37959 after a SIGKILL between mark and delete.
		components: []string{"a"},
		trackers:   Trackers{Current: version("v3", 3, cm("a", "1")), Root: root(marked(meta(cm("b", "1"))))},
		want:       map[string]string{"b": "delete (marked for deletion in its tracker)"},
	}, {
		name:       "marked in root, its rule back since: kept",
		components: []string{"a"},
		policies:   gc("b", "onAppDelete"),
		trackers:   Trackers{Current: version("v3", 3, cm("a", "1")), Root: root(marked(meta(cm("b", "1"))))},
		want:       map[string]string{"b": "keep (garbage-collect onAppDelete)"},
		settled:    map[string][]string{"root": {"b"}},
	}, {
		name:       "marked in root, the live version renders it again: dropped",
		components: []string{"a", "b"},
		trackers:   Trackers{Current: version("v4", 4, cm("a", "1"), cm("b", "4")), Root: root(marked(meta(cm("b", "1"))))},
		want:       map[string]string{"b": "drop (still wanted by another tracker)"},
		settled:    map[string][]string{"root": {}},
	}, {
		name: "marked in root, then rolled back to a version recorded before versions recorded root objects: kept",
		// That version may deliver it.
		components: []string{"a"},
		trackers:   Trackers{Current: earlierVersion("v1", 5, cm("a", "1")), Root: root(marked(meta(cm("b", "1"))))},
		want:       map[string]string{"b": "keep (kept in the root tracker: the live version does not say whether it renders it)"},
	}, {
		name:       "nothing marked: no decisions",
		components: []string{"a"},
		trackers:   Trackers{Current: version("v1", 1, cm("a", "1")), Root: root(meta(cm("b", "1")))},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			marks, err := Marks(tc.trackers, keeper(t, tc.components, tc.policies))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, m := range marks {
				got[k.Name] = fmt.Sprintf("%s (%s)", [...]string{"delete", "drop", "keep"}[m.Mark], m.Why)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) && (len(got) > 0 || len(tc.want) > 0) {
				t.Errorf("Marks:\n got  %v\n want %v", got, tc.want)
			}
			for which, want := range tc.settled {
				rt := tc.trackers.Current
				if which == "root" {
					rt = tc.trackers.Root
				}
				entries, _ := tracker.Entries(rt)
				if got := names(SettleMarks(entries, marks)); !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
					t.Errorf("SettleMarks(%s) = %q, want %q", which, got, want)
				}
			}
		})
	}
}
