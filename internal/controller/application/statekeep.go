package application

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/order"
	"github.com/steward-oam/steward/internal/controller/application/record"
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
// else's change starts a pass at once; in timer mode it reads the
// metadata of every object, once per pass, and the whole object only when
// its resourceVersion moved. The entries of both trackers are applied together, per cluster
// and in dependency order, so that a component kept in root (a Namespace
// under garbage-collect never) is applied before the components that
// depend on it. An object both record (a version records the objects
// root keeps for it too) is applied from the current version's manifest:
// after a rollback, the earlier content (inventory.Kept). Entries marked
// deleted are deleted and dropped from the tracker they came from once the
// deletion is confirmed, unless inventory.Marks says another entry or a
// rule keeps the object (settleMarks). Metadata-only entries are skipped.
func (r *Reconciler) keepState(ctx context.Context, s *facts.Pass) (err error) {
	if s.RulesErr != nil || s.IdentityErr != nil {
		// Without valid policies Steward cannot tell what it may write or
		// revert, and without a valid identity as whom: nothing is touched
		// until they are fixed.
		return nil
	}
	if !s.Fresh {
		defer func(start time.Time) { r.Metrics.ObserveStateKeepPass(time.Since(start)) }(time.Now())
	}
	applier := r.applierFor(s.App)
	var kept []*v1beta1.ResourceTracker
	var lists [][]v1beta1.ManagedResource
	for _, rt := range []*v1beta1.ResourceTracker{s.Current, s.Root} {
		if rt == nil {
			continue
		}
		s.Keep.Ran = true
		entries, err := tracker.Entries(rt)
		if err != nil {
			s.Keep.Failures = append(s.Keep.Failures, facts.Failure{Reason: v1beta1.ReasonStateKeepFailed, Err: err})
			continue
		}
		kept, lists = append(kept, rt), append(lists, entries)
	}
	if err := r.settleMarks(ctx, s, kept, lists); err != nil {
		return err
	}
	var current, root []v1beta1.ManagedResource
	for i, rt := range kept {
		if rt == s.Current {
			current = lists[i]
		} else {
			root = lists[i]
		}
	}
	all := inventory.Kept(current, root)
	wanted := inventory.Wanted(all)
	appKey := client.ObjectKeyFromObject(s.App)
	r.Watch.Use(appKey, slices.Collect(maps.Keys(wanted)))
	s.FullRead = r.Watch.FullReadDue(appKey)
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
	restoring := s.Flow != nil && !s.Flow.Succeeded()
	if s.Flow != nil || s.FlowErr != nil || s.RecordErr != nil {
		applicable = slices.DeleteFunc(slices.Clone(all), func(e v1beta1.ManagedResource) bool {
			if s.GatedEntry(e) {
				s.Keep.Gated++
				decisionlog.For(ctx, tracker.KeyOf(e), decisionlog.Decision).Info("Skipped: its workflow step has not been reached", "component", e.Component, "step", e.Step)
				if restoring && !e.Deleted && e.Data != nil {
					standing = append(standing, e)
				}
				return true
			}
			return false
		})
		// An object another entry applies in this pass is kept by it.
		standing = slices.DeleteFunc(standing, inventory.AppliedIn(applicable))
	}
	// A deploy step's parallelism bounds how many clusters are worked on
	// at once.
	limit := tracker.Parallelism(s.Current)
	passes := r.eachClusterAtMost(limit, facts.ByCluster(order.ByDependency(applicable, order.Dependencies(s.App))), func(g facts.ClusterGroup, p *facts.ClusterShare) {
		r.keepCluster(ctx, s, applier, g, p)
	})
	// What an earlier run applied for the steps not reached (production
	// runs the earlier version until its step is reached again) is kept
	// as it was applied: drift is repaired, nothing new is applied.
	var last map[tracker.Key]*unstructured.Unstructured
	if len(standing) > 0 && applier.Method != apply.ClientSide {
		last = r.earlierManifests(ctx, s, standing)
	}
	passes = append(passes, r.eachClusterAtMost(limit, facts.ByCluster(standing), func(g facts.ClusterGroup, p *facts.ClusterShare) {
		r.restoreCluster(ctx, s, applier, g, p, last)
	})...)
	drop := map[tracker.Key]bool{}
	for _, p := range passes {
		s.Merge(p)
		for k := range p.Drop {
			drop[k] = true
		}
	}
	for i, rt := range kept {
		if len(drop) == 0 {
			break
		}
		if err := r.Trackers.Save(ctx, rt, inventory.WithoutMarked(lists[i], drop), 0); err != nil {
			s.SetRetry(err)
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
func (r *Reconciler) settleMarks(ctx context.Context, s *facts.Pass, kept []*v1beta1.ResourceTracker, lists [][]v1beta1.ManagedResource) error {
	if !slices.ContainsFunc(lists, func(l []v1beta1.ManagedResource) bool {
		return slices.ContainsFunc(l, func(e v1beta1.ManagedResource) bool { return e.Deleted })
	}) {
		return nil
	}
	marks, err := inventory.Marks(inventory.Trackers{Current: s.Current, Root: s.Root}, inventory.KeeperOf(s.App, s.Rules))
	if err != nil {
		s.Keep.Failures = append(s.Keep.Failures, facts.Failure{Reason: v1beta1.ReasonStateKeepFailed, Err: err})
		return nil
	}
	for key, m := range marks {
		switch m.Mark {
		case inventory.DropMarked:
			decisionlog.For(ctx, key, decisionlog.Decision).Info("Kept: still wanted by another tracker", "reason", string(m.Why))
		case inventory.KeepMarked:
			decisionlog.For(ctx, key, decisionlog.Decision).Info("Left in place: its deletion mark is dropped", "reason", string(m.Why))
		}
	}
	for i, rt := range kept {
		// Nothing is written when nothing changed.
		settled := inventory.SettleMarks(lists[i], marks)
		if err := r.Trackers.Save(ctx, rt, settled, 0); err != nil {
			s.SetRetry(err)
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
func (r *Reconciler) dispatched(ctx context.Context, s *facts.Pass) error {
	if s.Current == nil || tracker.Mark(s.Current, tracker.AnnotationDispatchPending) == "" {
		return nil
	}
	mark := ""
	if len(s.Keep.Failures) > 0 || len(s.Keep.Waiting) > 0 {
		mark = pendingRetry
	}
	if mark == "" {
		r.releasesDeployed(ctx, s)
	}
	if err := r.Trackers.Annotate(ctx, s.Current, tracker.AnnotationDispatchPending, mark); err != nil {
		s.SetRetry(err)
		return err
	}
	return nil
}

// keepCluster applies one cluster's entries in recorded (dependency)
// order. A cluster that cannot be reached is reported once and the rest
// of its entries wait for the next pass.
func (r *Reconciler) keepCluster(ctx context.Context, s *facts.Pass, applier apply.Applier, g facts.ClusterGroup, p *facts.ClusterShare) {
	c, err := r.getClient(ctx, s, g)
	if err != nil {
		// Entries already marked for deletion in a detached cluster are
		// left behind; the others wait for the cluster to come back.
		var marked []v1beta1.ManagedResource
		for _, e := range g.Entries {
			if e.Deleted {
				marked = append(marked, e)
			}
		}
		if facts.Detached(err) {
			for _, e := range marked {
				decisionlog.For(ctx, tracker.KeyOf(e), decisionlog.Decision).Info("Left behind: the cluster was detached", "component", e.Component)
				p.Drop[tracker.KeyOf(e)] = true
				p.GC.LeftBehind = append(p.GC.LeftBehind, tracker.KeyOf(e))
			}
			if len(marked) == len(g.Entries) {
				return
			}
		}
		f := facts.ClusterFailure(g.Cluster, err)
		decisionlog.Failed(ctx, f)
		p.Keep.Failures = append(p.Keep.Failures, f)
		p.SetRetry(err)
		return
	}
	deps := order.Dependencies(s.App)
	types := policy.ComponentTypes(s.App)
	failed := map[string]bool{}
	depHealth := map[string]*facts.ComponentHealth{}
	for _, e := range g.Entries {
		if e.Deleted {
			// settleMarks left only the marks whose objects go.
			drop, err := r.deleteEntry(ctx, s, p, c, applier, e, string(inventory.WhyMarked))
			if drop {
				p.Drop[tracker.KeyOf(e)] = true
			} else if err != nil && facts.IsUnreachable(err) {
				return // recorded as the cluster's failure; the rest waits
			}
			continue
		}
		if e.Data == nil {
			continue
		}
		if blocked := order.FailedDependency(deps[e.Component], failed); blocked != "" {
			// Whatever depends on a waiting component waits too.
			failed[e.Component] = true
			p.Keep.Waiting = order.AppendOnce(p.Keep.Waiting, e.Component)
			continue
		}
		if s.Dispatching(e) {
			// Dispatched, a component waits for the components it
			// depends on to be healthy, not only applied, as in
			// KubeVela; StateKeep re-applies it whatever their health.
			if dep, why := r.unhealthyDependency(ctx, s, p, c, g.Entries, e, deps[e.Component], depHealth); dep != "" {
				failed[e.Component] = true
				p.Keep.Waiting = order.AppendOnce(p.Keep.Waiting, e.Component)
				p.Keep.UnhealthyDeps = order.AppendOnce(p.Keep.UnhealthyDeps, fmt.Sprintf("%q waits for %q to become healthy%s", e.Component, dep, why))
				decisionlog.For(ctx, tracker.KeyOf(e), decisionlog.Decision).Info("Skipped: a component it depends on is not healthy yet", "component", e.Component, "dependency", dep)
				continue
			}
		}
		if r.Options.NoCrossNamespaceObjects {
			// A version recorded before the flag was set is held to it too.
			if err := facts.OutsideBoundary(s.App, s.Identity, e); err != nil {
				f := facts.Failure{Key: tracker.KeyOf(e), Component: e.Component, Reason: facts.ReasonOf(err, ""), Err: err}
				decisionlog.Failed(ctx, f)
				p.Keep.Failures = append(p.Keep.Failures, f)
				failed[e.Component] = true
				continue
			}
		}
		err := r.applyEntry(ctx, s, p, c, applier, e, record.ResourceOf(e, types))
		if err != nil && facts.IsUnreachable(err) {
			return // recorded as the cluster's failure; the rest waits
		}
		if err != nil {
			failed[e.Component] = true
		}
	}
}

// restoreCluster repairs, in one cluster, the drift of the objects of
// workflow steps the run has not reached: each live object is brought
// back to what Steward last applied to it (apply.Restore: its
// last-applied annotation, or by server-side apply the manifest last
// names, from the earlier version), whichever version that was; a
// missing one is not created (its step creates it when reached). These objects belong to no running step: a failure, or
// a cluster out of reach, is logged and does not hold the run.
func (r *Reconciler) restoreCluster(ctx context.Context, s *facts.Pass, applier apply.Applier, g facts.ClusterGroup, p *facts.ClusterShare, last map[tracker.Key]*unstructured.Unstructured) {
	c, err := r.getClient(ctx, s, g)
	if err != nil {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Not repaired: the cluster of steps not reached cannot be used", "cluster", g.Cluster, "error", err.Error())
		return
	}
	types := policy.ComponentTypes(s.App)
	for _, e := range g.Entries {
		key := tracker.KeyOf(e)
		res := record.ResourceOf(e, types)
		if s.Rules.ReadOnly(res) {
			continue
		}
		opts := apply.Options{KeepLiveFields: s.Rules.ApplyOncePaths(res, false), ReportOnly: facts.ReportOnly(s.App)}
		result, err := applier.Restore(ctx, c, tracker.Ref(e), last[key], opts)
		if err != nil {
			decisionlog.For(ctx, key, decisionlog.Decision).Info("Not repaired (its step has not been reached)", "component", e.Component, "step", e.Step, "error", err.Error())
			continue
		}
		change := facts.Change{Key: key, Action: result.Action, Fields: result.Fields}
		r.noteConflicts(ctx, p, key, result)
		switch result.Action {
		case apply.Missing:
			decisionlog.For(ctx, key, decisionlog.Decision).Info("Skipped: missing, and its workflow step has not been reached", "component", e.Component, "step", e.Step)
		case apply.Unchanged:
			decisionlog.For(ctx, key, decisionlog.Unchanged).Info("Unchanged (its step has not been reached)", "component", e.Component)
		case apply.Drifted:
			decisionlog.Applied(ctx, key, e.Component, result, change.Fields)
			p.Keep.Drifted = append(p.Keep.Drifted, change)
		default:
			decisionlog.Applied(ctx, key, e.Component, result, change.Fields)
			p.Keep.Changes = append(p.Keep.Changes, change)
		}
	}
}

// earlierManifests returns, for objects of workflow steps not reached,
// the manifest the newest earlier version recorded for each: what
// Steward last applied to them, for server-side apply to restore.
// Trackers come from the cache; an object no earlier version records is
// left out.
func (r *Reconciler) earlierManifests(ctx context.Context, s *facts.Pass, standing []v1beta1.ManagedResource) map[tracker.Key]*unstructured.Unstructured {
	if s.Current == nil {
		return nil
	}
	want := map[tracker.Key]bool{}
	for _, e := range standing {
		want[tracker.KeyOf(e)] = true
	}
	trackers, err := r.Trackers.List(ctx, tracker.RefOf(s.App))
	if err != nil {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Not repaired: the earlier versions cannot be read", "error", err.Error())
		return nil
	}
	out := map[tracker.Key]*unstructured.Unstructured{}
	for i := len(trackers) - 1; i >= 0 && len(out) < len(want); i-- {
		rt := &trackers[i]
		if rt.Spec.Type != v1beta1.ResourceTrackerTypeVersioned || rt.Spec.ApplicationGeneration >= s.Current.Spec.ApplicationGeneration {
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
func (r *Reconciler) applyEntry(ctx context.Context, s *facts.Pass, p *facts.ClusterShare, c client.Client, applier apply.Applier, e v1beta1.ManagedResource, res policy.Resource) error {
	key := tracker.KeyOf(e)
	fail := func(reason string, err error) error {
		f := facts.EntryFailure(e, reason, err)
		decisionlog.Failed(ctx, f)
		p.Keep.Failures = append(p.Keep.Failures, f)
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
	if s.Rules.ReadOnly(res) {
		obj, err := manifest()
		if err != nil {
			return err
		}
		return r.checkReadOnly(ctx, p, c, e, obj)
	}
	// The objects of a workflow step reached in this pass are dispatched
	// as a new version is.
	fresh := s.Dispatching(e)
	opts := apply.Options{
		TakeOver:       s.Rules.TakeOver(res),
		Shared:         s.Rules.Shared(res),
		KeepLiveFields: s.Rules.ApplyOncePaths(res, fresh),
		ReportOnly:     !fresh && facts.ReportOnly(s.App),
		ExpectMissing:  s.NewKeys[key] && !s.Rules.TakeOver(res),
	}
	app := client.ObjectKeyFromObject(s.App)
	digest := applyDigest(e, opts, s.Identity)
	// Unchanged since Steward last left it (watch cache, or metadata read).
	if !fresh && !s.FullRead {
		if rv, ok := r.Watch.Unchanged(ctx, c, app, key, e.APIVersion, digest); ok {
			p.Keep.Applied++
			p.Keep.Unread = append(p.Keep.Unread, facts.Unread{Key: key, ResourceVersion: rv})
			r.Metrics.KeepSkipped()
			decisionlog.For(ctx, key, decisionlog.Unchanged).Info("Unchanged: at the resourceVersion last applied", "component", e.Component)
			return nil
		}
	}
	obj, err := manifest()
	if err != nil {
		return err
	}
	done := r.Watch.Begin(app, key)
	result, err := applier.Apply(ctx, c, obj, opts)
	switch {
	case err != nil, result.Live == nil, result.Action == apply.Drifted, result.Action == apply.Missing, !applier.Settled(result.Live):
		done(nil, 0)
	default:
		done(result.Live, digest)
	}
	if err != nil {
		reason := facts.ApplyReason(err)
		if reason != v1beta1.ReasonOwnershipConflict {
			p.SetRetry(err)
		}
		return fail(reason, err)
	}
	p.Keep.Applied++
	p.Keep.Remember(key, result.Live)
	change := facts.Change{Key: key, Action: result.Action, Fields: result.Fields}
	r.noteConflicts(ctx, p, key, result)
	decisionlog.Applied(ctx, key, e.Component, result, change.Fields)
	switch result.Action {
	case apply.Unchanged:
	case apply.Drifted, apply.Missing:
		p.Keep.Drifted = append(p.Keep.Drifted, change)
	default:
		p.Keep.Changes = append(p.Keep.Changes, change)
	}
	return nil
}

// checkReadOnly verifies that a read-only object exists; Steward never
// writes it.
func (r *Reconciler) checkReadOnly(ctx context.Context, p *facts.ClusterShare, c client.Client, e v1beta1.ManagedResource, obj *unstructured.Unstructured) error {
	key := tracker.KeyOf(e)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
	if err == nil {
		p.Keep.Applied++
		p.Keep.Remember(key, live)
		return nil
	}
	reason := v1beta1.ReasonApplyFailed
	if apierrors.IsNotFound(err) {
		reason = v1beta1.ReasonResourceMissing
		err = fmt.Errorf("read-only %s does not exist; create it, or remove it from the read-only policy", key)
	} else {
		p.SetRetry(err)
	}
	f := facts.EntryFailure(e, reason, err)
	decisionlog.Failed(ctx, f)
	p.Keep.Failures = append(p.Keep.Failures, f)
	return err
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
	var who []byte
	if !id.IsZero() {
		who = append(append(append([]byte(id.Namespace), '/'), id.Name...), '/')
	}
	return watch.Digest(raw, opts.AppendKey(nil), who)
}
