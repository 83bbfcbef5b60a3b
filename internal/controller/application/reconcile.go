package application

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/controller/application/apprev"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/memory"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/controller/application/wake"
	"github.com/steward-oam/steward/internal/helm/release"
	"github.com/steward-oam/steward/internal/metrics"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/steprun"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Reconciler delivers Applications with resource trackers.
type Reconciler struct {
	// Client reads Steward's own kinds (cached) and writes them.
	Client client.Client
	// Mapper maps kinds to resources (discovery, cached).
	Mapper meta.RESTMapper
	// Clusters returns the client of each target cluster, used for managed
	// objects only.
	Clusters cluster.Clients
	// Registry lists the registered clusters for topology policies; nil
	// means the hub only.
	Registry *cluster.Registry
	Trackers *tracker.Store
	// Revisions keeps the ApplicationRevisions (uncached); nil keeps none.
	Revisions *apprev.Keeper
	Renderer  *render.Renderer
	// StepProviders carry out the provider actions of custom workflow
	// steps (vela/http, vela/email, vela/config, vela/util); vela/kube's
	// are the controller's own.
	StepProviders provider.Registry
	// StepJobs runs custom steps' remote actions (http, email) off the
	// reconcile workers; nil runs them in the pass. stepDone carries the
	// Applications whose action ended, to be reconciled again.
	StepJobs *steprun.Background
	stepDone chan event.TypedGenericEvent[types.NamespacedName]
	// Charts prepares the Helm charts of helmchart components (vela/helm);
	// nil refuses them.
	Charts   *release.Provider
	Recorder recorder.EventRecorder
	// ClusterVersion is context.clusterVersion for templates.
	ClusterVersion render.ClusterVersion
	Options        Options
	// Metrics records Steward's metrics; nil records nothing.
	Metrics *metrics.Metrics
	// Watch runs watch mode, or keeps timer mode's record.
	Watch *watch.Watcher

	// memory is what the reconciler remembers of each Application
	// between passes (memory.go); forget drops it.
	memory.Memory
	clusterList cluster.ListCache
	// hooks interrupt a pass in tests; nil in production.
	hooks hooks
}

// +kubebuilder:rbac:groups=core.oam.dev,resources=applications,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=core.oam.dev,resources=applications/status;applications/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=core.oam.dev,resources=resourcetrackers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core.oam.dev,resources=componentdefinitions;traitdefinitions;policydefinitions;workflowstepdefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=core.oam.dev,resources=definitionrevisions,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=core.oam.dev,resources=componentdefinitions/status;traitdefinitions/status;policydefinitions/status;workflowstepdefinitions/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate

// Reconcile brings one Application to its desired state. It has one
// shape: get the Application, defer the one status write, finalize when
// it is being deleted, ensure the finalizer, then run the phases over a
// facts.Pass that records facts; package status turns the facts into status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	app := &v1beta1.Application{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			// Deleted, or moved to another shard: its series go with it.
			r.Metrics.DeleteApp(req.Namespace, req.Name)
			return ctrl.Result{}, r.releaseOrphanTrackers(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if want, frozen := wake.Frozen(app); frozen { // KubeVela's freeze: the annotation's change wakes it
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped: frozen for another controller", "controllerVersionRequire", want)
		return ctrl.Result{}, nil
	}
	readFresh, err := r.adoptTrackers(ctx, app)
	if err != nil {
		return ctrl.Result{}, err
	}
	deleting := !app.DeletionTimestamp.IsZero()
	if deleting && nameError(app) != nil {
		// Never given a finalizer, nor status: nothing to write.
		r.forget(req.NamespacedName)
		return ctrl.Result{}, r.releaseUnnamed(ctx, app)
	}

	s := facts.NewPass(app)
	s.ReadFresh = readFresh
	defer func() { retErr = r.endPass(ctx, s, &result, retErr) }()
	if deleting {
		r.forget(req.NamespacedName)
		return r.finalize(ctx, s)
	}
	if res, err := r.ensureFinalizer(ctx, s); err != nil || !res.IsZero() {
		s.Aborted = true
		return res, err
	}
	r.bindIdentity(s)

	for _, p := range []struct {
		stage func(*facts.Pass) metrics.Stage
		run   func(context.Context, *facts.Pass) error
	}{
		{nil, r.loadTrackers}, // reads the cache; protects and re-creates trackers
		{stage(metrics.StageRender), r.renderAndRecord},
		{nil, r.Revisions.Record}, // the live version's ApplicationRevision; its tracker names it
		{nil, r.advanceWorkflow},
		{keepStage, r.keepState},
		{stage(metrics.StageHealth), r.evaluateHealth},
		{nil, r.dispatchPostTraits}, // after health: they wait for the workload's
		{nil, r.runSteps},           // custom steps, after health: they may read what was applied
		{nil, r.finishWorkflow},     // after health: a deploy step waits for it
		{stage(metrics.StageGC), r.collectGarbage},
	} {
		start := time.Now()
		err := p.run(ctx, s)
		if p.stage != nil {
			r.Metrics.ObserveStage(p.stage(s), time.Since(start))
		}
		if errors.Is(err, errVanished) {
			s.Aborted = true
			return ctrl.Result{}, nil
		}
		if err != nil {
			s.Aborted = true
			r.notAdopted(app, err)
			return ctrl.Result{}, err
		}
	}
	r.notAdopted(app, s.RetryErr)
	return r.requeue(s), s.RetryErr
}

