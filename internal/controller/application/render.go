package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/definition"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/helm/release"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// renderAndRecord renders the version the Application asks for when its
// tracker does not exist yet, and records every object before anything is
// applied. When the tracker exists (the same generation, or a
// publishVersion seen before: a rollback) its recorded manifests are kept
// as they are, without rendering the current spec. A render failure leaves
// the earlier version in place and kept.
func (r *Reconciler) renderAndRecord(ctx context.Context, s *facts.Pass) error {
	gen := s.App.Generation
	kind := tracker.VersionOf(s.App)
	if err := nameError(s.App); err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Refused Application", "reason", v1beta1.ReasonInvalidName, "nameLength", len(s.App.Name))
		s.RenderErr = &facts.ReasonError{Reason: v1beta1.ReasonInvalidName, Err: err}
		return nil
	}
	if s.IdentityErr != nil {
		s.RenderErr = s.IdentityErr
		return nil
	}
	if s.RulesErr != nil {
		s.RenderErr = &facts.ReasonError{Reason: v1beta1.ReasonInvalidPolicy, Err: s.RulesErr}
		return nil
	}
	if missing := r.missingStepDefinitions(ctx, s.App); missing != nil {
		// A workflow step Steward cannot run refuses the version before
		// anything of it is rendered.
		s.RenderErr = missing
		return nil
	}
	if len(s.App.Spec.Policies) > 0 {
		// A policy Steward does not carry out refuses the version, never
		// is skipped.
		defs, err := r.resolveDefinitions(ctx, s.App)
		if err != nil {
			s.SetRetry(err)
			return err
		}
		if err := policy.Unsupported(s.App, defs.Policies); err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Refused Application", "reason", v1beta1.ReasonUnsupportedPolicy, "error", err.Error())
			s.RenderErr = &facts.ReasonError{Reason: v1beta1.ReasonUnsupportedPolicy, Err: err}
			return nil
		}
	}
	if err := r.confirmPresent(ctx, s); err != nil {
		return err
	}
	// refill: the version kept is rendered again only because values a
	// step takes arrived. Only that step's objects are new: they are
	// applied when the step runs, and the version is not dispatched
	// again as a whole.
	refill := false
	if s.Current != nil && s.Current.Name == tracker.Name(s.App.Name, s.App.Namespace, kind) &&
		(kind.PublishVersion != "" || (!r.placementsMoved(ctx, s) && !r.chartInputsMoved(ctx, s) && !r.definitionsMoved(ctx, s))) {
		if !record.InputsMoved(s) {
			return r.reuseVersion(ctx, s)
		}
		refill = true
	}
	versioned, root, placed, err := r.renderPlacements(ctx, s, gen, kind)
	if err != nil {
		if s.RenderErr == nil {
			s.SetRetry(err)
			return err
		}
		return nil
	}
	if refill {
		// Only the objects of the steps whose values arrived are taken
		// from the render; every other step keeps what the version
		// recorded (today's definitions or clusters change nothing of it).
		if versioned, root, err = record.Refilled(s, versioned, root); err != nil {
			s.RecordErr = err
			return nil
		}
	}
	if !refill && s.Current != nil && s.Current.Name == tracker.Name(s.App.Name, s.App.Namespace, kind) {
		// The version kept is rendered again (its clusters moved): what
		// its custom steps recorded is no render's, and stays recorded.
		if versioned, err = record.CarryStepEntries(s.Current, versioned); err != nil {
			s.RecordErr = err
			return nil
		}
	}
	marks := map[string]string{tracker.AnnotationDispatchPending: pendingNew, tracker.AnnotationWorkflowSteps: "", tracker.AnnotationWorkflowInputs: record.RenderedMark(s), tracker.AnnotationParallelism: "",
		tracker.AnnotationHelmReleases: r.recordReleases(ctx, s), tracker.AnnotationDefinitions: r.definitionsFingerprint(ctx, s),
		tracker.AnnotationRootObjects: tracker.RootObjectsRecorded, tracker.AnnotationSpecDigest: workflow.SpecDigest(s.App)}
	if s.Parallelism > 0 {
		marks[tracker.AnnotationParallelism] = strconv.Itoa(s.Parallelism)
	}
	fresh := true
	if refill {
		pending := tracker.Mark(s.Current, tracker.AnnotationDispatchPending)
		delete(marks, tracker.AnnotationDispatchPending)
		fresh = pending != ""
		s.RolledBack = pending == pendingRollback
	}
	if wf := workflow.Of(s.App); workflow.Gated(wf) {
		// The run follows the steps the version was rendered with. A
		// workflow it cannot run records nothing, root entries included.
		steps, err := workflow.Steps(wf)
		if err == nil {
			steps.Use(r.Renderer.Evaluator())
			err = steps.CheckConditions()
		}
		if errors.Is(err, cueeval.ErrUnavailable) {
			s.SetRetry(err)
			return err
		}
		if err != nil {
			reason := v1beta1.ReasonUnsupportedWorkflow
			if errors.As(err, new(*cueeval.BudgetError)) {
				reason = v1beta1.ReasonEvaluationBudgetExceeded
				s.SetRetry(err)
			}
			s.RenderErr = &facts.ReasonError{Reason: reason, Err: err}
			return nil
		}
		marks[tracker.AnnotationWorkflowSteps] = workflow.Encode(steps)
	}
	if defs, err := r.resolveDefinitions(ctx, s.App); err == nil {
		// PostDispatch traits render once the workload is healthy: until
		// then the objects the kept version's rendered stay recorded.
		versioned, root = record.CarryPostTraits(s, defs, versioned, root)
	} else {
		s.SetRetry(err)
		return err
	}
	s.NewKeys = inventory.Unseen(append(append([]v1beta1.ManagedResource(nil), versioned...), root...),
		append([]*v1beta1.ResourceTracker{s.Current, s.Root}, pointers(s.Older)...)...)
	ref := tracker.RefOf(s.App)
	if len(root) > 0 || s.Root != nil {
		if s.Root, err = r.Trackers.Record(ctx, ref, tracker.Root(), gen, root, tracker.KeepMissing, nil); err != nil {
			s.RecordErr = err
			s.SetRetry(err)
			return nil
		}
	}
	// The version is marked pending until keepState has dispatched it: a
	// pass that stops in between (crash, abort) leaves the mark, and the
	// next pass dispatches it as new. It records the objects root keeps
	// too, with their manifests: a rollback to it applies what it
	// rendered of them, and an object it does not list is one it does not
	// render (inventory.Garbage).
	kind.Revision = r.Revisions.NameFor(ctx, s, kind) // a new tracker is created labelled with it
	order, hashes := record.ComponentHashes(versioned)
	first := record.FirstComponentRevisions(s, tracker.Name(s.App.Name, s.App.Namespace, kind))
	marks[tracker.AnnotationComponentRevisions] = ""
	if first {
		// A first version recorded again (its clusters, definitions or
		// step values moved) adds to what it marked.
		revs, _ := record.NextComponentRevisions(record.MarkedComponentRevisions(record.MarkedVersion(s)), order, hashes, gen, r.revisionLimit())
		var mark string
		if mark, first = record.ComponentRevisionsMark(revs); first {
			marks[tracker.AnnotationComponentRevisions] = mark
		}
	}
	rt, err := r.Trackers.Record(ctx, ref, kind, gen, inventory.WithRoot(versioned, root), tracker.DeleteMissing, marks)
	if err != nil {
		s.RecordErr = err
		s.SetRetry(err)
		return nil
	}
	if s.Current != nil && s.Current.Name != rt.Name {
		s.Older = append(s.Older, *s.Current)
	}
	// A tracker of the same name left by an earlier Application was just
	// taken over: it is current now, not an older one.
	s.Older = slices.DeleteFunc(s.Older, func(o v1beta1.ResourceTracker) bool { return o.Name == rt.Name })
	s.Current = rt
	s.Fresh = fresh
	if refill {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Recorded the version again with the values its workflow steps take", "resourceTracker", rt.Name, "generation", gen, "objects", len(versioned))
	} else {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Recorded a new version", "resourceTracker", rt.Name, "generation", gen, "objects", len(versioned), "rootObjects", len(root))
	}
	if delivery.UsesTopology(s.App) && !refill {
		if err := r.Trackers.Annotate(ctx, rt, tracker.AnnotationPlacements, placed); err != nil {
			s.SetRetry(err)
		}
	}
	if err := r.recordComponentRevisions(ctx, s, order, hashes, first); err != nil {
		s.SetRetry(err)
	}
	return r.hooks.call(hookAfterRecord)
}

