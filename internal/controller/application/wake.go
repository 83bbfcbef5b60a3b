package application

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
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

// kubectlLastApplied is written by `kubectl apply` together with a spec
// change; on its own it means nothing to Steward.
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// SetupWithManager registers the fixed watch set: Applications, their
// ResourceTrackers and the definitions. In timer mode no rendered kind is
// watched; in watch mode the watcher's label-selected, metadata-only
// informers of managed kinds feed the queue too.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	defs := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Watch != nil {
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
		For(&v1beta1.Application{}, builder.WithPredicates(applicationChanged())).
		Watches(&v1beta1.ResourceTracker{}, handler.EnqueueRequestsFromMapFunc(trackerToApplication),
			builder.WithPredicates(trackerEvents(r.Options.RTDeleteOnlyTrigger))).
		Watches(&v1beta1.ComponentDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsWaitingFor), defs).
		Watches(&v1beta1.TraitDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsWaitingFor), defs).
		Watches(&v1beta1.PolicyDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsWaitingFor), defs).
		Watches(&v1beta1.WorkflowStepDefinition{}, handler.EnqueueRequestsFromMapFunc(r.applicationsUsingStep), defs).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: r.Options.ConcurrentReconciles,
			RateLimiter:             appRateLimiter(),
		}).
		Complete(r)
}

// applicationChanged passes events that can change what Steward does: a
// new spec (generation), deletion, label or annotation changes, and a
// workflow resumed, suspended, terminated or restarted. Other status
// writes, managedFields and resourceVersion churn, and Steward's own
// finalizer update are dropped, so the controller never loops on its own
// writes.
func applicationChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		DeleteFunc: func(event.DeleteEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			switch {
			case o.GetGeneration() != n.GetGeneration():
				return true
			case o.GetDeletionTimestamp().IsZero() != n.GetDeletionTimestamp().IsZero():
				return true
			case !stringMapsEqual(o.GetLabels(), n.GetLabels(), ""):
				return true
			case workflowControlled(o, n):
				// Resumed, suspended, terminated or restarted (status
				// written by `steward workflow` or `vela workflow`).
				return true
			case othersConditions(o) != othersConditions(n):
				// Someone else wrote a condition, as tools written for
				// KubeVela do to have the Application looked at again.
				return true
			default:
				return !stringMapsEqual(o.GetAnnotations(), n.GetAnnotations(), kubectlLastApplied)
			}
		},
		GenericFunc: func(event.GenericEvent) bool { return true },
	}
}

