package application

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
)

// keepState applies every recorded object of the current and root
// trackers: this is both the dispatch of a freshly recorded version and
// StateKeep, which repairs drift on every pass: in watch mode (the
// default) it skips the objects the metadata-only watch shows unchanged
// since Steward last wrote or read them, and a watch event of someone
// else's change starts a pass at once; in timer mode it reads every
// object, once per pass. The entries of both trackers are applied together, per cluster
// and in dependency order, so that a component kept in root (a Namespace
// under garbage-collect never) is applied before the components that
// depend on it. An object both record (a version records the objects
// root keeps for it too) is applied from the current version's manifest:
// after a rollback, the earlier content (inventory.Kept). Entries marked
// deleted are deleted and dropped from the tracker they came from once the
// deletion is confirmed, unless inventory.Marks says another entry or a
// rule keeps the object (settleMarks). Metadata-only entries are skipped.
func (r *Reconciler) keepState(ctx context.Context, s *scope) (err error) {
	if s.rulesErr != nil || s.identityErr != nil {
		// Without valid policies Steward cannot tell what it may write or
		// revert, and without a valid identity as whom: nothing is touched
		// until they are fixed.
		return nil
	}
	if !s.fresh {
		defer func(start time.Time) { r.Metrics.ObserveStateKeepPass(time.Since(start)) }(time.Now())
	}
	applier := r.applierFor(s.app)
	var kept []*v1beta1.ResourceTracker
	var lists [][]v1beta1.ManagedResource
	for _, rt := range []*v1beta1.ResourceTracker{s.current, s.root} {
		if rt == nil {
			continue
		}
		s.keep.ran = true
		entries, err := tracker.Entries(rt)
		if err != nil {
			s.keep.failures = append(s.keep.failures, objectFailure{Reason: v1beta1.ReasonStateKeepFailed, Err: err})
			continue
		}
		kept, lists = append(kept, rt), append(lists, entries)
	}
	if err := r.settleMarks(ctx, s, kept, lists); err != nil {
		return err
	}
	var current, root []v1beta1.ManagedResource
	for i, rt := range kept {
		if rt == s.current {
			current = lists[i]
		} else {
			root = lists[i]
		}
	}
	all := inventory.Kept(current, root)
	wanted := inventory.Wanted(all)
	appKey := client.ObjectKeyFromObject(s.app)
	r.Watch.Use(appKey, slices.Collect(maps.Keys(wanted)))
	s.fullRead = r.Watch.FullReadDue(appKey)
	if len(all) == 0 {
		return r.dispatched(ctx, s)
	}
	defer func() {
		if err == nil {
			err = r.hooks.call(hookAfterKeep)
		}
	}()
	// Objects of workflow steps not reached yet are left as they are, and
	// their clusters are not even reached for them: also when the new
	// render's root entries were recorded and its version was not (no run
	// yet, recordErr).
	applicable := all
	var standing []v1beta1.ManagedResource
	// Objects of steps not reached are restored while a run has not
	// succeeded (it waits, or was terminated, or failed); after a
	// success, those of skipped steps are left as they are.
	restoring := s.flow != nil && !s.flow.Succeeded()
	if s.flow != nil || s.flowErr != nil || s.recordErr != nil {
		applicable = slices.DeleteFunc(slices.Clone(all), func(e v1beta1.ManagedResource) bool {
			if s.gatedEntry(e) {
				s.keep.gated++
				decisionLog(ctx, tracker.KeyOf(e), decisionLevel).Info("Skipped: its workflow step has not been reached", "component", e.Component, "step", e.Step)
				if restoring && !e.Deleted && e.Data != nil {
					standing = append(standing, e)
				}
				return true
			}
			return false
		})
		// An object another entry applies in this pass is kept by it.
		standing = slices.DeleteFunc(standing, appliedIn(applicable))
	}
	// A deploy step's parallelism bounds how many clusters are worked on
	// at once.
	limit := tracker.Parallelism(s.current)
	passes := r.eachClusterAtMost(limit, byCluster(inDependencyOrder(applicable, dependencies(s.app))), func(g clusterGroup, p *clusterShare) {
		r.keepCluster(ctx, s, applier, g, p)
	})
	// What an earlier run applied for the steps not reached (production
	// runs the earlier version until its step is reached again) is kept
	// as it was applied: drift is repaired, nothing new is applied.
	var last map[tracker.Key]*unstructured.Unstructured
	if len(standing) > 0 && applier.Method != apply.ClientSide {
		last = r.earlierManifests(ctx, s, standing)
	}
	passes = append(passes, r.eachClusterAtMost(limit, byCluster(standing), func(g clusterGroup, p *clusterShare) {
		r.restoreCluster(ctx, s, applier, g, p, last)
	})...)
	drop := map[tracker.Key]bool{}
	for _, p := range passes {
		s.merge(p)
		for k := range p.drop {
			drop[k] = true
		}
	}
	for i, rt := range kept {
		if len(drop) == 0 {
			break
		}
		if err := r.Trackers.Save(ctx, rt, inventory.WithoutMarked(lists[i], drop), 0); err != nil {
			s.setRetry(err)
			return err
		}
	}
	return r.dispatched(ctx, s)
}

