package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// revisionsOf names component-revision entries as <name>@<generation>.
func revisionsOf(t *testing.T, revs []v1beta1.ManagedResource) string {
	t.Helper()
	var out []string
	for _, e := range revs {
		var rev ComponentRevision
		if err := json.Unmarshal(e.Data.Raw, &rev); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s@%d", e.Name, rev.ApplicationGeneration))
	}
	return strings.Join(out, ",")
}

// A component gets a revision when its hash moves, none when it does not;
// the oldest go past the limit; what a first version marks on its tracker
// reads back as the same entries.
func TestComponentRevisions_NextAndMark(t *testing.T) {
	order := []string{"web", "db"}
	revs, changed := NextComponentRevisions(nil, order, map[string]string{"web": "a1", "db": "b1"}, 1, 2)
	if !changed || revisionsOf(t, revs) != "web-v1@1,db-v1@1" {
		t.Fatalf("first: %s (changed %v)", revisionsOf(t, revs), changed)
	}
	if _, changed := NextComponentRevisions(revs, order, map[string]string{"web": "a1", "db": "b1"}, 2, 2); changed {
		t.Error("the same hashes added a revision")
	}
	revs, _ = NextComponentRevisions(revs, order, map[string]string{"web": "a2", "db": "b1"}, 2, 2)
	revs, _ = NextComponentRevisions(revs, order, map[string]string{"web": "a3", "db": "b1"}, 3, 2)
	if got := revisionsOf(t, revs); got != "db-v1@1,web-v2@2,web-v3@3" {
		t.Errorf("after two changes of web, limit 2: %s", got)
	}
	mark, ok := ComponentRevisionsMark(revs)
	if !ok {
		t.Fatal("a mark of three revisions does not fit")
	}
	rt := &v1beta1.ResourceTracker{}
	rt.Annotations = map[string]string{tracker.AnnotationComponentRevisions: mark}
	if got, want := revisionsOf(t, MarkedComponentRevisions(rt)), revisionsOf(t, revs); got != want {
		t.Errorf("marked %s, read back %s", want, got)
	}
	if NewestGeneration(revs) != 3 {
		t.Errorf("newest generation %d, want 3", NewestGeneration(revs))
	}
	many := map[string]string{}
	var names []string
	for i := range 1000 {
		names = append(names, fmt.Sprintf("component-%04d", i))
		many[names[i]] = "0123456789"
	}
	big, _ := NextComponentRevisions(nil, names, many, 1, 10)
	if _, ok := ComponentRevisionsMark(big); ok {
		t.Error("a mark of 1,000 components fits in the annotation budget")
	}
}
