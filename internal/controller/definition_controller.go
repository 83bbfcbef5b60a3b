package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
)

// definitionObject is a definition with a template and a status.
type definitionObject interface {
	client.Object
	*v1beta1.ComponentDefinition | *v1beta1.TraitDefinition | *v1beta1.PolicyDefinition
}

// DefinitionReconciler reports on a definition whether its template
// compiles: Ready=False with the CUE error and its position otherwise, so
// that a broken definition is visible before any Application uses it.
type DefinitionReconciler[T definitionObject] struct {
	Client   client.Client
	Renderer *render.Renderer
	Kind     string
	New      func() T
	// Recorder, when set, reports a PolicyDefinition Steward does not
	// carry out.
	Recorder recorder.EventRecorder
}

// Reconcile checks one definition.
func (r *DefinitionReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	def := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, def); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone: its compiled templates are of no further use.
			r.Renderer.Forget(r.Kind, req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	original := def.DeepCopyObject().(client.Object)
	template, status := definitionParts(def)
	before := status.DeepCopy()
	cond := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: "template compiles", ObservedGeneration: def.GetGeneration(), LastTransitionTime: metav1.NewTime(time.Now())}
	if template == "" {
		cond.Message = "no CUE template"
	} else if err := r.Renderer.CheckTemplate(r.Kind, def.GetNamespace(), def.GetName(), template); err != nil {
		if errors.Is(err, cueeval.ErrUnavailable) {
			// Stopping, or no evaluator could start: nothing is known.
			return ctrl.Result{}, err
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1beta1.ReasonTemplateCompileFailed, err.Error()
		if reasonOf(err, "") == v1beta1.ReasonEvaluationBudgetExceeded {
			// Compiling it alone costs more than an evaluation may.
			cond.Reason = v1beta1.ReasonEvaluationBudgetExceeded
		}
	}
	if pd, ok := any(def).(*v1beta1.PolicyDefinition); ok && cond.Status == metav1.ConditionTrue {
		if why := policy.UnsupportedDefinition(pd); why != "" {
			// Not carried out: said on the definition, never silently
			// ignored (a global policy is referenced by no Application).
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1beta1.ReasonUnsupportedPolicy, why
			if r.Recorder != nil && !meta.IsStatusConditionPresentAndEqual(status.Conditions, cond.Type, cond.Status) {
				r.Recorder.Eventf(def, nil, corev1.EventTypeWarning, v1beta1.ReasonUnsupportedPolicy, "Check", "%s", why)
			}
		}
	}
	status.ObservedGeneration = def.GetGeneration()
	meta.SetStatusCondition(&status.Conditions, cond)
	if equality.Semantic.DeepEqual(before, status) {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Status().Patch(ctx, def, client.MergeFrom(original)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("updating status of %s %s/%s: %w", r.Kind, def.GetNamespace(), def.GetName(), err)
	}
	return ctrl.Result{}, nil
}

func definitionParts(obj client.Object) (string, *v1beta1.DefinitionStatus) {
	switch d := obj.(type) {
	case *v1beta1.ComponentDefinition:
		return cueTemplate(d.Spec.Schematic), &d.Status
	case *v1beta1.TraitDefinition:
		return cueTemplate(d.Spec.Schematic), &d.Status
	case *v1beta1.PolicyDefinition:
		return cueTemplate(d.Spec.Schematic), &d.Status
	}
	return "", &v1beta1.DefinitionStatus{}
}

func cueTemplate(s *v1beta1.Schematic) string {
	if s == nil || s.CUE == nil {
		return ""
	}
	return s.CUE.Template
}

func setupDefinitionReconcilers(mgr ctrl.Manager, renderer *render.Renderer, events recorder.EventRecorder) error {
	gen := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	if err := ctrl.NewControllerManagedBy(mgr).Named("componentdefinition").For(&v1beta1.ComponentDefinition{}, gen).
		Complete(&DefinitionReconciler[*v1beta1.ComponentDefinition]{Client: mgr.GetClient(), Renderer: renderer, Kind: "ComponentDefinition",
			New: func() *v1beta1.ComponentDefinition { return &v1beta1.ComponentDefinition{} }}); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("traitdefinition").For(&v1beta1.TraitDefinition{}, gen).
		Complete(&DefinitionReconciler[*v1beta1.TraitDefinition]{Client: mgr.GetClient(), Renderer: renderer, Kind: "TraitDefinition",
			New: func() *v1beta1.TraitDefinition { return &v1beta1.TraitDefinition{} }}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("policydefinition").For(&v1beta1.PolicyDefinition{}, gen).
		Complete(&DefinitionReconciler[*v1beta1.PolicyDefinition]{Client: mgr.GetClient(), Renderer: renderer, Kind: "PolicyDefinition", Recorder: events,
			New: func() *v1beta1.PolicyDefinition { return &v1beta1.PolicyDefinition{} }})
}
