package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/tracker"
)

// ComponentRevision is what the component-revision tracker records for one
// revision of one component.
type ComponentRevision struct {
	Revision              int64  `json:"revision"`
	Hash                  string `json:"hash"`
	ApplicationGeneration int64  `json:"applicationGeneration"`
}

// MarkedRevision is a component revision as the tracker of a first
// version marks it (tracker.AnnotationComponentRevisions).
type MarkedRevision struct {
	Component string `json:"component"`
	ComponentRevision
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

// ComponentHashes hashes what each component of entries renders (its
// manifests and clusters, without the revision label, which changes with
// every generation), the components in the order they first appear. An
// apply-object step's object belongs to no component.
func ComponentHashes(entries []v1beta1.ManagedResource) ([]string, map[string]string) {
	var order []string
	sums := map[string][]byte{}
	for _, e := range entries {
		if e.Component == "" {
			continue
		}
		if _, ok := sums[e.Component]; !ok {
			order = append(order, e.Component)
		}
		h := sha256.New()
		h.Write(sums[e.Component])
		h.Write([]byte(e.Cluster))
		if m, err := tracker.Manifest(e); err == nil && m != nil {
			labels := m.GetLabels()
			delete(labels, v1beta1.LabelAppRevision)
			m.SetLabels(labels)
			raw, _ := json.Marshal(m.Object)
			h.Write(raw)
		}
		sums[e.Component] = h.Sum(nil)
	}
	hashes := make(map[string]string, len(sums))
	for c, sum := range sums {
		hashes[c] = hex.EncodeToString(sum)[:10]
	}
	return order, hashes
}

// FirstComponentRevisions reports whether the version about to be
// recorded in tracker name is the Application's first: no
// component-revision tracker and no other version of its own. Its
// component revisions (each component at 1) are then marked on its
// tracker (ComponentRevisionsMark), in the request that writes it, rather
// than in a tracker of their own: that one is written with the second
// version.
func FirstComponentRevisions(s *facts.Pass, name string) bool {
	uid := string(s.App.UID)
	if s.Comprev != nil && s.Comprev.Labels[v1beta1.LabelAppUID] == uid {
		return false
	}
	if s.Current != nil && s.Current.Name != name && s.Current.Labels[v1beta1.LabelAppUID] == uid {
		return false
	}
	for i := range s.Older {
		if o := &s.Older[i]; o.Name != name && o.Spec.Type == v1beta1.ResourceTrackerTypeVersioned && o.Labels[v1beta1.LabelAppUID] == uid {
			return false
		}
	}
	return true
}

// maxMark bounds the AnnotationComponentRevisions mark (annotations share
// 256 KiB): a first version of more components than fit writes its
// component-revision tracker at once, as later versions do.
const maxMark = 32 << 10

// ComponentRevisionsMark is the tracker.AnnotationComponentRevisions mark
// of a first version whose component revisions are revs (entries as the
// component-revision tracker holds them), false when it would not fit.
func ComponentRevisionsMark(revs []v1beta1.ManagedResource) (string, bool) {
	marked := make([]MarkedRevision, 0, len(revs))
	for _, e := range revs {
		m := MarkedRevision{Component: e.Component}
		if e.Data != nil {
			_ = json.Unmarshal(e.Data.Raw, &m.ComponentRevision)
		}
		marked = append(marked, m)
	}
	raw, _ := json.Marshal(marked)
	return string(raw), len(raw) <= maxMark
}

// MarkedVersion is the newest version of the Application (s.Current
// included) that marks its component revisions: the first, nil when none
// does.
func MarkedVersion(s *facts.Pass) *v1beta1.ResourceTracker {
	var first *v1beta1.ResourceTracker
	consider := func(o *v1beta1.ResourceTracker) {
		if o != nil && o.Labels[v1beta1.LabelAppUID] == string(s.App.UID) && tracker.Mark(o, tracker.AnnotationComponentRevisions) != "" &&
			(first == nil || o.Spec.ApplicationGeneration > first.Spec.ApplicationGeneration) {
			first = o
		}
	}
	consider(s.Current)
	for i := range s.Older {
		consider(&s.Older[i])
	}
	return first
}

// MarkedComponentRevisions are the component revisions rt marks, as the
// component-revision tracker's entries; none when it marks none.
func MarkedComponentRevisions(rt *v1beta1.ResourceTracker) []v1beta1.ManagedResource {
	var marked []MarkedRevision
	if !tracker.DecodeMark(rt, tracker.AnnotationComponentRevisions, &marked) {
		return nil
	}
	out := make([]v1beta1.ManagedResource, 0, len(marked))
	for _, m := range marked {
		out = append(out, componentRevisionEntry(m.Component, m.ComponentRevision))
	}
	return out
}

// NextComponentRevisions adds to the component-revision entries existing
// a revision of each component of order whose hash moved, at generation
// gen, keeping the newest limit of each component; changed says whether
// any was added.
func NextComponentRevisions(existing []v1beta1.ManagedResource, order []string, hashes map[string]string, gen int64, limit int) ([]v1beta1.ManagedResource, bool) {
	latest := map[string]ComponentRevision{}
	count := map[string]int{}
	for _, e := range existing {
		var rev ComponentRevision
		if e.Data != nil && json.Unmarshal(e.Data.Raw, &rev) == nil && rev.Revision >= latest[e.Component].Revision {
			latest[e.Component] = rev
		}
		count[e.Component]++
	}
	changed := false
	out := append([]v1beta1.ManagedResource(nil), existing...)
	for _, comp := range order {
		if latest[comp].Hash == hashes[comp] {
			continue
		}
		out = append(out, componentRevisionEntry(comp, ComponentRevision{Revision: latest[comp].Revision + 1, Hash: hashes[comp], ApplicationGeneration: gen}))
		count[comp]++
		changed = true
	}
	return TrimRevisions(out, count, limit), changed
}

// NewestGeneration is the highest Application generation of the
// component-revision entries revs.
func NewestGeneration(revs []v1beta1.ManagedResource) int64 {
	var gen int64
	for _, e := range revs {
		var rev ComponentRevision
		if e.Data != nil && json.Unmarshal(e.Data.Raw, &rev) == nil {
			gen = max(gen, rev.ApplicationGeneration)
		}
	}
	return gen
}

// componentRevisionEntry is the component-revision tracker's entry of
// revision rev of component comp.
func componentRevisionEntry(comp string, rev ComponentRevision) v1beta1.ManagedResource {
	raw, _ := json.Marshal(rev)
	return v1beta1.ManagedResource{
		ClusterObjectReference: v1beta1.ClusterObjectReference{APIVersion: v1beta1.GroupVersion.String(), Kind: "ComponentRevision",
			Name: fmt.Sprintf("%s-v%d", comp, rev.Revision)},
		OAMObjectReference: v1beta1.OAMObjectReference{Component: comp},
		Data:               &runtime.RawExtension{Raw: raw},
	}
}
