package controller

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/steward-oam/steward/api/v1beta1"
)

// kubectlLastApplied is written by `kubectl apply` together with a spec
// change; on its own it means nothing to Steward.
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func ctrlConfig(skipNameValidation bool) config.Controller {
	return config.Controller{SkipNameValidation: &skipNameValidation}
}

// SetupWithManager registers the fixed watch set: Applications, their
// ResourceTrackers and the definitions. In timer mode no rendered kind is
// watched; in watch mode the watcher's label-selected, metadata-only
// informers of managed kinds feed the queue too.
func (r *ApplicationReconciler) SetupWithManager(mgr ctrl.Manager) error {
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
func (r *ApplicationReconciler) applicationsWaitingFor(ctx context.Context, def client.Object) []reconcile.Request {
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
func (r *ApplicationReconciler) applicationsUsingStep(ctx context.Context, def client.Object) []reconcile.Request {
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
