package controller

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/steward-oam/steward/api/v1beta1"
)

// annotationDefinitions marks a version of an autoUpdate Application with
// the fingerprint of the definitions it was rendered with
// (definition.Resolver.Fingerprint).
const annotationDefinitions = "app.oam.dev/definitions-fingerprint"

// autoUpdateDelay gathers the definition changes of one `kubectl apply`
// (many definitions at once) into one render of each Application.
const autoUpdateDelay = 3 * time.Second

// autoUpdate reports whether app renders again when its definitions change.
func (r *ApplicationReconciler) autoUpdate(app *v1beta1.Application) bool {
	return r.Options.DefinitionRevisions && app.Annotations[v1beta1.AnnotationAutoUpdate] == "true"
}

// definitionsFingerprint is the annotationDefinitions mark of the version
// being recorded: "" unless the Application is autoUpdate.
func (r *ApplicationReconciler) definitionsFingerprint(ctx context.Context, s *scope) string {
	if !r.autoUpdate(s.app) {
		return ""
	}
	fp, err := r.resolver().Fingerprint(ctx, s.app)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Reading the definitions' fingerprint failed; the next pass renders again")
		return ""
	}
	return fp
}

// definitionsMoved reports whether a definition an autoUpdate Application
// uses (and does not pin) changed since its version was rendered: the
// version is then rendered again. Applications without the annotation
// keep the version they rendered until their spec changes, as in KubeVela;
// a pinned type's revision never changes.
func (r *ApplicationReconciler) definitionsMoved(ctx context.Context, s *scope) bool {
	if !r.autoUpdate(s.app) || s.current == nil {
		return false
	}
	fp, err := r.resolver().Fingerprint(ctx, s.app)
	if err != nil || fp == s.current.Annotations[annotationDefinitions] {
		return false
	}
	ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Rendering the version again: a definition it uses changed (app.oam.dev/autoUpdate)", "resourceTracker", s.current.Name)
	return true
}

// autoUpdateHandler enqueues, autoUpdateDelay after a definition of kind t
// is created, changed or deleted, the autoUpdate Applications that use it
// in its namespace (any namespace for the system namespace's), found
// through indexAutoUpdate: a change costs the Applications that use it.
func (r *ApplicationReconciler) autoUpdateHandler(t v1beta1.DefinitionType) handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(ctx context.Context, def client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		opts := []client.ListOption{client.MatchingFields{indexAutoUpdate: string(t) + "/" + def.GetName()}, client.UnsafeDisableDeepCopy}
		if def.GetNamespace() != r.Options.SystemDefinitionNS {
			opts = append(opts, client.InNamespace(def.GetNamespace()))
		}
		var apps v1beta1.ApplicationList
		if err := r.Client.List(ctx, &apps, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the autoUpdate Applications of a changed definition failed", "definition", def.GetName())
			return
		}
		for i := range apps.Items {
			q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps.Items[i])}, autoUpdateDelay)
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
}