// settleMarks carries out inventory.Marks for the marks of the current and
// root trackers (kept, with their entries in lists) that need no delete:
// an entry marked deleted whose object another entry applies or keeps is
// dropped, one whose object a rule keeps stays, un-marked and without its
// manifest. The trackers are written before anything is applied; lists
// are updated in place. The marks left are deleted by keepCluster.
func (r *Reconciler) settleMarks(ctx context.Context, s *scope, kept []*v1beta1.ResourceTracker, lists [][]v1beta1.ManagedResource) error {
	if !slices.ContainsFunc(lists, func(l []v1beta1.ManagedResource) bool {
		return slices.ContainsFunc(l, func(e v1beta1.ManagedResource) bool { return e.Deleted })
	}) {
		return nil
	}
	marks, err := inventory.Marks(inventory.Trackers{Current: s.current, Root: s.root}, inventory.KeeperOf(s.app, s.rules))
	if err != nil {
		s.keep.failures = append(s.keep.failures, objectFailure{Reason: v1beta1.ReasonStateKeepFailed, Err: err})
		return nil
	}
	for key, m := range marks {
		switch m.Mark {
		case inventory.DropMarked:
			decisionLog(ctx, key, decisionLevel).Info("Kept: still wanted by another tracker", "reason", string(m.Why))
		case inventory.KeepMarked:
			decisionLog(ctx, key, decisionLevel).Info("Left in place: its deletion mark is dropped", "reason", string(m.Why))
		}
	}
	for i, rt := range kept {
		// Nothing is written when nothing changed.
		settled := inventory.SettleMarks(lists[i], marks)
		if err := r.Trackers.Save(ctx, rt, settled, 0); err != nil {
			s.setRetry(err)
			return err
		}
		lists[i] = settled
	}
	return nil
}

// dispatched removes the pending mark of a version keepState has just
// applied in full. A dispatch that did not apply everything (a failure, a
// component waiting on a dependency, a cluster out of reach) keeps the
// version pending, marked as a retry, so that the next pass dispatches it
// again: as StateKeep it would neither create what report-only drift mode
// leaves missing nor change what apply-once keeps.
func (r *Reconciler) dispatched(ctx context.Context, s *scope) error {
	if s.current == nil || tracker.Mark(s.current, tracker.AnnotationDispatchPending) == "" {
		return nil
	}
	mark := ""
	if len(s.keep.failures) > 0 || len(s.keep.waiting) > 0 {
		mark = pendingRetry
	}
	if mark == "" {
		r.releasesDeployed(ctx, s)
	}
	if err := r.Trackers.Annotate(ctx, s.current, tracker.AnnotationDispatchPending, mark); err != nil {
		s.setRetry(err)
		return err
	}
	return nil
}

