package record

import "github.com/steward-oam/steward/api/v1beta1"

// ComponentRevision is what the component-revision tracker records for one
// revision of one component.
type ComponentRevision struct {
	Revision              int64  `json:"revision"`
	Hash                  string `json:"hash"`
	ApplicationGeneration int64  `json:"applicationGeneration"`
}

// TrimRevisions drops the oldest revisions of components with more than
// limit.
func TrimRevisions(entries []v1beta1.ManagedResource, count map[string]int, limit int) []v1beta1.ManagedResource {
	out := entries[:0:0]
	for _, e := range entries {
		if count[e.Component] > limit {
			count[e.Component]--
			continue
		}
		out = append(out, e)
	}
	return out
}
