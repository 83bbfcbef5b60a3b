package application

import (
	"context"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/wake"
	"github.com/steward-oam/steward/internal/lazylog"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// SetupWithManager registers the fixed watch set: Applications, their
// ResourceTrackers and the definitions. In timer mode no rendered kind is
// watched; in watch mode the watcher's label-selected, metadata-only
// informers of managed kinds feed the queue too.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	defs := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Watch.Informs() {
		// Watch mode: changes to managed objects, label-selected and
		// metadata-only, enqueue their Application.
		b = b.WatchesRawSource(r.Watch.Source())
	}
	if r.stepDone != nil {
		// A custom step's remote action ended: its step goes on.
		b = b.WatchesRawSource(source.Channel(r.stepDone, handler.TypedFuncs[types.NamespacedName, reconcile.Request]{
			GenericFunc: func(_ context.Context, e event.TypedGenericEvent[types.NamespacedName], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				q.Add(reconcile.Request{NamespacedName: e.Object})
			},
		}))
	}
	if r.Options.DefinitionRevisions {
		// autoUpdate Applications render again when a definition they
		// use changes.
		b = b.Watches(&v1beta1.ComponentDefinition{}, r.autoUpdateHandler(v1beta1.DefinitionTypeComponent), defs).
			Watches(&v1beta1.TraitDefinition{}, r.autoUpdateHandler(v1beta1.DefinitionTypeTrait), defs).
			Watches(&v1beta1.PolicyDefinition{}, r.autoUpdateHandler(v1beta1.DefinitionTypePolicy), defs).
			Watches(&v1beta1.WorkflowStepDefinition{}, r.autoUpdateHandler(v1beta1.DefinitionTypeWorkflowStep), defs)
	}
	return b.
		Named("application").
		For(&v1beta1.Application{}, builder.WithPredicates(wake.ApplicationChanged())).
		Watches(&v1beta1.ResourceTracker{}, handler.EnqueueRequestsFromMapFunc(wake.TrackerToApplication),
			builder.WithPredicates(wake.TrackerEvents(r.Options.RTDeleteOnlyTrigger))).
		Watches(&v1beta1.ComponentDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsWaitingFor), defs).
		Watches(&v1beta1.TraitDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsWaitingFor), defs).
		Watches(&v1beta1.PolicyDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsWaitingFor), defs).
		Watches(&v1beta1.WorkflowStepDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsUsingStep), defs).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.Options.ConcurrentReconciles,
			RateLimiter:             appRateLimiter(),
		}).
		// controller-runtime's values, encoded only into lines written.
		WithLogConstructor(lazylog.RequestLogger(mgr.GetLogger(), "application", v1beta1.GroupVersion.WithKind("Application"))).
		Complete(r)
}

// applicationsWaitingFor maps a changed definition to the Applications
// whose last render failed, in the definition's namespace or, for a
// definition of the system namespace, in any namespace: a definition
// installed or fixed after the fact lets them proceed without waiting for
// the re-sync period. Applications that rendered fine keep the version they
// rendered until their spec changes, as in KubeVela.
func (r *Reconciler) applicationsWaitingFor(ctx context.Context, def client.Object) []reconcile.Request {
	return r.applicationsOf(ctx, def, func(app *v1beta1.Application) bool {
		return v1beta1.IsConditionFalse(app.Status.Conditions, v1beta1.ConditionRendered)
	})
}

// applicationsUsingStep maps a changed WorkflowStepDefinition to the
// Applications whose workflow names its type in a step or sub-step, in the
// definition's namespace or, for a definition of the system namespace, in
// any namespace. Step templates are read when a step runs, so a step
// waiting for its definition, or failing on it, is tried again at once.
// Native step types (deploy, suspend, ...) never read a definition: a
// definition named after one wakes no Application.
func (r *Reconciler) applicationsUsingStep(ctx context.Context, def client.Object) []reconcile.Request {
	if v1beta1.IsNativeWorkflowStep(def.GetName()) {
		return nil
	}
	return r.applicationsOf(ctx, def, func(app *v1beta1.Application) bool { return wake.UsesStepType(app, def.GetName()) })
}

// applicationsOf lists the Applications a changed definition can reach
// (its namespace's, or every namespace's for the system namespace) that
// match.
func (r *Reconciler) applicationsOf(ctx context.Context, def client.Object, match func(*v1beta1.Application) bool) []reconcile.Request {
	var apps v1beta1.ApplicationList
	var opts []client.ListOption
	if def.GetNamespace() != r.Options.SystemDefinitionNS {
		opts = append(opts, client.InNamespace(def.GetNamespace()))
	}
	if err := r.Client.List(ctx, &apps, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list applications for a changed definition", "definition", def.GetName())
		return nil
	}
	var out []reconcile.Request
	for i := range apps.Items {
		if match(&apps.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps.Items[i])})
		}
	}
	return out
}

// requeue schedules the next pass after the re-sync period. An unhealthy
// app is looked at sooner, to report recovery, backing off from
// --unhealthy-requeue-base up to its own period. When something transient
// failed, Reconcile also returns s.RetryErr and the work queue's
// exponential back-off retries sooner.
func (r *Reconciler) requeue(s *facts.Pass) ctrl.Result {
	interval, warning := wake.Interval(s.App, r.Options.ReSyncPeriod, r.Options.MinReconcileInterval)
	s.IntervalWarning = warning
	key := types.NamespacedName{Namespace: s.App.Namespace, Name: s.App.Name}
	if s.Healthy() && !s.Flow.Waiting() {
		r.Unhealthy.Forget(key)
	} else {
		interval = wake.UnhealthyBackoff(r.Options.UnhealthyRequeueBase, interval, r.Unhealthy.Next(key))
	}
	after := wake.Jitter(interval, r.Options.ReSyncJitter)
	if f := s.Flow; f != nil {
		switch {
		case f.Next && !f.Started:
			// A deploy step finished: the next step runs at once. A run
			// this pass started moves on once its status is written
			// (endPass, startedRunMovesOn): were the write lost (an
			// Application CRD that prunes status.workflow) nothing loops.
			after = conflictRetry
		case f.Requeue > 0 && f.Requeue < after:
			// A suspend step's duration ends.
			after = f.Requeue
		}
	}
	if s.PostRecorded || s.StepRecorded {
		// PostDispatch traits recorded objects: apply them now.
		after = conflictRetry
	}
	if r.Options.onRequeue != nil {
		r.Options.onRequeue(key, after)
	}
	return ctrl.Result{RequeueAfter: after}
}