// keepCluster applies one cluster's entries in recorded (dependency)
// order. A cluster that cannot be reached is reported once and the rest
// of its entries wait for the next pass.
func (r *Reconciler) keepCluster(ctx context.Context, s *scope, applier apply.Applier, g clusterGroup, p *clusterShare) {
	c, err := r.getClient(ctx, s, g)
	if err != nil {
		// Entries already marked for deletion in a detached cluster are
		// left behind; the others wait for the cluster to come back.
		var marked []v1beta1.ManagedResource
		for _, e := range g.entries {
			if e.Deleted {
				marked = append(marked, e)
			}
		}
		if detached(err) {
			for _, e := range marked {
				decisionLog(ctx, tracker.KeyOf(e), decisionLevel).Info("Left behind: the cluster was detached", "component", e.Component)
				p.drop[tracker.KeyOf(e)] = true
				p.gc.leftBehind = append(p.gc.leftBehind, tracker.KeyOf(e))
			}
			if len(marked) == len(g.entries) {
				return
			}
		}
		f := clusterFailure(g.cluster, err)
		logFailed(ctx, f)
		p.keep.failures = append(p.keep.failures, f)
		p.setRetry(err)
		return
	}
	deps := dependencies(s.app)
	types := componentTypes(s.app)
	failed := map[string]bool{}
	depHealth := map[string]*componentHealth{}
	for _, e := range g.entries {
		if e.Deleted {
			// settleMarks left only the marks whose objects go.
			drop, err := r.deleteEntry(ctx, s, p, c, applier, e, string(inventory.WhyMarked))
			if drop {
				p.drop[tracker.KeyOf(e)] = true
			} else if err != nil && isUnreachable(err) {
				return // recorded as the cluster's failure; the rest waits
			}
			continue
		}
		if e.Data == nil {
			continue
		}
		if blocked := failedDependency(deps[e.Component], failed); blocked != "" {
			// Whatever depends on a waiting component waits too.
			failed[e.Component] = true
			p.keep.waiting = appendOnce(p.keep.waiting, e.Component)
			continue
		}
		if s.dispatching(e) {
			// Dispatched, a component waits for the components it
			// depends on to be healthy, not only applied, as in
			// KubeVela; StateKeep re-applies it whatever their health.
			if dep, why := r.unhealthyDependency(ctx, s, p, c, g.entries, e, deps[e.Component], depHealth); dep != "" {
				failed[e.Component] = true
				p.keep.waiting = appendOnce(p.keep.waiting, e.Component)
				p.keep.unhealthyDeps = appendOnce(p.keep.unhealthyDeps, fmt.Sprintf("%q waits for %q to become healthy%s", e.Component, dep, why))
				decisionLog(ctx, tracker.KeyOf(e), decisionLevel).Info("Skipped: a component it depends on is not healthy yet", "component", e.Component, "dependency", dep)
				continue
			}
		}
		if r.Options.NoCrossNamespaceObjects {
			// A version recorded before the flag was set is held to it too.
			if err := outsideBoundary(s.app, s.identity, e); err != nil {
				f := objectFailure{Key: tracker.KeyOf(e), Component: e.Component, Reason: reasonOf(err, ""), Err: err}
				logFailed(ctx, f)
				p.keep.failures = append(p.keep.failures, f)
				failed[e.Component] = true
				continue
			}
		}
		err := r.applyEntry(ctx, s, p, c, applier, e, resourceOf(e, types))
		if err != nil && isUnreachable(err) {
			return // recorded as the cluster's failure; the rest waits
		}
		if err != nil {
			failed[e.Component] = true
		}
	}
}

// appliedIn returns whether an entry's object is applied by one of
// entries (recorded with a manifest and not marked deleted).
func appliedIn(entries []v1beta1.ManagedResource) func(v1beta1.ManagedResource) bool {
	keys := inventory.Wanted(entries)
	return func(e v1beta1.ManagedResource) bool { return keys.Has(tracker.KeyOf(e)) }
}

