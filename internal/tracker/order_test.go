package tracker

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Versions published without a spec change share a generation: their
// order is their revisions' numbers, whatever order a list gives them in
// (the cache's is a map's). Garbage collection recycles the oldest first
// by this order; by name, pv-gamma would go before pv-delta.
func TestSortOldestFirst(t *testing.T) {
	now := metav1.NewTime(time.Unix(1_800_000_000, 0))
	rt := func(name string, gen int64, rev string) v1beta1.ResourceTracker {
		r := v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: now}, Spec: v1beta1.ResourceTrackerSpec{ApplicationGeneration: gen}}
		if rev != "" {
			r.Labels = map[string]string{v1beta1.LabelAppRevision: rev}
		}
		return r
	}
	later := rt("web.ns.pv-alpha2", 1, "")
	later.CreationTimestamp = metav1.NewTime(now.Add(time.Second))
	for _, order := range [][]v1beta1.ResourceTracker{
		{rt("web.ns.pv-gamma", 2, "web-v3"), rt("web.ns.pv-delta", 2, "web-v4"), rt("web.ns.pv-beta", 2, "web-v2"), later, rt("web.ns.pv-alpha", 1, "")},
		{later, rt("web.ns.pv-delta", 2, "web-v4"), rt("web.ns.pv-alpha", 1, ""), rt("web.ns.pv-beta", 2, "web-v2"), rt("web.ns.pv-gamma", 2, "web-v3")},
	} {
		SortOldestFirst(order)
		var names []string
		for _, r := range order {
			names = append(names, strings.TrimPrefix(r.Name, "web.ns."))
		}
		if got, want := strings.Join(names, ","), "pv-alpha,pv-alpha2,pv-beta,pv-gamma,pv-delta"; got != want {
			t.Errorf("order %s, want %s", got, want)
		}
	}
	if n, ok := RevisionNumber("web-v12"); !ok || n != 12 {
		t.Errorf("RevisionNumber(web-v12) = %d, %v", n, ok)
	}
	if _, ok := RevisionNumber("web-alpha"); ok {
		t.Error("RevisionNumber(web-alpha) read a number")
	}
}
