package controller

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
)

// collectGarbage deletes what only older versions recorded, once the
// current version is fully applied. Two phases: entries are first marked
// deleted in their tracker, then their objects are deleted (only when the
// live object is still ours, with UID and resourceVersion preconditions),
// and the mark is cleared once the deletion is confirmed: the older
// tracker keeps the entry as history for rollbacks. A failed delete stays
// marked and is retried on the next pass. Older trackers beyond the
// revision limit are removed once they hold nothing left to delete.
func (r *ApplicationReconciler) collectGarbage(ctx context.Context, s *scope) error {
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
	if err := r.pruneMovedRoot(ctx, s); err != nil {
		s.setRetry(err)
		s.gc.skipped = true
		return nil
	}
	entries, err := inventory.Of(s.current, s.root)
	live := inventory.Listed(entries)
	if err != nil {
		s.gc.skipped = true
		return nil
	}
	applier := r.applierFor(s.app)
	for i := range s.older {
		if err := r.collectTracker(ctx, s, applier, &s.older[i], live); err != nil {
			return err
		}
	}
	return r.recycle(ctx, s, live)
}

// collectTracker handles the garbage of one older tracker. The older
// tracker stays as history of what its version rendered (a rollback
// applies it again): an entry whose object is confirmed gone is kept,
// un-marked, and the tracker is stamped with the version it was collected
// against so that later passes cost nothing until the live version
// changes.
func (r *ApplicationReconciler) collectTracker(ctx context.Context, s *scope, applier apply.Applier, rt *v1beta1.ResourceTracker, live map[tracker.Key]bool) error {
	stamp := fmt.Sprintf("%s@%d", s.current.Name, s.current.Spec.ApplicationGeneration)
	if rt.Annotations[annotationCollectedAgainst] == stamp {
		return nil
	}
	entries, err := tracker.Entries(rt)
	if err != nil {
		s.gc.failures = append(s.gc.failures, objectFailure{Reason: v1beta1.ReasonDeleteFailed, Err: err})
		return nil
	}
	garbage := map[tracker.Key]bool{}
	types := componentTypes(s.app)
	for _, e := range entries {
		k := tracker.KeyOf(e)
		if live[k] || e.SkipGC {
			continue
		}
		if keptOnUpdate(s.rules, resourceOf(e, types)) {
			// The policies as they are now keep it, whatever the
			// version that recorded it said: a rule added later counts.
			ctrl.LoggerFrom(ctx).V(1).Info("Left in place by garbage collection", "object", k.String(), "component", e.Component)
			continue
		}
		garbage[k] = true
	}
	if len(garbage) > 0 {
		// Phase one: write down the intent before deleting anything.
		marked := inventory.MarkDeleted(entries, garbage)
		if err := r.Trackers.Save(ctx, rt, marked, 0); err != nil {
			s.setRetry(err)
			return err
		}
		if err := r.hooks.call(hookAfterMark); err != nil {
			return err
		}
		// Phase two: delete; an entry is un-marked only once its object is
		// confirmed gone.
		var doomed []v1beta1.ManagedResource
		for _, e := range marked {
			if garbage[tracker.KeyOf(e)] {
				doomed = append(doomed, e)
			}
		}
		gone := r.deleteInOrder(ctx, s, applier, doomed, "no longer in the current version")
		history := make([]v1beta1.ManagedResource, len(marked))
		settled := true
		for i, e := range marked {
			if gone[tracker.KeyOf(e)] {
				e.Deleted = false
			}
			settled = settled && !e.Deleted
			history[i] = e
		}
		if err := r.Trackers.Save(ctx, rt, history, 0); err != nil {
			s.setRetry(err)
			return err
		}
		if !settled {
			return nil
		}
	}
	if err := r.Trackers.Annotate(ctx, rt, annotationCollectedAgainst, stamp); err != nil {
		s.setRetry(err)
		return err
	}
	return nil
}

