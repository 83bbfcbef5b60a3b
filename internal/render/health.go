package render

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// Health is what a definition's spec.status says about one component or
// trait, computed from the live objects: it fills status.services[] of an
// Application.
type Health struct {
	// Healthy is the healthPolicy's isHealth; true when the definition has
	// no healthPolicy, as in KubeVela.
	Healthy bool
	// Message is customStatus's message, or why health could not be
	// computed.
	Message string
	// Details are status.details' fields as strings; nil when none.
	Details map[string]string
	// Reason is v1beta1.ReasonEvaluationBudgetExceeded when a status
	// template could not be evaluated within its budget; empty otherwise.
	Reason string
}

// ComponentHealth evaluates a component definition's spec.status against
// the live objects the controller read back in this pass; it reads nothing
// itself.
//
// output is the live workload, nil when the component renders none.
// outputs holds the live objects of the definition's own `outputs`, keyed by
// their outputs name: the value of the trait.oam.dev/resource label of
// objects labelled trait.oam.dev/type=AuxiliaryWorkload. Put every recorded
// one under its key, with a nil value when it could not be read back.
//
// The templates see `context` as render gives it (appName, name, namespace,
// revision, ...) plus `context.output` and `context.outputs.<name>` holding
// the live objects with their status, and `parameter` as the component's
// properties completed with the definition's defaults.
//
// A missing object makes the component unhealthy with a message naming it,
// whatever the templates say: a nil output when the definition renders a
// workload, or a nil value in outputs. A definition without healthPolicy is
// healthy. An error means a status template could not be evaluated (the
// definition's fault); the Health returned with it is unhealthy when the
// healthPolicy failed and carries the error as message when customStatus
// gave none, so the caller can report it as it is.
func (r *Renderer) ComponentHealth(def *v1beta1.ComponentDefinition, comp v1beta1.ApplicationComponent, actx AppContext,
	app *v1beta1.Application, output *unstructured.Unstructured, outputs map[string]*unstructured.Unstructured) (Health, error) {
	if def == nil {
		return Health{Message: fmt.Sprintf("component type %q has no ComponentDefinition", comp.Type)},
			fmt.Errorf("component %q: type %q has no ComponentDefinition", comp.Name, comp.Type)
	}
	ctx := componentContext(appContext(app, actx), comp.Name, actx.AppRevisionNum)
	params, err := decodeProperties(comp.Properties)
	if err != nil {
		return Health{Message: err.Error()}, fmt.Errorf("component %q: %w", comp.Name, err)
	}
	ins := inspection{params: params}
	if tmpl, _ := ComponentTemplate(def); tmpl.Text != "" && (output == nil || readsParameter(def.Spec.Status)) {
		var rerr *Error
		if ins, rerr = r.inspect(KindComponent, &def.ObjectMeta, tmpl.Text, params, ctx); rerr != nil {
			return Health{Message: rerr.Error(), Reason: budgetReason(rerr)}, fmt.Errorf("component %q: %w", comp.Name, rerr)
		}
	}
	if output == nil && ins.workload != "" {
		return Health{Message: ins.workload + " is not found"}, nil
	}
	if h, missing := missingOutputs(outputs); missing {
		return h, nil
	}
	if !hasStatus(def.Spec.Status) {
		return Health{Healthy: true}, nil
	}
	in, err := newStatusInput(liveContext(ctx, output, outputs), ins.params)
	if err != nil {
		return Health{Message: err.Error()}, fmt.Errorf("component %q: %w", comp.Name, err)
	}
	return r.evalStatus(KindComponent, &def.ObjectMeta, def.Spec.Status, in, tenantOf(ctx))
}

// TraitHealth evaluates a trait definition's spec.status like
// ComponentHealth. outputs holds the live objects of this trait's own
// `outputs`, keyed by the trait.oam.dev/resource label of objects labelled
// trait.oam.dev/type=<trait type>; a nil value means the object could not
// be read back and makes the trait unhealthy. output is the component's
// live workload: KubeVela does not give traits `context.output` when
// checking health; Steward does, so that a trait can judge what it
// patched.
func (r *Renderer) TraitHealth(def *v1beta1.TraitDefinition, trait v1beta1.ApplicationTrait, comp v1beta1.ApplicationComponent,
	actx AppContext, app *v1beta1.Application, output *unstructured.Unstructured, outputs map[string]*unstructured.Unstructured) (Health, error) {
	if def == nil {
		return Health{Message: fmt.Sprintf("trait type %q has no TraitDefinition", trait.Type)},
			fmt.Errorf("component %q: trait type %q has no TraitDefinition", comp.Name, trait.Type)
	}
	if h, missing := missingOutputs(outputs); missing {
		return h, nil
	}
	if !hasStatus(def.Spec.Status) {
		return Health{Healthy: true}, nil
	}
	ctx := componentContext(appContext(app, actx), comp.Name, actx.AppRevisionNum)
	props, err := decodeProperties(trait.Properties)
	if err != nil {
		return Health{Message: err.Error()}, fmt.Errorf("component %q trait %q: %w", comp.Name, trait.Type, err)
	}
	var params any = props
	if tmpl, _ := TraitTemplate(def); tmpl.Text != "" && readsParameter(def.Spec.Status) {
		ins, rerr := r.inspect(KindTrait, &def.ObjectMeta, tmpl.Text, props, ctx)
		if rerr != nil {
			return Health{Message: rerr.Error(), Reason: budgetReason(rerr)}, fmt.Errorf("component %q trait %q: %w", comp.Name, trait.Type, rerr)
		}
		params = ins.params
	}
	in, err := newStatusInput(liveContext(ctx, output, outputs), params)
	if err != nil {
		return Health{Message: err.Error()}, fmt.Errorf("component %q trait %q: %w", comp.Name, trait.Type, err)
	}
	return r.evalStatus(KindTrait, &def.ObjectMeta, def.Spec.Status, in, tenantOf(ctx))
}