// restoreCluster repairs, in one cluster, the drift of the objects of
// workflow steps the run has not reached: each live object is brought
// back to what Steward last applied to it (apply.Restore: its
// last-applied annotation, or by server-side apply the manifest last
// names, from the earlier version), whichever version that was; a
// missing one is not created (its step creates it when reached). These objects belong to no running step: a failure, or
// a cluster out of reach, is logged and does not hold the run.
func (r *Reconciler) restoreCluster(ctx context.Context, s *scope, applier apply.Applier, g clusterGroup, p *clusterShare, last map[tracker.Key]*unstructured.Unstructured) {
	c, err := r.getClient(ctx, s, g)
	if err != nil {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Not repaired: the cluster of steps not reached cannot be used", "cluster", g.cluster, "error", err.Error())
		return
	}
	types := componentTypes(s.app)
	for _, e := range g.entries {
		key := tracker.KeyOf(e)
		res := resourceOf(e, types)
		if s.rules.ReadOnly(res) {
			continue
		}
		opts := apply.Options{KeepLiveFields: s.rules.ApplyOncePaths(res, false), ReportOnly: reportOnly(s.app)}
		result, err := applier.Restore(ctx, c, tracker.Ref(e), last[key], opts)
		if err != nil {
			decisionLog(ctx, key, decisionLevel).Info("Not repaired (its step has not been reached)", "component", e.Component, "step", e.Step, "error", err.Error())
			continue
		}
		change := objectChange{Key: key, Action: result.Action, Fields: result.Fields}
		r.noteConflicts(ctx, p, key, result)
		switch result.Action {
		case apply.Missing:
			decisionLog(ctx, key, decisionLevel).Info("Skipped: missing, and its workflow step has not been reached", "component", e.Component, "step", e.Step)
		case apply.Unchanged:
			decisionLog(ctx, key, unchangedLevel).Info("Unchanged (its step has not been reached)", "component", e.Component)
		case apply.Drifted:
			logApplied(ctx, key, e.Component, result, change.Fields)
			p.keep.drifted = append(p.keep.drifted, change)
		default:
			logApplied(ctx, key, e.Component, result, change.Fields)
			p.keep.changes = append(p.keep.changes, change)
		}
	}
}

// earlierManifests returns, for objects of workflow steps not reached,
// the manifest the newest earlier version recorded for each: what
// Steward last applied to them, for server-side apply to restore.
// Trackers come from the cache; an object no earlier version records is
// left out.
func (r *Reconciler) earlierManifests(ctx context.Context, s *scope, standing []v1beta1.ManagedResource) map[tracker.Key]*unstructured.Unstructured {
	if s.current == nil {
		return nil
	}
	want := map[tracker.Key]bool{}
	for _, e := range standing {
		want[tracker.KeyOf(e)] = true
	}
	trackers, err := r.Trackers.List(ctx, tracker.RefOf(s.app))
	if err != nil {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Not repaired: the earlier versions cannot be read", "error", err.Error())
		return nil
	}
	out := map[tracker.Key]*unstructured.Unstructured{}
	for i := len(trackers) - 1; i >= 0 && len(out) < len(want); i-- {
		rt := &trackers[i]
		if rt.Spec.Type != v1beta1.ResourceTrackerTypeVersioned || rt.Spec.ApplicationGeneration >= s.current.Spec.ApplicationGeneration {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			continue
		}
		for _, e := range entries {
			key := tracker.KeyOf(e)
			if !want[key] || out[key] != nil || e.Deleted || e.Data == nil {
				continue
			}
			if obj, err := tracker.Manifest(e); err == nil {
				out[key] = obj
			}
		}
	}
	return out
}

