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
func (r *Reconciler) renderAndRecord(ctx context.Context, s *scope) error {
	gen := s.app.Generation
	kind := tracker.VersionOf(s.app)
	if err := nameError(s.app); err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Refused Application", "reason", v1beta1.ReasonInvalidName, "nameLength", len(s.app.Name))
		s.renderErr = &reasonError{reason: v1beta1.ReasonInvalidName, err: err}
		return nil
	}
	if s.identityErr != nil {
		s.renderErr = s.identityErr
		return nil
	}
	if s.rulesErr != nil {
		s.renderErr = &reasonError{reason: v1beta1.ReasonInvalidPolicy, err: s.rulesErr}
		return nil
	}
	if missing := r.missingStepDefinitions(ctx, s.app); missing != nil {
		// A workflow step Steward cannot run refuses the version before
		// anything of it is rendered.
		s.renderErr = missing
		return nil
	}
	if len(s.app.Spec.Policies) > 0 {
		// A policy Steward does not carry out refuses the version, never
		// is skipped.
		defs, err := r.resolveDefinitions(ctx, s.app)
		if err != nil {
			s.setRetry(err)
			return err
		}
		if err := policy.Unsupported(s.app, defs.Policies); err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Refused Application", "reason", v1beta1.ReasonUnsupportedPolicy, "error", err.Error())
			s.renderErr = &reasonError{reason: v1beta1.ReasonUnsupportedPolicy, err: err}
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
	if s.current != nil && s.current.Name == tracker.Name(s.app.Name, s.app.Namespace, kind) &&
		(kind.PublishVersion != "" || (!r.placementsMoved(ctx, s) && !r.chartInputsMoved(ctx, s) && !r.definitionsMoved(ctx, s))) {
		if !inputsMoved(s) {
			return r.reuseVersion(ctx, s)
		}
		refill = true
	}
	versioned, root, placed, err := r.renderPlacements(ctx, s, gen, kind)
	if err != nil {
		if s.renderErr == nil {
			s.setRetry(err)
			return err
		}
		return nil
	}
	if refill {
		// Only the objects of the steps whose values arrived are taken
		// from the render; every other step keeps what the version
		// recorded (today's definitions or clusters change nothing of it).
		if versioned, root, err = refilled(s, versioned, root); err != nil {
			s.recordErr = err
			return nil
		}
	}
	if !refill && s.current != nil && s.current.Name == tracker.Name(s.app.Name, s.app.Namespace, kind) {
		// The version kept is rendered again (its clusters moved): what
		// its custom steps recorded is no render's, and stays recorded.
		if versioned, err = carryStepEntries(s.current, versioned); err != nil {
			s.recordErr = err
			return nil
		}
	}
	marks := map[string]string{tracker.AnnotationDispatchPending: pendingNew, tracker.AnnotationWorkflowSteps: "", tracker.AnnotationWorkflowInputs: renderedMark(s), tracker.AnnotationParallelism: "",
		tracker.AnnotationHelmReleases: r.recordReleases(ctx, s), tracker.AnnotationDefinitions: r.definitionsFingerprint(ctx, s),
		tracker.AnnotationRootObjects: tracker.RootObjectsRecorded}
	if s.parallelism > 0 {
		marks[tracker.AnnotationParallelism] = strconv.Itoa(s.parallelism)
	}
	fresh := true
	if refill {
		pending := tracker.Mark(s.current, tracker.AnnotationDispatchPending)
		delete(marks, tracker.AnnotationDispatchPending)
		fresh = pending != ""
		s.rolledBack = pending == pendingRollback
	}
	if wf := workflow.Of(s.app); workflow.Gated(wf) {
		// The run follows the steps the version was rendered with. A
		// workflow it cannot run records nothing, root entries included.
		steps, err := workflow.Steps(wf)
		if err == nil {
			steps.Use(r.Renderer.Evaluator())
			err = steps.CheckConditions()
		}
		if errors.Is(err, cueeval.ErrUnavailable) {
			s.setRetry(err)
			return err
		}
		if err != nil {
			reason := v1beta1.ReasonUnsupportedWorkflow
			if errors.As(err, new(*cueeval.BudgetError)) {
				reason = v1beta1.ReasonEvaluationBudgetExceeded
				s.setRetry(err)
			}
			s.renderErr = &reasonError{reason: reason, err: err}
			return nil
		}
		marks[tracker.AnnotationWorkflowSteps] = workflow.Encode(steps)
	}
	if defs, err := r.resolveDefinitions(ctx, s.app); err == nil {
		// PostDispatch traits render once the workload is healthy: until
		// then the objects the kept version's rendered stay recorded.
		versioned, root = carryPostTraits(s, defs, versioned, root)
	} else {
		s.setRetry(err)
		return err
	}
	s.newKeys = inventory.Unseen(append(append([]v1beta1.ManagedResource(nil), versioned...), root...),
		append([]*v1beta1.ResourceTracker{s.current, s.root}, pointers(s.older)...)...)
	ref := tracker.RefOf(s.app)
	if len(root) > 0 || s.root != nil {
		if s.root, err = r.Trackers.Record(ctx, ref, tracker.Root(), gen, root, tracker.KeepMissing, nil); err != nil {
			s.recordErr = err
			s.setRetry(err)
			return nil
		}
	}
	// The version is marked pending until keepState has dispatched it: a
	// pass that stops in between (crash, abort) leaves the mark, and the
	// next pass dispatches it as new. It records the objects root keeps
	// too, with their manifests: a rollback to it applies what it
	// rendered of them, and an object it does not list is one it does not
	// render (inventory.Garbage).
	rt, err := r.Trackers.Record(ctx, ref, kind, gen, inventory.WithRoot(versioned, root), tracker.DeleteMissing, marks)
	if err != nil {
		s.recordErr = err
		s.setRetry(err)
		return nil
	}
	if s.current != nil && s.current.Name != rt.Name {
		s.older = append(s.older, *s.current)
	}
	// A tracker of the same name left by an earlier Application was just
	// taken over: it is current now, not an older one.
	s.older = slices.DeleteFunc(s.older, func(o v1beta1.ResourceTracker) bool { return o.Name == rt.Name })
	s.current = rt
	s.fresh = fresh
	if refill {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Recorded the version again with the values its workflow steps take", "resourceTracker", rt.Name, "generation", gen, "objects", len(versioned))
	} else {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Recorded a new version", "resourceTracker", rt.Name, "generation", gen, "objects", len(versioned), "rootObjects", len(root))
	}
	if delivery.UsesTopology(s.app) && !refill {
		if err := r.Trackers.Annotate(ctx, rt, tracker.AnnotationPlacements, placed); err != nil {
			s.setRetry(err)
		}
	}
	if err := r.recordComponentRevisions(ctx, s, versioned); err != nil {
		s.setRetry(err)
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
func (r *Reconciler) reuseVersion(ctx context.Context, s *scope) error {
	gen := s.app.Generation
	pending := tracker.Mark(s.current, tracker.AnnotationDispatchPending)
	if s.current.Spec.ApplicationGeneration < s.newestGeneration {
		// Switching back to a version recorded earlier is a rollback: its
		// manifests are dispatched again.
		return r.rollBack(ctx, s)
	}
	if pending != "" {
		s.fresh = true
		s.rolledBack = pending == pendingRollback
		ctrl.LoggerFrom(ctx).V(1).Info("Dispatching a version whose dispatch never finished", "resourceTracker", s.current.Name, "pending", pending)
	}
	if s.current.Spec.ApplicationGeneration == gen {
		return nil
	}
	// A spec change that publishes nothing (same publishVersion): the
	// version stays as recorded, only the generation it is kept at moves.
	entries, err := tracker.Entries(s.current)
	if err != nil {
		s.recordErr = err
		return nil
	}
	if err := r.Trackers.Save(ctx, s.current, entries, gen); err != nil {
		s.recordErr = err
		s.setRetry(err)
	}
	return nil
}

// rollBack makes the current tracker, an earlier version, the live one
// again: entries garbage collection marked while it was older are wanted
// again, and the tracker is marked pending until dispatched.
func (r *Reconciler) rollBack(ctx context.Context, s *scope) error {
	s.rolledBack, s.fresh = true, true
	ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Rolling back to an earlier version", "resourceTracker", s.current.Name, "newestGeneration", s.newestGeneration)
	entries, err := tracker.Entries(s.current)
	if err != nil {
		s.recordErr = err
		return nil
	}
	for i := range entries {
		entries[i].Deleted = false
	}
	marks := map[string]string{tracker.AnnotationDispatchPending: pendingRollback}
	if err := r.Trackers.SaveMarked(ctx, s.current, entries, s.app.Generation, marks); err != nil {
		s.recordErr = err
		s.setRetry(err)
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
// errors go to s.renderErr; the returned error is then non-nil too.
func (r *Reconciler) renderPlacements(ctx context.Context, s *scope, gen int64, kind tracker.Kind) (versioned, root []v1beta1.ManagedResource, placed string, err error) {
	steps, err := r.placements(ctx, s.app, true)
	if err != nil {
		if errors.Is(err, errClusterList) {
			return nil, nil, "", err
		}
		reason := v1beta1.ReasonInvalidPolicy
		if errors.As(err, new(*workflow.UnsupportedError)) || errors.As(err, new(*workflow.InvalidWorkflowError)) {
			reason = v1beta1.ReasonUnsupportedWorkflow
		}
		s.renderErr = &reasonError{reason: reason, err: err}
		return nil, nil, "", err
	}
	// Steps taking values other steps export are rendered once the
	// values are there.
	deliver, err := withInputs(s, steps, kind)
	if err != nil {
		s.renderErr = &reasonError{reason: v1beta1.ReasonUnsupportedWorkflow, err: err}
		return nil, nil, "", err
	}
	objs, err := delivery.Objects(s.app, deliver, delivery.Input{
		Renderer:    r.Renderer,
		Definitions: func(app *v1beta1.Application) (render.Definitions, error) { return r.resolveDefinitions(ctx, app) },
		Context: render.AppContext{
			AppRevision:       delivery.RevisionName(s.app, gen),
			AppRevisionNum:    gen,
			PublishVersion:    kind.PublishVersion,
			ClusterVersion:    r.ClusterVersion,
			DeferPostDispatch: true,
		},
		Namespaced: r.namespacedIn(ctx),
		Actions:    r.chartActions(ctx, s),
		Charts:     r.chartRendered(ctx, s),
	})
	var policyErr *delivery.PolicyError
	switch {
	case errors.As(err, new(*delivery.DefinitionsError)), errors.Is(err, cueeval.ErrUnavailable):
		// Nothing is known of the version: the pass stops and is retried.
		return nil, nil, "", err
	case errors.As(err, &policyErr):
		s.renderErr = &reasonError{reason: v1beta1.ReasonInvalidPolicy, err: policyErr.Err}
		return nil, nil, "", err
	case err != nil:
		s.renderErr = err
		if errors.As(err, new(*delivery.ScopeError)) || errors.As(err, new(*release.Error)) {
			// A kind not served yet, a chart being fetched or a repository
			// out of reach may pass by itself.
			s.setRetry(err)
		}
		if reasonOf(err, "") == v1beta1.ReasonEvaluationBudgetExceeded {
			// Tried again with back-off: a time limit may have been hit on
			// a busy machine. The evaluators remember the failure, so a
			// retry costs nothing until its own back-off ends.
			r.Metrics.BudgetExceeded(budgetLimit(err))
			s.setRetry(err)
		}
		return nil, nil, "", err
	}
	versioned, root, err = entriesOf(s.app, objs, s.rules)
	if err == nil && r.Options.NoCrossNamespaceObjects {
		err = checkBoundary(s.app, s.identity, append(append([]v1beta1.ManagedResource(nil), versioned...), root...))
	}
	if err != nil {
		s.renderErr = err
	}
	s.parallelism = delivery.ParallelismOf(steps)
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
func (r *Reconciler) placementsMoved(ctx context.Context, s *scope) bool {
	if !delivery.UsesTopology(s.app) || s.rulesErr != nil {
		return false
	}
	steps, err := r.placements(ctx, s.app, false)
	if err != nil {
		return false
	}
	return delivery.PlacementsOf(steps) != tracker.Mark(s.current, tracker.AnnotationPlacements)
}

func pointers(rts []v1beta1.ResourceTracker) []*v1beta1.ResourceTracker {
	out := make([]*v1beta1.ResourceTracker, len(rts))
	for i := range rts {
		out[i] = &rts[i]
	}
	return out
}

// budgetLimit names the limit a render hit, for the metric of renders
// refused after evaluation (evaluations count their own).
func budgetLimit(err error) string {
	var le *render.LimitError
	if errors.As(err, &le) {
		return string(le.Limit)
	}
	return ""
}