// trackerEvents passes tracker events. With the delete-only trigger (the
// default) only deletions pass: Steward writes trackers itself on every
// dispatch and must not be woken by its own writes, but a tracker deleted
// by someone else must be re-created at once.
func trackerEvents(deleteOnly bool) predicate.Predicate {
	if !deleteOnly {
		return predicate.Funcs{}
	}
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		DeleteFunc: func(event.DeleteEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// trackerToApplication maps a tracker to its Application by labels.
func trackerToApplication(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	name, ns := l[v1beta1.LabelAppName], l[v1beta1.LabelAppNamespace]
	if name == "" || ns == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// applicationsWaitingFor maps a changed definition to the Applications
// whose last render failed, in the definition's namespace or, for a
// definition of the system namespace, in any namespace: a definition
// installed or fixed after the fact lets them proceed without waiting for
// the re-sync period. Applications that rendered fine keep the version they
// rendered until their spec changes, as in KubeVela.
func (r *Reconciler) applicationsWaitingFor(ctx context.Context, def client.Object) []reconcile.Request {
	var apps v1beta1.ApplicationList
	var opts []client.ListOption
	if def.GetNamespace() != r.Options.SystemDefinitionNS {
		opts = append(opts, client.InNamespace(def.GetNamespace()))
	}
	if err := r.Client.List(ctx, &apps, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list applications for a changed definition")
		return nil
	}
	var out []reconcile.Request
	for i := range apps.Items {
		app := &apps.Items[i]
		if v1beta1.IsConditionFalse(app.Status.Conditions, v1beta1.ConditionRendered) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
		}
	}
	return out
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
	var apps v1beta1.ApplicationList
	var opts []client.ListOption
	if def.GetNamespace() != r.Options.SystemDefinitionNS {
		opts = append(opts, client.InNamespace(def.GetNamespace()))
	}
	if err := r.Client.List(ctx, &apps, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list applications for a changed workflow step definition")
		return nil
	}
	var out []reconcile.Request
	for i := range apps.Items {
		app := &apps.Items[i]
		if usesStepType(app, def.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
		}
	}
	return out
}

// usesStepType reports whether app's workflow has a step or sub-step of
// type t.
func usesStepType(app *v1beta1.Application, t string) bool {
	if app.Spec.Workflow == nil {
		return false
	}
	for _, s := range app.Spec.Workflow.Steps {
		if s.Type == t {
			return true
		}
		for _, sub := range s.SubSteps {
			if sub.Type == t {
				return true
			}
		}
	}
	return false
}

// stringMapsEqual compares two maps, ignoring one key.
func stringMapsEqual(a, b map[string]string, ignore string) bool {
	count := 0
	for k, v := range a {
		if k == ignore {
			continue
		}
		count++
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	for k := range b {
		if k != ignore {
			count--
		}
	}
	return count == 0
}

// workflowControlled reports whether a user controlled the run between o
// and n (resume, suspend, terminate, restart). A run that is neither
// suspended nor terminated replacing none, or replacing such a run of
// another revision, is the controller starting a run: no pass is needed
// for its own write.
func workflowControlled(o, n any) bool {
	if workflowControl(o) == workflowControl(n) {
		return false
	}
	oa, _ := o.(*v1beta1.Application)
	na, _ := n.(*v1beta1.Application)
	if oa == nil || na == nil || na.Status.Workflow == nil {
		return true
	}
	ow, nw := oa.Status.Workflow, na.Status.Workflow
	idle := func(w *v1beta1.WorkflowStatus) bool { return !w.Suspend && !w.Terminated }
	return !(idle(nw) && (ow == nil || (ow.AppRevision != nw.AppRevision && idle(ow))))
}

// workflowControl is the part of an Application's workflow status a user
// writes to control the run.
func workflowControl(o any) string {
	app, ok := o.(*v1beta1.Application)
	if !ok || app.Status.Workflow == nil {
		return ""
	}
	w := app.Status.Workflow
	return fmt.Sprintf("run %s suspend=%t terminated=%t", w.AppRevision, w.Suspend, w.Terminated)
}

// othersConditions describes the conditions of an Application that
// Steward did not write: every condition Steward writes carries the
// generation it describes (at least 1), while KubeVela's shape has no
// observedGeneration. Steward's next status write replaces or drops them,
// so a pass they trigger does not trigger another.
func othersConditions(o any) string {
	app, ok := o.(*v1beta1.Application)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, c := range app.Status.Conditions {
		if c.ObservedGeneration == 0 {
			fmt.Fprintf(&b, "%s=%s/%s/%s;", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return b.String()
}

// reconcileInterval returns the re-sync period of an Application: its
// app.oam.dev/reconcile-interval annotation when valid, else the global
// period. A warning says why an annotation was ignored.
func reconcileInterval(app *v1beta1.Application, o Options) (time.Duration, string) {
	v, ok := app.Annotations[v1beta1.AnnotationReconcileInterval]
	if !ok || v == "" {
		return o.ReSyncPeriod, ""
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return o.ReSyncPeriod, fmt.Sprintf("annotation %s=%q is not a duration (like 30s or 2m); using the default %s", v1beta1.AnnotationReconcileInterval, v, o.ReSyncPeriod)
	}
	if d < o.MinReconcileInterval {
		return o.ReSyncPeriod, fmt.Sprintf("annotation %s=%q is under the minimum %s; using the default %s", v1beta1.AnnotationReconcileInterval, v, o.MinReconcileInterval, o.ReSyncPeriod)
	}
	return d, ""
}

// jitter spreads d by ±fraction so that thousands of Applications created
// together do not all requeue in the same second.
func jitter(d time.Duration, fraction float64) time.Duration {
	if fraction <= 0 {
		return d
	}
	spread := (rand.Float64()*2 - 1) * fraction
	out := float64(d) * (1 + spread)
	if out >= math.MaxInt64 {
		// Past about 290 years a Duration overflows: keep d.
		return d
	}
	return time.Duration(out)
}

// unhealthyBackoff is how long an unhealthy Application waits before its
// next pass: base after the first unhealthy pass, doubled after each
// further one, and never more than the Application's own re-sync period,
// so that a fleet-wide outage does not multiply the load on the API
// server and an app that asked for a long interval keeps it. A base of 0
// turns the back-off off: unhealthy apps keep their re-sync period.
func unhealthyBackoff(base, interval time.Duration, streak int) time.Duration {
	if base <= 0 || base >= interval {
		return interval
	}
	d := base
	for range max(streak-1, 0) {
		if d >= interval/2 {
			// Doubling would reach the interval (or overflow).
			return interval
		}
		d *= 2
		if d >= interval {
			return interval
		}
	}
	return d
}

// requeue schedules the next pass after the re-sync period. An unhealthy
// app is looked at sooner, to report recovery, backing off from
// --unhealthy-requeue-base up to its own period. When something transient
// failed, Reconcile also returns s.retryErr and the work queue's
// exponential back-off retries sooner.
func (r *Reconciler) requeue(s *scope) ctrl.Result {
	interval, warning := reconcileInterval(s.app, r.Options)
	s.intervalWarning = warning
	key := types.NamespacedName{Namespace: s.app.Namespace, Name: s.app.Name}
	if s.healthy() && !s.flow.Waiting() {
		r.unhealthy.forget(key)
	} else {
		interval = unhealthyBackoff(r.Options.UnhealthyRequeueBase, interval, r.unhealthy.next(key))
	}
	after := jitter(interval, r.Options.ReSyncJitter)
	if f := s.flow; f != nil {
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
	if s.postRecorded || s.stepRecorded {
		// PostDispatch traits recorded objects: apply them now.
		after = conflictRetry
	}
	if r.Options.onRequeue != nil {
		r.Options.onRequeue(key, after)
	}
	return ctrl.Result{RequeueAfter: after}
}

// healthy reports whether every evaluated component is healthy.
// healthy reports whether every component is healthy; a workflow step
// waiting for something else (another Application) is looked at on the
// same back-off.
func (s *scope) healthy() bool {
	for _, h := range s.health {
		if !h.Healthy {
			return false
		}
	}
	return true
}