// reuseVersion keeps the recorded version the Application asks for. A
// publishVersion whose tracker is older than the newest applied version is
// a rollback: its manifests are applied again as a dispatch, and what only
// newer versions created is garbage-collected. A version recorded (or
// rolled back to) whose dispatch never finished, because the pass that
// recorded it stopped, is dispatched now; the tracker's pending mark, not
// the status (which an aborted pass does not write), says so.
func (r *Reconciler) reuseVersion(ctx context.Context, s *facts.Pass) error {
	gen := s.App.Generation
	pending := tracker.Mark(s.Current, tracker.AnnotationDispatchPending)
	if s.Current.Spec.ApplicationGeneration < s.NewestGeneration {
		// Switching back to a version recorded earlier is a rollback: its
		// manifests are dispatched again.
		return r.rollBack(ctx, s)
	}
	if pending != "" {
		s.Fresh = true
		s.RolledBack = pending == pendingRollback
		ctrl.LoggerFrom(ctx).V(1).Info("Dispatching a version whose dispatch never finished", "resourceTracker", s.Current.Name, "pending", pending)
	}
	if s.Current.Spec.ApplicationGeneration == gen {
		return nil
	}
	// A spec change that publishes nothing (same publishVersion): the
	// version stays as recorded, only the generation it is kept at moves.
	entries, err := tracker.Entries(s.Current)
	if err != nil {
		s.RecordErr = err
		return nil
	}
	if err := r.Trackers.Save(ctx, s.Current, entries, gen); err != nil {
		s.RecordErr = err
		s.SetRetry(err)
	}
	return nil
}