// ensureFinalizer adds Steward's finalizer to an Application that does
// not have it yet. A non-zero result, or an error, ends the pass.
func (r *Reconciler) ensureFinalizer(ctx context.Context, s *facts.Pass) (ctrl.Result, error) {
	app := s.App
	if nameError(app) != nil || controllerutil.ContainsFinalizer(app, v1beta1.FinalizerResourceTracker) {
		return ctrl.Result{}, nil
	}
	if err := r.hooks.call(hookBeforeFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	// The list is written whole: the patch carries the resourceVersion
	// read, so that a finalizer someone added meanwhile (the orphan one)
	// is never overwritten. A conflict reads again.
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(app, v1beta1.FinalizerResourceTracker)
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, fmt.Errorf("adding finalizer to %s/%s: %w", app.Namespace, app.Name, err)
	}
	s.FinalizerAdded = true
	return ctrl.Result{}, r.hooks.call(hookAfterFinalizer)
}

// endPass writes the status computed from the pass's facts, once, for
// every kind of pass (deletion included), and returns the pass's error
// with a failed status write joined to it.
func (r *Reconciler) endPass(ctx context.Context, s *facts.Pass, result *ctrl.Result, passErr error) error {
	err := r.patchStatus(ctx, s)
	if errors.Is(err, errStatusMoved) {
		// Someone wrote the Application meanwhile: read it soon.
		*result = ctrl.Result{RequeueAfter: conflictRetry}
		return passErr
	}
	// A pass that recorded the Application's first tracker may have
	// applied for an Application that vanished meanwhile (see
	// cleanUpVanished in finalize.go).
	if s.Guarded && (s.Aborted || apierrors.IsNotFound(err)) {
		r.cleanUpVanished(ctx, s)
		return passErr
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return errors.Join(passErr, fmt.Errorf("writing the status of %s/%s: %w", s.App.Namespace, s.App.Name, err))
	}
	if err == nil && startedRunMovesOn(s) && result.RequeueAfter > conflictRetry {
		// The run's start wakes no pass (wake.ApplicationChanged), so the
		// steps after the one that finished run now rather than at the
		// re-sync.
		result.RequeueAfter = conflictRetry
	}
	return passErr
}

// startedRunMovesOn reports whether this pass started a workflow run in
// which a step finished and the next would start, and the run was written:
// the API server kept status.workflow (an Application CRD that prunes it
// would have the next pass start the run again, and so loop).
func startedRunMovesOn(s *facts.Pass) bool {
	f := s.Flow
	if f == nil || !f.Started || !f.Next || s.Aborted {
		return false
	}
	w := s.App.Status.Workflow
	return w != nil && w.AppRevision == f.Status.AppRevision
}

// forget drops what the reconciler keeps in memory about an Application
// that is gone or being deleted.
func (r *Reconciler) forget(app types.NamespacedName) {
	r.Memory.Forget(app)
	r.Watch.Forget(app)
	if r.StepJobs != nil {
		r.StepJobs.Forget(app)
	}
}