// applyEntry applies one recorded manifest, as the resource policies say,
// and records the outcome. A read-only object is only checked for
// existence.
func (r *Reconciler) applyEntry(ctx context.Context, s *scope, p *clusterShare, c client.Client, applier apply.Applier, e v1beta1.ManagedResource, res policy.Resource) error {
	key := tracker.KeyOf(e)
	fail := func(reason string, err error) error {
		f := entryFailure(e, reason, err)
		logFailed(ctx, f)
		p.keep.failures = append(p.keep.failures, f)
		return err
	}
	// The manifest is decoded only when it is used: a watch-mode re-sync
	// skips most objects on their digest alone.
	manifest := func() (*unstructured.Unstructured, error) {
		obj, err := tracker.Manifest(e)
		if err != nil {
			return nil, fail(v1beta1.ReasonStateKeepFailed, err)
		}
		return obj, nil
	}
	if s.rules.ReadOnly(res) {
		obj, err := manifest()
		if err != nil {
			return err
		}
		return r.checkReadOnly(ctx, p, c, e, obj)
	}
	// The objects of a workflow step reached in this pass are dispatched
	// as a new version is.
	fresh := s.dispatching(e)
	opts := apply.Options{
		TakeOver:       s.rules.TakeOver(res),
		Shared:         s.rules.Shared(res),
		KeepLiveFields: s.rules.ApplyOncePaths(res, fresh),
		ReportOnly:     !fresh && reportOnly(s.app),
		ExpectMissing:  s.newKeys[key] && !s.rules.TakeOver(res),
	}
	app := client.ObjectKeyFromObject(s.app)
	var digest uint64
	if r.Watch != nil {
		// Only watch mode records what it applied: timer mode spends
		// nothing on hashing manifests.
		digest = applyDigest(e, opts, s.identity)
	}
	if rv, ok := r.Watch.Unchanged(app, key, digest); ok && !fresh && !s.fullRead {
		// Watch mode: the object is as Steward last left it.
		p.keep.applied++
		p.keep.unread = append(p.keep.unread, unreadObject{key: key, resourceVersion: rv})
		r.Metrics.KeepSkipped()
		decisionLog(ctx, key, unchangedLevel).Info("Unchanged: the watch cache shows it as last applied", "component", e.Component)
		return nil
	}
	obj, err := manifest()
	if err != nil {
		return err
	}
	done := r.Watch.Begin(app, key)
	result, err := applier.Apply(ctx, c, obj, opts)
	switch {
	case err != nil, result.Live == nil, result.Action == apply.Drifted, result.Action == apply.Missing:
		done(nil, 0)
	default:
		done(result.Live, digest)
	}
	if err != nil {
		reason := classifyApplyError(err)
		if reason != v1beta1.ReasonOwnershipConflict {
			p.setRetry(err)
		}
		return fail(reason, err)
	}
	p.keep.applied++
	p.keep.remember(key, result.Live)
	change := objectChange{Key: key, Action: result.Action, Fields: result.Fields}
	r.noteConflicts(ctx, p, key, result)
	logApplied(ctx, key, e.Component, result, change.Fields)
	switch result.Action {
	case apply.Unchanged:
	case apply.Drifted, apply.Missing:
		p.keep.drifted = append(p.keep.drifted, change)
	default:
		p.keep.changes = append(p.keep.changes, change)
	}
	return nil
}

// checkReadOnly verifies that a read-only object exists; Steward never
// writes it.
func (r *Reconciler) checkReadOnly(ctx context.Context, p *clusterShare, c client.Client, e v1beta1.ManagedResource, obj *unstructured.Unstructured) error {
	key := tracker.KeyOf(e)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
	if err == nil {
		p.keep.applied++
		p.keep.remember(key, live)
		return nil
	}
	reason := v1beta1.ReasonApplyFailed
	if apierrors.IsNotFound(err) {
		reason = v1beta1.ReasonResourceMissing
		err = fmt.Errorf("read-only %s does not exist; create it, or remove it from the read-only policy", key)
	} else {
		p.setRetry(err)
	}
	f := entryFailure(e, reason, err)
	logFailed(ctx, f)
	p.keep.failures = append(p.keep.failures, f)
	return err
}

// classifyApplyError names the reason of a failed apply.
func classifyApplyError(err error) string {
	switch {
	case meta.IsNoMatchError(err):
		return v1beta1.ReasonKindNotFound
	case errors.Is(err, apply.ErrNotOwned):
		return v1beta1.ReasonOwnershipConflict
	case apierrors.IsForbidden(err):
		return v1beta1.ReasonForbidden
	default:
		return v1beta1.ReasonApplyFailed
	}
}

// remember keeps the live object of key for health evaluation.
func (k *keepReport) remember(key tracker.Key, live *unstructured.Unstructured) {
	if k.live == nil {
		k.live = map[tracker.Key]*unstructured.Unstructured{}
	}
	k.live[key] = live
}

// applyDigest identifies one apply of an entry: the recorded manifest,
// the options and the identity. A resourceVersion recorded after an apply
// is trusted only for the same digest.
func applyDigest(e v1beta1.ManagedResource, opts apply.Options, id cluster.Identity) uint64 {
	var raw []byte
	if e.Data != nil {
		raw = e.Data.Raw
	}
	// ExpectMissing only orders the requests (create before read); the
	// object it leaves is the same, so the dispatch's record holds for the
	// passes after it.
	opts.ExpectMissing = false
	return watch.Digest(raw, fmt.Appendf(nil, "%+v", opts), []byte(id.String()))
}

// reportOnly reports whether the Application asks StateKeep to report
// drift without repairing it (annotation app.oam.dev/drift-mode=report).
func reportOnly(app *v1beta1.Application) bool {
	return app.Annotations[v1beta1.AnnotationDriftMode] == v1beta1.DriftModeReport
}
