package application

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/tracker"
)

// collectGarbage deletes what no live tracker wants any more, once the
// current version is fully applied: inventory.Garbage decides what (the
// objects of older versions, and those the root tracker kept that no rule
// keeps now); this phase only carries it out. Two phases: entries are
// first marked deleted in their tracker, then their objects are deleted
// (only when the live object is still ours, with UID and resourceVersion
// preconditions), and the mark is cleared once the deletion is
// confirmed: an older tracker keeps the entry as history for rollbacks,
// the root tracker drops it. A failed delete stays marked and is retried
// on the next pass. Older trackers beyond the revision limit are removed
// once they hold nothing left to delete (inventory.Recycle).
func (r *Reconciler) collectGarbage(ctx context.Context, s *scope) error {
	if s.flowErr != nil || (s.flow != nil && !s.flow.Succeeded()) || (s.flow == nil && s.keep.gated > 0) {
		// The workflow has steps to run, or failed: what earlier
		// versions applied stays until the steps that replace it have
		// run, whatever continueOnFailure says. Once it succeeded, what
		// its skipped steps would deliver is left as it is: those
		// entries are the current version's, so nothing older is
		// collected for them.
		s.gc.skipped = true
		return nil
	}
	dispatched := len(s.keep.failures) == 0 && len(s.keep.waiting) == 0
	if s.current == nil || s.recordErr != nil || s.rulesErr != nil || s.identityErr != nil || (!dispatched && !s.rules.GC.ContinueOnFailure) {
		s.gc.skipped = true
		return nil
	}
	if s.hasKubeVelaTrackers() {
		r.deleteKubeVelaContext(ctx, s)
	}
	if err := r.adoptKubeVelaRoots(ctx, s); err != nil {
		s.setRetry(err)
		s.gc.skipped = true
		return nil
	}
	if s.rules.GC.KeepLegacyResource {
		// Outdated versions and their objects are kept until the
		// Application is deleted.
		return nil
	}
	keeper := inventory.KeeperOf(s.app, s.rules)
	// An older tracker is collected once per live version: later passes
	// cost nothing until the live version changes.
	stamp := fmt.Sprintf("%s@%d", s.current.Name, s.current.Spec.ApplicationGeneration)
	trackers := inventory.Trackers{Current: s.current, Root: s.root, Collected: map[*v1beta1.ResourceTracker]bool{}}
	var pending []*v1beta1.ResourceTracker
	for i := range s.older {
		rt := &s.older[i]
		if _, err := tracker.Entries(rt); err != nil {
			s.gc.failures = append(s.gc.failures, objectFailure{Reason: v1beta1.ReasonDeleteFailed, Err: err})
			continue
		}
		trackers.Older = append(trackers.Older, rt)
		if tracker.Mark(rt, tracker.AnnotationCollectedAgainst) == stamp {
			trackers.Collected[rt] = true
			continue
		}
		pending = append(pending, rt)
	}
	col, err := inventory.Garbage(trackers, keeper)
	if err != nil {
		s.gc.skipped = true
		return nil
	}
	for _, d := range col.Left {
		level := decisionLevel
		if d.Tracker == s.root {
			// Decided again on every pass: the older trackers' are
			// logged once per live version.
			level = unchangedLevel
		}
		decisionLog(ctx, d.Key(), level).Info("Left in place by garbage collection", "component", d.Entry.Component, "reason", string(d.Why), "resourceTracker", d.Tracker.Name)
	}
	settled, err := r.collect(ctx, s, col)
	if err != nil {
		return err
	}
	for _, rt := range pending {
		if !settled[rt] {
			continue
		}
		if err := r.Trackers.Annotate(ctx, rt, tracker.AnnotationCollectedAgainst, stamp); err != nil {
			s.setRetry(err)
			return err
		}
	}
	return r.recycle(ctx, s, keeper)
}