// readsParameter reports whether any status template mentions parameter,
// so that the parameter defaults, which cost a partial evaluation of the
// definition's template, are computed only when a template can read them.
func readsParameter(st *v1beta1.Status) bool {
	return st != nil && (strings.Contains(st.HealthPolicy, "parameter") ||
		strings.Contains(st.CustomStatus, "parameter") || strings.Contains(st.Details, "parameter"))
}

// hasStatus reports whether a definition has any status template.
func hasStatus(st *v1beta1.Status) bool {
	return st != nil && (st.HealthPolicy != "" || st.CustomStatus != "" || st.Details != "")
}

// KstatusHealth judges a live object by the Kubernetes conventions
// kstatus implements (Deployment, StatefulSet and DaemonSet rolled out and
// available, Job complete, PVC bound, Pod ready, a Ready condition where
// there is one; Service, ConfigMap and kinds without status are ready).
// It is for objects whose definition has no healthPolicy, when the caller
// wants more than KubeVela's "no policy is healthy". A nil object is not
// found.
func KstatusHealth(obj *unstructured.Unstructured) Health {
	if obj == nil {
		return Health{Message: "not found"}
	}
	res, err := status.Compute(obj)
	if err != nil {
		return Health{Message: fmt.Sprintf("%s %q: computing status: %v", obj.GetKind(), obj.GetName(), err)}
	}
	h := Health{Healthy: res.Status == status.CurrentStatus, Message: res.Message}
	if h.Message == "" {
		h.Message = res.Status.String()
	}
	if !h.Healthy {
		h.Details = map[string]string{"status": res.Status.String()}
	}
	return h
}

// OutputOf tells which object of its component a rendered object is, from
// the labels render gives it (they survive in recorded manifests and live
// objects): name is its key in `outputs`, empty for the workload; trait is
// the trait type that rendered it, empty for the workload and for the
// component definition's own outputs. The controller groups live objects
// with it: the workload is ComponentHealth's output, trait "" objects its
// outputs, and each trait's objects TraitHealth's outputs.
func OutputOf(obj *unstructured.Unstructured) (trait, name string) {
	labels := obj.GetLabels()
	name = labels[v1beta1.LabelTraitResource]
	if name == "" {
		return "", ""
	}
	if t := labels[v1beta1.LabelTraitType]; t != auxiliaryWorkload {
		trait = t
	}
	return trait, name
}

// missingOutputs reports the first auxiliary object the controller could
// not read back, in name order.
func missingOutputs(outputs map[string]*unstructured.Unstructured) (Health, bool) {
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		if outputs[name] == nil {
			return Health{Message: fmt.Sprintf("output %q is not found", name)}, true
		}
	}
	return Health{}, false
}

// liveContext adds the live objects to a component context as
// context.output and context.outputs.
func liveContext(ctx map[string]any, output *unstructured.Unstructured, outputs map[string]*unstructured.Unstructured) map[string]any {
	out := maps.Clone(ctx)
	if output != nil {
		out["output"] = liveData(output)
	}
	if len(outputs) > 0 {
		live := make(map[string]any, len(outputs))
		for name, o := range outputs {
			live[name] = liveData(o)
		}
		out["outputs"] = live
	}
	return out
}

// inspection is what a definition's template says about one use of it,
// without rendering: its parameter with defaults, and the workload it
// renders.
type inspection struct {
	// params are the properties completed with the template's defaults;
	// the properties as given when the parameter is not concrete.
	params any
	// workload describes the rendered workload ("Deployment \"web\""), or
	// is empty when the template renders none.
	workload string
}

// inspect fills a template's parameter and context and reads back the
// parameter with its defaults and the workload it renders. It exports
// neither output nor outputs, so it costs a fraction of a render. A
// template that does not evaluate leaves the properties as they are.
func (r *Renderer) inspect(kind string, meta *metav1.ObjectMeta, tmpl string, params map[string]any, ctx map[string]any) (inspection, *Error) {
	out := inspection{params: params}
	in, err := templateInput(r.source(kind, cueeval.PartTemplate, meta, tmpl), params, ctx)
	if err != nil {
		return out, nil
	}
	res, rerr := r.evaluate(&cueeval.Request{Inspect: in, Tenant: tenantOf(ctx)}, in.Source)
	if rerr != nil {
		if rerr.Reason == v1beta1.ReasonEvaluationBudgetExceeded || errors.Is(rerr, cueeval.ErrUnavailable) {
			return out, rerr
		}
		return out, nil
	}
	if res.Inspection == nil {
		return out, nil
	}
	if p := res.Inspection.Params; p != nil {
		if d, err := decodeJSON(p); err == nil {
			out.params = d
		}
	}
	out.workload = res.Inspection.Workload
	return out, nil
}
