package definition

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/definition"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
)

// definitionObject is a definition with a template and a status.
type definitionObject interface {
	client.Object
	*v1beta1.ComponentDefinition | *v1beta1.TraitDefinition | *v1beta1.PolicyDefinition | *v1beta1.WorkflowStepDefinition
}

// Reconciler reports on a definition whether its template
// compiles: Ready=False with the CUE error and its position otherwise, so
// that a broken definition is visible before any Application uses it.
type Reconciler[T definitionObject] struct {
	Client   client.Client
	Renderer *render.Renderer
	Kind     string
	New      func() T
	// Recorder, when set, reports a PolicyDefinition Steward does not
	// carry out.
	Recorder recorder.EventRecorder
	// Check, when set, checks a definition's (non-empty) template instead
	// of compiling it as a component, trait or policy template: it returns
	// the message of the Ready condition, or the error of a template that
	// will never work (Ready=False, reason TemplateCompileFailed; an error
	// wrapping cueeval.ErrUnavailable is retried instead).
	Check func(ctx context.Context, def T) (string, error)
	// Revisions, when set, records each spec in a DefinitionRevision.
	Revisions *revisionKeeper
}

// Reconcile checks one definition.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	def := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, def); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		// Gone: its compiled templates are of no further use, nor are
		// its revisions no Application pins.
		r.Renderer.Forget(r.Kind, req.Namespace, req.Name)
		if r.Revisions != nil {
			return ctrl.Result{}, r.Revisions.forget(ctx, definition.TypeOf(r.New()), req.Namespace, req.Name)
		}
		return ctrl.Result{}, nil
	}
	original := def.DeepCopyObject().(client.Object)
	parts := definitionParts(def)
	status := parts.status
	before := status.DeepCopy()
	cond := metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: "template compiles", ObservedGeneration: def.GetGeneration(), LastTransitionTime: metav1.NewTime(time.Now())}
	switch {
	case parts.template.Text == "":
		cond.Message = "no CUE template"
	case parts.template.Field == render.FieldExtensionTemplate:
		cond.Message = "template (" + render.FieldExtensionTemplate + ") compiles"
	}
	if len(parts.ignored) > 0 {
		// KubeVela v1.0 moved them to spec.status and reads them nowhere else.
		cond.Message += fmt.Sprintf("; spec.extension.%s ignored, as in KubeVela: health is read from spec.status",
			strings.Join(parts.ignored, " and spec.extension."))
	}
	var err error
	if r.Check != nil && parts.err == nil && parts.template.Text != "" {
		cond.Message, err = r.Check(ctx, def)
	} else {
		err = r.check(def, parts)
	}
	if err != nil {
		if errors.Is(err, cueeval.ErrUnavailable) {
			// Stopping, or no evaluator could start: nothing is known.
			return ctrl.Result{}, err
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1beta1.ReasonTemplateCompileFailed, err.Error()
		if re := (*render.Error)(nil); errors.As(err, &re) && re.Reason == v1beta1.ReasonEvaluationBudgetExceeded {
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
	if r.Revisions != nil {
		if err := r.recordRevision(ctx, def, status); err != nil {
			return ctrl.Result{}, err
		}
	}
	if equality.Semantic.DeepEqual(before, status) {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Status().Patch(ctx, def, client.MergeFrom(original)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("updating status of %s %s/%s: %w", r.Kind, def.GetNamespace(), def.GetName(), err)
	}
	return ctrl.Result{}, nil
}

// recordRevision records def's spec in a DefinitionRevision and says so
// in status (latestRevision, condition RevisionRecorded). A revision the
// definition names that holds another spec is reported, never retried.
func (r *Reconciler[T]) recordRevision(ctx context.Context, def T, status *v1beta1.DefinitionStatus) error {
	cond := metav1.Condition{Type: v1beta1.ConditionRevisionRecorded, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		ObservedGeneration: def.GetGeneration(), LastTransitionTime: metav1.NewTime(time.Now())}
	latest, err := r.Revisions.ensure(ctx, def)
	var user *revisionError
	switch {
	case errors.As(err, &user):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1beta1.ReasonDefinitionRevisionFailed, err.Error()
		if !meta.IsStatusConditionPresentAndEqual(status.Conditions, cond.Type, cond.Status) {
			r.Revisions.revisionEvent(def, err)
		}
	case err != nil:
		return err
	default:
		status.LatestRevision = latest
		cond.Message = "spec recorded in DefinitionRevision " + latest.Name
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	return nil
}

// check reads and compiles a definition's template.
func (r *Reconciler[T]) check(def client.Object, parts definitionPieces) error {
	if parts.err != nil || parts.template.Text == "" {
		return parts.err
	}
	return r.Renderer.CheckTemplate(r.Kind, def.GetNamespace(), def.GetName(), parts.template.Text)
}

// definitionPieces is what the definition controller checks of a
// definition: its template, where render reads it, and its status.
type definitionPieces struct {
	template render.Template
	// err says the template cannot be read (spec.extension is not an
	// object).
	err error
	// ignored are the spec.extension fields KubeVela no longer reads.
	ignored []string
	status  *v1beta1.DefinitionStatus
}

func definitionParts(obj client.Object) definitionPieces {
	switch d := obj.(type) {
	case *v1beta1.ComponentDefinition:
		t, err := render.ComponentTemplate(d)
		return definitionPieces{template: t, err: err, ignored: render.IgnoredExtensionFields(d.Spec.Extension), status: &d.Status}
	case *v1beta1.TraitDefinition:
		t, err := render.TraitTemplate(d)
		return definitionPieces{template: t, err: err, ignored: render.IgnoredExtensionFields(d.Spec.Extension), status: &d.Status}
	case *v1beta1.PolicyDefinition:
		return definitionPieces{template: render.PolicyTemplate(d), status: &d.Status}
	case *v1beta1.WorkflowStepDefinition:
		var t render.Template
		if d.Spec.Schematic != nil && d.Spec.Schematic.CUE != nil {
			t.Text = d.Spec.Schematic.CUE.Template
		}
		return definitionPieces{template: t, status: &d.Status}
	}
	return definitionPieces{status: &v1beta1.DefinitionStatus{}}
}

// Options configure the definition reconcilers.
type Options struct {
	// Revisions records each definition spec in a DefinitionRevision
	// (--definition-revisions).
	Revisions bool
	// SystemNamespace holds the definitions every namespace may use.
	SystemNamespace string
	// RevisionLimit is how many revisions of one definition are kept,
	// besides those Applications pin.
	RevisionLimit int
	// Sharded is true when the cache holds this shard's Applications
	// only: who pins a revision is then asked of the API server.
	Sharded bool
}

// Setup registers the reconcilers of the four definition kinds and, with
// revisions, of DefinitionRevisions, on mgr. Events go to events; every
// template is compiled by renderer.
func Setup(mgr ctrl.Manager, renderer *render.Renderer, events recorder.EventRecorder, opts Options) error {
	var keeper *revisionKeeper
	if opts.Revisions {
		keeper = &revisionKeeper{client: mgr.GetClient(), apps: mgr.GetClient(), systemNamespace: opts.SystemNamespace,
			limit: opts.RevisionLimit, events: events}
		if opts.Sharded {
			// The cache holds this shard's Applications only: who pins a
			// revision is asked of the API server (only when one would go).
			keeper.apps, keeper.direct = mgr.GetAPIReader(), true
		}
	}
	gen := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	if err := ctrl.NewControllerManagedBy(mgr).Named("componentdefinition").For(&v1beta1.ComponentDefinition{}, gen).
		Complete(&Reconciler[*v1beta1.ComponentDefinition]{Client: mgr.GetClient(), Renderer: renderer, Kind: "ComponentDefinition", Revisions: keeper,
			New: func() *v1beta1.ComponentDefinition { return &v1beta1.ComponentDefinition{} }}); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("traitdefinition").For(&v1beta1.TraitDefinition{}, gen).
		Complete(&Reconciler[*v1beta1.TraitDefinition]{Client: mgr.GetClient(), Renderer: renderer, Kind: "TraitDefinition", Revisions: keeper,
			New: func() *v1beta1.TraitDefinition { return &v1beta1.TraitDefinition{} }}); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("policydefinition").For(&v1beta1.PolicyDefinition{}, gen).
		Complete(&Reconciler[*v1beta1.PolicyDefinition]{Client: mgr.GetClient(), Renderer: renderer, Kind: "PolicyDefinition", Recorder: events, Revisions: keeper,
			New: func() *v1beta1.PolicyDefinition { return &v1beta1.PolicyDefinition{} }}); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("workflowstepdefinition").For(&v1beta1.WorkflowStepDefinition{}, gen).
		Complete(&Reconciler[*v1beta1.WorkflowStepDefinition]{Client: mgr.GetClient(), Renderer: renderer, Kind: "WorkflowStepDefinition", Revisions: keeper,
			New: func() *v1beta1.WorkflowStepDefinition { return &v1beta1.WorkflowStepDefinition{} }, Check: stepDefinitionCheck(renderer)}); err != nil {
		return err
	}
	if keeper == nil {
		return nil
	}
	// A revision whose definition is gone goes once no Application pins
	// it: looked at when its last pin may have gone.
	return ctrl.NewControllerManagedBy(mgr).Named("definitionrevision").For(&v1beta1.DefinitionRevision{}, builder.WithPredicates(predicate.Funcs{
		UpdateFunc: func(event.UpdateEvent) bool { return false },
	})).
		Watches(&v1beta1.Application{}, handler.EnqueueRequestsFromMapFunc(pinsToRevisions(keeper.systemNamespace))).
		Complete(&RevisionReconciler{Client: mgr.GetClient(), Keeper: keeper})
}

// stepDefinitionCheck compiles a WorkflowStepDefinition's template with
// KubeVela's provider packages ("vela/kube", "vela/http", ...) as the step
// runtime provides them: a syntax error or a package Steward does not
// provide is reported on the definition. What a template's actions do is
// known only when a step runs.
func stepDefinitionCheck(renderer *render.Renderer) func(context.Context, *v1beta1.WorkflowStepDefinition) (string, error) {
	return func(_ context.Context, def *v1beta1.WorkflowStepDefinition) (string, error) {
		if def.Spec.Schematic == nil || def.Spec.Schematic.CUE == nil {
			return "no CUE template", nil
		}
		if err := renderer.CheckTemplate(render.KindStep, def.Namespace, def.Name, def.Spec.Schematic.CUE.Template); err != nil {
			return "", err
		}
		return "template compiles", nil
	}
}