// rollBack makes the current tracker, an earlier version, the live one
// again: entries garbage collection marked while it was older are wanted
// again, and the tracker is marked pending until dispatched.
func (r *Reconciler) rollBack(ctx context.Context, s *facts.Pass) error {
	s.RolledBack, s.Fresh = true, true
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Rolling back to an earlier version", "resourceTracker", s.Current.Name, "newestGeneration", s.NewestGeneration)
	entries, err := tracker.Entries(s.Current)
	if err != nil {
		s.RecordErr = err
		return nil
	}
	for i := range entries {
		entries[i].Deleted = false
	}
	marks := map[string]string{tracker.AnnotationDispatchPending: pendingRollback}
	if err := r.Trackers.SaveMarked(ctx, s.Current, entries, s.App.Generation, marks); err != nil {
		s.RecordErr = err
		s.SetRetry(err)
	}
	return nil
}

const (
	pendingNew      = "new"
	pendingRollback = "rollback"
	// pendingRetry: a dispatch was tried and did not apply everything; it
	// is tried again as a dispatch, without reporting the rollback again.
	pendingRetry = "retry"
)

// resolveDefinitions finds the definition of every type the Application
// uses: in its namespace first, then the system namespace (from the cache).
func (r *Reconciler) resolveDefinitions(ctx context.Context, app *v1beta1.Application) (render.Definitions, error) {
	return r.resolver().Resolve(ctx, app)
}

// resolver finds definitions in the cache: the Application's namespace,
// then the system namespace; pinned types in DefinitionRevisions.
func (r *Reconciler) resolver() definition.Resolver {
	return definition.Resolver{Reader: r.Client, SystemNamespace: r.Options.SystemDefinitionNS, NoRevisions: !r.Options.DefinitionRevisions}
}

