package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/definition"
	"github.com/steward-oam/steward/internal/render"
)

// fieldOwner is the server-side apply field manager of the baseline.
const fieldOwner = "owns-baseline"

// ownedKinds are watched from the start, as typed objects.
var ownedKinds = []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.ConfigMap{}}

type reconciler struct {
	client              client.Client
	cache               cache.Cache
	scheme              *runtime.Scheme
	mapper              meta.RESTMapper
	renderer            *render.Renderer
	definitionNamespace string

	ctrl    controller.Controller
	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

func (r *reconciler) setup(mgr ctrl.Manager, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("application").
		For(&v1beta1.Application{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	r.watched = map[schema.GroupVersionKind]bool{}
	for _, obj := range ownedKinds {
		b = b.Owns(obj)
		gvk, err := mgr.GetClient().GroupVersionKindFor(obj)
		if err != nil {
			return err
		}
		r.watched[gvk] = true
	}
	c, err := b.Build(r)
	if err != nil {
		return err
	}
	r.ctrl = c
	return nil
}

// Reconcile renders the Application and applies every object it renders.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &v1beta1.Application{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // owner references hand the children to the garbage collector
	}
	before := app.DeepCopy()
	n, applyErr := r.deliver(ctx, app)
	setStatus(app, n, applyErr)
	if !equality.Semantic.DeepEqual(before.Status, app.Status) {
		if err := r.client.Status().Patch(ctx, app, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("patching status of %s: %w", req, err)
		}
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	return ctrl.Result{RequeueAfter: interval(app)}, nil
}

// deliver renders app and server-side applies each object with an owner
// reference; it returns how many objects it applied.
func (r *reconciler) deliver(ctx context.Context, app *v1beta1.Application) (int, error) {
	defs, err := r.definitions(ctx, app)
	if err != nil {
		return 0, err
	}
	res, err := r.renderer.Render(app, defs, render.AppContext{
		AppRevision:    fmt.Sprintf("%s-v%d", app.Name, app.Generation),
		AppRevisionNum: app.Generation,
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, comp := range res.Components {
		objs := make([]*unstructured.Unstructured, 0, len(comp.Auxiliaries)+1)
		if comp.Workload != nil {
			objs = append(objs, comp.Workload)
		}
		for _, aux := range comp.Auxiliaries {
			objs = append(objs, aux.Object)
		}
		for _, obj := range objs {
			if err := r.apply(ctx, app, obj); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

func (r *reconciler) apply(ctx context.Context, app *v1beta1.Application, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("mapping %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if err := controllerutil.SetControllerReference(app, obj, r.scheme); err != nil {
			return err
		}
	} else {
		obj.SetNamespace("")
	}
	if err := r.watch(gvk); err != nil {
		return err
	}
	err = r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(fieldOwner), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// watch adds a watch for a rendered kind the first time it is seen, so
// changes to objects of that kind map back to their owner.
func (r *reconciler) watch(gvk schema.GroupVersionKind) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watched[gvk] {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	h := handler.EnqueueRequestForOwner(r.scheme, r.mapper, &v1beta1.Application{}, handler.OnlyControllerOwner())
	if err := r.ctrl.Watch(source.Kind[client.Object](r.cache, u, h)); err != nil {
		return fmt.Errorf("watching %s: %w", gvk, err)
	}
	r.watched[gvk] = true
	return nil
}

// definitions resolves each type the Application uses, as Steward does.
func (r *reconciler) definitions(ctx context.Context, app *v1beta1.Application) (render.Definitions, error) {
	return definition.Resolve(ctx, r.client, app, r.definitionNamespace)
}

// setStatus reports the outcome with the same Ready condition and phase
// Steward uses, so the harness reads both controllers alike.
func setStatus(app *v1beta1.Application, applied int, err error) {
	c := v1beta1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: fmt.Sprintf("%d objects applied", applied), ObservedGeneration: app.Generation}
	app.Status.Phase = v1beta1.ApplicationRunning
	if err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, v1beta1.ReasonApplyFailed, err.Error()
		app.Status.Phase = v1beta1.ApplicationWorkflowFailed
	}
	v1beta1.SetCondition(&app.Status.Conditions, c)
	app.Status.ObservedGeneration = app.Generation
}

// interval is the app.oam.dev/reconcile-interval annotation; zero (no
// periodic re-apply) when absent or invalid.
func interval(app *v1beta1.Application) time.Duration {
	d, err := time.ParseDuration(app.Annotations[v1beta1.AnnotationReconcileInterval])
	if err != nil || d <= 0 {
		return 0
	}
	return d
}
