package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// componentRevision is what the component-revision tracker records for one
// revision of one component.
type componentRevision struct {
	Revision              int64  `json:"revision"`
	Hash                  string `json:"hash"`
	ApplicationGeneration int64  `json:"applicationGeneration"`
}

// recordComponentRevisions adds a revision to the component-revision
// tracker for each component whose rendered objects changed, keeping the
// newest --application-revision-limit revisions of each component. The
// entries are records only: nothing is applied or deleted for them.
func (r *ApplicationReconciler) recordComponentRevisions(ctx context.Context, s *scope, entries []v1beta1.ManagedResource) error {
	hashes := map[string]string{}
	var order []string
	sums := map[string][]byte{}
	for _, e := range entries {
		if e.Component == "" {
			// An apply-object step's object belongs to no component.
			continue
		}
		if _, ok := sums[e.Component]; !ok {
			order = append(order, e.Component)
		}
		h := sha256.New()
		h.Write(sums[e.Component])
		h.Write([]byte(e.Cluster))
		if m, err := tracker.Manifest(e); err == nil && m != nil {
			// The revision label changes with every generation; what the
			// component renders is the rest.
			labels := m.GetLabels()
			delete(labels, v1beta1.LabelAppRevision)
			m.SetLabels(labels)
			raw, _ := json.Marshal(m.Object)
			h.Write(raw)
		}
		sums[e.Component] = h.Sum(nil)
	}
	for c, sum := range sums {
		hashes[c] = hex.EncodeToString(sum)[:10]
	}
	ref := tracker.RefOf(s.app)
	rt := s.comprev
	if rt != nil && rt.Labels[v1beta1.LabelAppUID] != ref.UID {
		// Left by an earlier Application of the same name: its history is
		// not this one's.
		if err := r.Trackers.Delete(ctx, rt); err != nil {
			return err
		}
		rt, s.comprev = nil, nil
	}
	var existing []v1beta1.ManagedResource
	if rt != nil {
		var err error
		if existing, err = tracker.Entries(rt); err != nil {
			return err
		}
	}
	latest := map[string]componentRevision{}
	count := map[string]int{}
	for _, e := range existing {
		var rev componentRevision
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
		rev := componentRevision{Revision: latest[comp].Revision + 1, Hash: hashes[comp], ApplicationGeneration: s.app.Generation}
		raw, _ := json.Marshal(rev)
		out = append(out, v1beta1.ManagedResource{
			ClusterObjectReference: v1beta1.ClusterObjectReference{APIVersion: v1beta1.GroupVersion.String(), Kind: "ComponentRevision",
				Name: fmt.Sprintf("%s-v%d", comp, rev.Revision)},
			OAMObjectReference: v1beta1.OAMObjectReference{Component: comp},
			Data:               &runtime.RawExtension{Raw: raw},
		})
		count[comp]++
		changed = true
	}
	if !changed {
		return nil
	}
	out = trimRevisions(out, count, max(r.Options.RevisionLimit, 1))
	if rt == nil {
		_, err := r.Trackers.Record(ctx, ref, tracker.ComponentRevision(), s.app.Generation, out, tracker.DeleteMissing, nil)
		return err
	}
	return r.Trackers.Save(ctx, rt, out, s.app.Generation)
}

// trimRevisions drops the oldest revisions of components with more than
// limit.
func trimRevisions(entries []v1beta1.ManagedResource, count map[string]int, limit int) []v1beta1.ManagedResource {
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