// renderPlacements renders the Application once per placement of its
// deploy steps (the hub alone without topology policies), each with the
// step's overrides and the placement's namespace, and returns the entries
// for the versioned and root trackers, each naming its cluster. User
// errors go to s.RenderErr; the returned error is then non-nil too.
func (r *Reconciler) renderPlacements(ctx context.Context, s *facts.Pass, gen int64, kind tracker.Kind) (versioned, root []v1beta1.ManagedResource, placed string, err error) {
	steps, err := r.placements(ctx, s.App, true)
	if err != nil {
		if errors.Is(err, errClusterList) {
			return nil, nil, "", err
		}
		reason := v1beta1.ReasonInvalidPolicy
		if errors.As(err, new(*workflow.UnsupportedError)) || errors.As(err, new(*workflow.InvalidWorkflowError)) {
			reason = v1beta1.ReasonUnsupportedWorkflow
		}
		s.RenderErr = &facts.ReasonError{Reason: reason, Err: err}
		return nil, nil, "", err
	}
	// Steps taking values other steps export are rendered once the
	// values are there.
	deliver, err := record.WithInputs(s, steps, kind)
	if err != nil {
		s.RenderErr = &facts.ReasonError{Reason: v1beta1.ReasonUnsupportedWorkflow, Err: err}
		return nil, nil, "", err
	}
	objs, err := delivery.Objects(s.App, deliver, delivery.Input{
		Renderer:    r.Renderer,
		Definitions: func(app *v1beta1.Application) (render.Definitions, error) { return r.resolveDefinitions(ctx, app) },
		Context: render.AppContext{
			AppRevision:       delivery.RevisionName(s.App, gen),
			AppRevisionNum:    gen,
			PublishVersion:    kind.PublishVersion,
			ClusterVersion:    r.ClusterVersion,
			DeferPostDispatch: true,
		},
		Namespaced: r.namespacedIn(ctx),
		Actions:    r.chartActions(ctx, s),
		Charts:     r.chartRendered(ctx, s),
	})
	if rf := release.RenderFailure(err); rf != nil || err == nil && len(s.Releases) > 0 {
		err = r.endsWorkflow(s, rf) // a chart's render failure counts; a success starts again
	}
	var policyErr *delivery.PolicyError
	switch {
	case errors.As(err, new(*delivery.DefinitionsError)), errors.Is(err, cueeval.ErrUnavailable):
		// Nothing is known of the version: the pass stops and is retried.
		return nil, nil, "", err
	case errors.As(err, &policyErr):
		s.RenderErr = &facts.ReasonError{Reason: v1beta1.ReasonInvalidPolicy, Err: policyErr.Err}
		return nil, nil, "", err
	case err != nil:
		s.RenderErr = err
		if errors.As(err, new(*delivery.ScopeError)) || errors.As(err, new(*release.Error)) {
			// A kind not served yet, a chart being fetched or a repository
			// out of reach may pass by itself.
			s.SetRetry(err)
		}
		if facts.ReasonOf(err, "") == v1beta1.ReasonEvaluationBudgetExceeded {
			// Tried again with back-off: a time limit may have been hit on
			// a busy machine. The evaluators remember the failure, so a
			// retry costs nothing until its own back-off ends.
			r.Metrics.BudgetExceeded(facts.BudgetLimit(err))
			s.SetRetry(err)
		}
		return nil, nil, "", err
	}
	versioned, root, err = record.Entries(s.App, objs, s.Rules)
	if err == nil && r.Options.NoCrossNamespaceObjects {
		err = facts.CheckBoundary(s.App, s.Identity, append(append([]v1beta1.ManagedResource(nil), versioned...), root...))
	}
	if err != nil {
		s.RenderErr = err
	}
	s.Parallelism = delivery.ParallelismOf(steps)
	return versioned, root, delivery.PlacementsOf(steps), err
}

// errClusterList marks a failure to read the cluster registry, which is
// transient, unlike a placement the user got wrong.
var errClusterList = errors.New("listing clusters")

// placements resolves the deploy steps of app. Clusters are listed only
// when a topology policy needs them.
func (r *Reconciler) placements(ctx context.Context, app *v1beta1.Application, fresh bool) ([]placement.Step, error) {
	var clusters []cluster.Cluster
	if r.Registry != nil && delivery.UsesTopology(app) {
		list, err := r.clusterList.Get(ctx, r.Registry, fresh, r.Options.clusterListTTL)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errClusterList, err)
		}
		clusters = list
	}
	return placement.Resolve(app, delivery.Placeable(clusters))
}

// placementsMoved reports whether the clusters a topology policy selects
// today differ from those the current version was rendered for, as when a
// cluster was labelled, joined or detached since. The version is then
// rendered again into its own tracker: new clusters get the objects, and
// those of clusters no longer selected are deleted. The registry is read
// through a short-lived cache shared by all Applications.
func (r *Reconciler) placementsMoved(ctx context.Context, s *facts.Pass) bool {
	if !delivery.UsesTopology(s.App) || s.RulesErr != nil {
		return false
	}
	steps, err := r.placements(ctx, s.App, false)
	if err != nil {
		return false
	}
	return delivery.PlacementsOf(steps) != tracker.Mark(s.Current, tracker.AnnotationPlacements)
}

func pointers(rts []v1beta1.ResourceTracker) []*v1beta1.ResourceTracker {
	out := make([]*v1beta1.ResourceTracker, len(rts))
	for i := range rts {
		out[i] = &rts[i]
	}
	return out
}