// collect carries out a collection: every tracker that lists a doomed
// entry records the intent (the mark) before anything is deleted, stale
// marks are cleared in the same write; then each doomed object is
// deleted once, in deletion order; then each tracker settles what is
// confirmed gone. It returns which trackers hold nothing marked any more.
func (r *Reconciler) collect(ctx context.Context, s *scope, col inventory.Collection) (map[*v1beta1.ResourceTracker]bool, error) {
	doomed := map[*v1beta1.ResourceTracker]inventory.Set{}
	unmark := map[*v1beta1.ResourceTracker]inventory.Set{}
	var order []*v1beta1.ResourceTracker
	add := func(into map[*v1beta1.ResourceTracker]inventory.Set, d inventory.Decision) {
		if doomed[d.Tracker] == nil && unmark[d.Tracker] == nil {
			order = append(order, d.Tracker)
		}
		if into[d.Tracker] == nil {
			into[d.Tracker] = inventory.Set{}
		}
		into[d.Tracker][d.Key()] = true
	}
	for _, d := range col.Doomed {
		add(doomed, d)
	}
	for _, d := range col.Unmarked {
		add(unmark, d)
		decisionLog(ctx, d.Key(), decisionLevel).Info("Cleared a deletion mark: nothing deletes the object", "component", d.Entry.Component, "reason", string(d.Why), "resourceTracker", d.Tracker.Name)
	}
	// Phase one: write down the intent before deleting anything.
	for _, rt := range order {
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		entries = unmarked(inventory.MarkDeleted(entries, doomed[rt]), unmark[rt])
		if err := r.Trackers.Save(ctx, rt, entries, 0); err != nil {
			s.setRetry(err)
			return nil, err
		}
	}
	settled := map[*v1beta1.ResourceTracker]bool{}
	for i := range s.older {
		settled[&s.older[i]] = true
	}
	if len(col.Doomed) == 0 {
		return settled, nil
	}
	if err := r.hooks.call(hookAfterMark); err != nil {
		return nil, err
	}
	// Phase two: delete each object once.
	gone := r.deleteInOrder(ctx, s, r.applierFor(s.app), onePerObject(col.Doomed))
	// Phase three: an entry is settled only once its object is confirmed
	// gone: an older tracker keeps it, un-marked, as the record of what
	// its version rendered (a rollback applies it again); the root tracker
	// drops it.
	for _, rt := range order {
		if doomed[rt] == nil {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		if rt == s.root {
			entries = inventory.WithoutMarked(entries, gone)
		} else {
			entries = unmarked(entries, gone)
		}
		for _, e := range entries {
			settled[rt] = settled[rt] && !e.Deleted
		}
		if err := r.Trackers.Save(ctx, rt, entries, 0); err != nil {
			s.setRetry(err)
			return nil, err
		}
	}
	return settled, nil
}

// recycle deletes the older trackers inventory.Recycle lets go: beyond
// the revision limit, or left by an earlier Application of the same name
// or by KubeVela, once they hold nothing left to delete.
func (r *Reconciler) recycle(ctx context.Context, s *scope, keeper inventory.Keeper) error {
	keepHistory := r.Options.RevisionLimit
	if limit := s.rules.GC.ApplicationRevisionLimit; limit != nil && *limit >= 0 {
		keepHistory = *limit
	}
	older := make([]*v1beta1.ResourceTracker, len(s.older))
	for i := range s.older {
		older[i] = &s.older[i]
	}
	recycled, err := inventory.Recycle(inventory.Trackers{Current: s.current, Root: s.root, Older: older}, keeper, string(s.app.UID), keepHistory)
	if err != nil {
		return nil
	}
	for _, rc := range recycled {
		if err := r.Trackers.Delete(ctx, rc.Tracker); err != nil {
			s.setRetry(err)
			return err
		}
		if rc.Why == inventory.RecycledKubeVela {
			s.tookOver(ctx, "Deleted KubeVela's resource tracker: what it listed is collected or recorded by Steward's", "deleted KubeVela's resource tracker "+rc.Tracker.Name, "resourceTracker", rc.Tracker.Name)
			continue
		}
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Deleted an older resource tracker", "resourceTracker", rc.Tracker.Name, "reason", rc.Why)
	}
	return nil
}

// unmarked returns entries with the marks of keys cleared.
func unmarked(entries []v1beta1.ManagedResource, keys inventory.Set) []v1beta1.ManagedResource {
	for i := range entries {
		if keys[tracker.KeyOf(entries[i])] {
			entries[i].Deleted = false
		}
	}
	return entries
}

// onePerObject returns decisions with one per object: several trackers
// may doom the same one.
func onePerObject(ds []inventory.Decision) []inventory.Decision {
	seen := inventory.Set{}
	out := make([]inventory.Decision, 0, len(ds))
	for _, d := range ds {
		if k := d.Key(); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}
