package application

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
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
func (r *Reconciler) collectGarbage(ctx context.Context, s *facts.Pass) error {
	if s.FlowErr != nil || (s.Flow != nil && !s.Flow.Succeeded()) || (s.Flow == nil && s.Keep.Gated > 0) {
		// The workflow has steps to run, or failed: what earlier
		// versions applied stays until the steps that replace it have
		// run, whatever continueOnFailure says. Once it succeeded, what
		// its skipped steps would deliver is left as it is: those
		// entries are the current version's, so nothing older is
		// collected for them.
		s.GC.Skipped = true
		return nil
	}
	dispatched := len(s.Keep.Failures) == 0 && len(s.Keep.Waiting) == 0
	if s.Current == nil || s.RecordErr != nil || s.RulesErr != nil || s.IdentityErr != nil || (!dispatched && !s.Rules.GC.ContinueOnFailure) {
		s.GC.Skipped = true
		return nil
	}
	if s.HasKubeVelaTrackers() {
		r.deleteKubeVelaContext(ctx, s)
	}
	if err := r.adoptKubeVelaRoots(ctx, s); err != nil {
		s.SetRetry(err)
		s.GC.Skipped = true
		return nil
	}
	if s.Rules.GC.KeepLegacyResource {
		// Outdated versions and their objects are kept until the
		// Application is deleted.
		return nil
	}
	keeper := inventory.KeeperOf(s.App, s.Rules)
	// An older tracker is collected once per live version: later passes
	// cost nothing until the live version changes.
	stamp := fmt.Sprintf("%s@%d", s.Current.Name, s.Current.Spec.ApplicationGeneration)
	trackers := inventory.Trackers{Current: s.Current, Root: s.Root, Collected: map[*v1beta1.ResourceTracker]bool{}}
	var pending []*v1beta1.ResourceTracker
	for i := range s.Older {
		rt := &s.Older[i]
		if _, err := tracker.Entries(rt); err != nil {
			s.GC.Failures = append(s.GC.Failures, facts.Failure{Reason: v1beta1.ReasonDeleteFailed, Err: err})
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
		s.GC.Skipped = true
		return nil
	}
	for _, d := range col.Left {
		level := decisionlog.Decision
		if d.Tracker == s.Root {
			// Decided again on every pass: the older trackers' are
			// logged once per live version.
			level = decisionlog.Unchanged
		}
		decisionlog.For(ctx, d.Key(), level).Info("Left in place by garbage collection", "component", d.Entry.Component, "reason", string(d.Why), "resourceTracker", d.Tracker.Name)
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
			s.SetRetry(err)
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
func (r *Reconciler) collect(ctx context.Context, s *facts.Pass, col inventory.Collection) (map[*v1beta1.ResourceTracker]bool, error) {
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
		decisionlog.For(ctx, d.Key(), decisionlog.Decision).Info("Cleared a deletion mark: nothing deletes the object", "component", d.Entry.Component, "reason", string(d.Why), "resourceTracker", d.Tracker.Name)
	}
	// Phase one: write down the intent before deleting anything.
	for _, rt := range order {
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		entries = inventory.Unmark(inventory.MarkDeleted(entries, doomed[rt]), unmark[rt])
		if err := r.Trackers.Save(ctx, rt, entries, 0); err != nil {
			s.SetRetry(err)
			return nil, err
		}
	}
	settled := map[*v1beta1.ResourceTracker]bool{}
	for i := range s.Older {
		settled[&s.Older[i]] = true
	}
	if len(col.Doomed) == 0 {
		return settled, nil
	}
	if err := r.hooks.call(hookAfterMark); err != nil {
		return nil, err
	}
	// Phase two: delete each object once.
	gone := r.deleteInOrder(ctx, s, r.applierFor(s.App), inventory.OnePerObject(col.Doomed))
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
		if rt == s.Root {
			entries = inventory.WithoutMarked(entries, gone)
		} else {
			entries = inventory.Unmark(entries, gone)
		}
		for _, e := range entries {
			settled[rt] = settled[rt] && !e.Deleted
		}
		if err := r.Trackers.Save(ctx, rt, entries, 0); err != nil {
			s.SetRetry(err)
			return nil, err
		}
	}
	return settled, nil
}

// recycle deletes the older trackers inventory.Recycle lets go: beyond
// the revision limit, or left by an earlier Application of the same name
// or by KubeVela, once they hold nothing left to delete.
func (r *Reconciler) recycle(ctx context.Context, s *facts.Pass, keeper inventory.Keeper) error {
	keepHistory := r.Options.RevisionLimit
	if limit := s.Rules.GC.ApplicationRevisionLimit; limit != nil && *limit >= 0 {
		keepHistory = *limit
	}
	older := make([]*v1beta1.ResourceTracker, len(s.Older))
	for i := range s.Older {
		older[i] = &s.Older[i]
	}
	recycled, err := inventory.Recycle(inventory.Trackers{Current: s.Current, Root: s.Root, Older: older}, keeper, string(s.App.UID), keepHistory)
	if err != nil {
		return nil
	}
	for _, rc := range recycled {
		if err := r.Trackers.Delete(ctx, rc.Tracker); err != nil {
			s.SetRetry(err)
			return err
		}
		if rc.Why == inventory.RecycledKubeVela {
			tookOver(ctx, s, "Deleted KubeVela's resource tracker: what it listed is collected or recorded by Steward's", "deleted KubeVela's resource tracker "+rc.Tracker.Name, "resourceTracker", rc.Tracker.Name)
			continue
		}
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Deleted an older resource tracker", "resourceTracker", rc.Tracker.Name, "reason", rc.Why)
		if rc.Why == inventory.RecycledBeyondLimit {
			if err := r.Revisions.DeleteWith(ctx, s, rc.Tracker); err != nil {
				s.SetRetry(err)
			}
		}
	}
	return nil
}