// recycle removes the oldest trackers beyond the revision limit, and
// trackers left by an earlier Application of the same name or by KubeVela,
// once they hold no entry still waiting for deletion and no entry the
// policies keep that no live tracker lists (it would be left untracked:
// neither repaired nor deleted with the Application).
func (r *ApplicationReconciler) recycle(ctx context.Context, s *scope, live map[tracker.Key]bool) error {
	keepHistory := r.Options.RevisionLimit
	if limit := s.rules.GC.ApplicationRevisionLimit; limit != nil && *limit >= 0 {
		keepHistory = *limit
	}
	var mine []*v1beta1.ResourceTracker
	for i := range s.older {
		rt := &s.older[i]
		if tracker.KubeVelas(rt) {
			deleted, err := r.deleteIfSettled(ctx, s, rt, live)
			if err != nil {
				return err
			}
			if deleted {
				s.tookOver(ctx, "Deleted KubeVela's resource tracker: what it listed is collected or recorded by Steward's", "deleted KubeVela's resource tracker "+rt.Name, "resourceTracker", rt.Name)
			}
			continue
		}
		if rt.Labels[v1beta1.LabelAppUID] != string(s.app.UID) {
			if _, err := r.deleteIfSettled(ctx, s, rt, live); err != nil {
				return err
			}
			continue
		}
		mine = append(mine, rt)
	}
	for i := 0; i < len(mine)-keepHistory; i++ {
		if _, err := r.deleteIfSettled(ctx, s, mine[i], live); err != nil {
			return err
		}
	}
	return nil
}

// deleteIfSettled deletes rt once nothing it lists waits for deletion or
// would be left untracked; it reports whether it deleted it.
func (r *ApplicationReconciler) deleteIfSettled(ctx context.Context, s *scope, rt *v1beta1.ResourceTracker, live map[tracker.Key]bool) (bool, error) {
	entries, err := tracker.Entries(rt)
	if err != nil {
		return false, nil
	}
	types := componentTypes(s.app)
	kubevelas := tracker.KubeVelas(rt)
	for _, e := range entries {
		if e.Deleted && !(kubevelas && live[tracker.KeyOf(e)]) {
			// An entry KubeVela marked deleted whose object the live
			// version records is Steward's to keep, not garbage.
			return false, nil
		}
		if !live[tracker.KeyOf(e)] && (e.SkipGC || keptOnUpdate(s.rules, resourceOf(e, types))) {
			return false, nil
		}
	}
	if err := r.Trackers.Delete(ctx, rt); err != nil {
		s.setRetry(err)
		return false, err
	}
	return true, nil
}

// pruneMovedRoot handles objects that left the root set for the version:
// their garbage-collect rule went, so the current version records them
// with a manifest, while the root tracker still has the manifest-less
// entry it keeps for objects that leave the spec. That entry would keep
// the object alive after it leaves the version too, so it goes. Older
// versions that do not record the object (it was in the root set then)
// first get a manifest-less entry for it, so that rolling back to one of
// them keeps the object instead of collecting it. It runs in garbage
// collection, after the current version is recorded and dispatched, so
// the object is recorded by some tracker at every moment.
func (r *ApplicationReconciler) pruneMovedRoot(ctx context.Context, s *scope) error {
	if s.root == nil {
		return nil
	}
	rootEntries, err := tracker.Entries(s.root)
	if err != nil {
		return err
	}
	var current tracker.Index
	var moved []v1beta1.ManagedResource
	kept := make([]v1beta1.ManagedResource, 0, len(rootEntries))
	for _, e := range rootEntries {
		if e.Data == nil && !e.Deleted {
			if current == nil {
				entries, err := tracker.Entries(s.current)
				if err != nil {
					return err
				}
				current = tracker.IndexOf(entries)
			}
			if v, ok := current[tracker.KeyOf(e)]; ok && v.Data != nil && !v.Deleted {
				e.SkipGC = v.SkipGC // the rule that set it is gone
				moved = append(moved, e)
				continue
			}
		}
		kept = append(kept, e)
	}
	if len(moved) == 0 {
		return nil
	}
	for i := range s.older {
		o := &s.older[i]
		entries, err := tracker.Entries(o)
		if err != nil {
			return err
		}
		idx := tracker.IndexOf(entries)
		n := len(entries)
		for _, m := range moved {
			if _, ok := idx[tracker.KeyOf(m)]; !ok {
				entries = append(entries, m)
			}
		}
		if len(entries) > n {
			if err := r.Trackers.Save(ctx, o, entries, 0); err != nil {
				return err
			}
		}
	}
	for _, m := range moved {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Dropped a root tracker entry: the current version records the object",
			"object", tracker.KeyOf(m).String(), "resourceTracker", s.root.Name)
	}
	return r.Trackers.Save(ctx, s.root, kept, 0)
}

// keptOnUpdate reports whether the resource policies keep r when a new
// version drops it: a garbage-collect rule with strategy never or
// onAppDelete, or a read-only rule.
func keptOnUpdate(rules *policy.Rules, r policy.Resource) bool {
	return keptByPolicy(rules, r) || rules.GCStrategy(r) == policy.OnAppDelete
}

// annotationCollectedAgainst stamps an older tracker with the live version
// ("<tracker>@<generation>") its garbage was last collected against.
const annotationCollectedAgainst = "app.oam.dev/collected-against"
