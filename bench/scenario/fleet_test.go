package scenario

import (
	"testing"

	"github.com/steward-oam/steward/bench/record"
)

func TestBusiestKind_BoundsByTheKindWithMostRequests(t *testing.T) {
	work := record.RequestCounts{
		{Verb: "GET", Resource: "configmaps"}:                                                   600,
		{Verb: "POST", Resource: "configmaps"}:                                                  600,
		{Verb: "POST", Group: "apps", Resource: "deployments"}:                                  100,
		{Verb: "PATCH", Group: "core.oam.dev", Resource: "applications", Subresource: "status"}: 100,
	}
	kind, bound := busiestKind(work, 100, 200)
	if kind != "configmaps" || bound.Seconds() != 10 {
		t.Errorf("busiestKind = %s, %s; want configmaps, 10s", kind, bound)
	}
	if _, bound := busiestKind(record.RequestCounts{{Verb: "GET", Resource: "x"}: 50}, 100, 200); bound != 0 {
		t.Errorf("bound under the burst = %s, want 0", bound)
	}
}