// patchStatus writes the status computed from the pass's facts, only when
// it changed, and emits events for condition transitions.
func (r *Reconciler) patchStatus(ctx context.Context, s *facts.Pass) error {
	if s.Aborted {
		// The pass stopped before it knew the facts: the last status
		// stays, and the work queue retries with back-off.
		return nil
	}
	if s.StatusWritten {
		// A deletion wrote it before releasing the Application.
		return s.StatusErr
	}
	defer r.Metrics.StartStage(metrics.StageStatus)()
	// Only the status changes from here on: the rest is shared, not copied.
	before := &v1beta1.Application{TypeMeta: s.App.TypeMeta, ObjectMeta: s.App.ObjectMeta, Spec: s.App.Spec, Status: *s.App.Status.DeepCopy()}
	status.Compute(s, time.Now())
	if len(s.DroppedConditions) > 0 {
		tookOver(ctx, s, "Dropped KubeVela's conditions from the status", "dropped KubeVela's conditions "+strings.Join(s.DroppedConditions, ", "),
			"conditions", s.DroppedConditions)
	}
	r.events().Emit(s, before)
	r.Revisions.Outcome(ctx, s, before)
	if !s.Deleting {
		r.recordSizes(s)
	}
	if r.StoredStatus.Same(before, s.App) {
		return nil
	}
	// Written only over the status this pass read (optimistic lock): a
	// merge patch from a stale copy would carry just the fields that
	// differ from that copy, and could leave the phase of one pass beside
	// the conditions of another. A run's status is also written by users
	// (resume, suspend): it moves on only from what they last wrote. On a
	// conflict the Application is read again soon and the next pass
	// derives the whole status anew.
	err := r.Client.Status().Patch(ctx, s.App, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Status not written: the Application changed since this pass read it; the next pass reads it again")
		return errStatusMoved
	}
	return err
}

// errStatusMoved: the status was not written; the Application changed since the pass read it.
var errStatusMoved = errors.New("the application changed meanwhile")

// conflictRetry is how soon an Application whose finalizers changed under
// a write is read again.
const conflictRetry = 200 * time.Millisecond

// recordSizes exports the tracked resources and the current tracker's
// size, raw and as stored.
func (r *Reconciler) recordSizes(s *facts.Pass) {
	r.Metrics.SetTrackedResources(s.App.Namespace, s.App.Name, len(s.App.Status.AppliedResources))
	if s.Current != nil {
		raw, stored := tracker.Sizes(s.Current)
		r.Metrics.SetTrackerSize(s.App.Namespace, s.App.Name, raw, stored)
	}
}

func stage(st metrics.Stage) func(*facts.Pass) metrics.Stage {
	return func(*facts.Pass) metrics.Stage { return st }
}

// keepStage is "apply" for a pass that dispatches a new version, else
// "statekeep".
func keepStage(s *facts.Pass) metrics.Stage {
	if s.Fresh {
		return metrics.StageApply
	}
	return metrics.StageStateKeep
}

// nameError says why an Application's name cannot be used: every object
// Steward creates for it, trackers included, carries the name as the value
// of the app.oam.dev/name label, and label values are limited to 63
// characters while object names may have 253. Refusing the Application
// (KubeVela fails on the first write, with an API error) is what a user
// can act on; hashing the value would break every tool that selects an
// Application's objects by that label.
func nameError(app *v1beta1.Application) error {
	if errs := validation.IsValidLabelValue(app.Name); len(errs) > 0 {
		return fmt.Errorf("the name is %d characters long, but it is written as the label %s on every object the Application creates, and label values may have at most %d characters: recreate the Application with a shorter name",
			len(app.Name), v1beta1.LabelAppName, validation.LabelValueMaxLength)
	}
	return nil
}

// releaseUnnamed lets an Application whose name nameError refuses go: no
// tracker or object can carry its name, so nothing was created and there
// is nothing to finalize. Only a finalizer added before the name was
// checked (an earlier Steward version) is removed.
func (r *Reconciler) releaseUnnamed(ctx context.Context, app *v1beta1.Application) error {
	if !controllerutil.ContainsFinalizer(app, v1beta1.FinalizerResourceTracker) {
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Removed finalizer of an Application whose name no object can carry", "reason", v1beta1.ReasonInvalidName)
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(app, v1beta1.FinalizerResourceTracker)
	if err := r.Client.Patch(ctx, app, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing finalizer of %s/%s: %w", app.Namespace, app.Name, err))
	}
	return nil
}

// hookPoint names a point in a pass where a test can stop the controller,
// as if it had been killed there.
type hookPoint int

const (
	// hookAfterRecord: the new version is recorded, nothing applied yet.
	hookAfterRecord hookPoint = iota
	// hookAfterMark: garbage is marked deleted, nothing deleted yet.
	hookAfterMark
	// hookAfterKeep: the version is applied, nothing after it done.
	hookAfterKeep
	// hookBeforeFinalizer: the Application was read, its finalizer not
	// added yet.
	hookBeforeFinalizer
	// hookAfterFinalizer: the finalizer was added, nothing recorded yet.
	hookAfterFinalizer
)

// hooks lets tests interrupt a pass. A hook returning an error ends the
// pass at that point, with nothing after it done. Nil in production.
type hooks map[hookPoint]func() error

func (h hooks) call(p hookPoint) error {
	if f := h[p]; f != nil {
		return f()
	}
	return nil
}
