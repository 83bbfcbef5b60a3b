package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/definition"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/workflow"
)

// Checker checks Applications and definitions as the controller renders
// and checks them.
type Checker struct {
	// Resolver finds definitions (and pinned revisions), as the
	// controller's does.
	Resolver definition.Resolver
	Renderer *render.Renderer
	// Placements places the Application's deploy steps as the controller
	// does (topology reads the cluster registry); nil places on the hub.
	Placements func(ctx context.Context, app *v1beta1.Application) ([]placement.Step, error)
	// Context is the render context of a version of app.
	Context func(app *v1beta1.Application) render.AppContext
	// Revisions reads a DefinitionRevision; nil when definition revisions
	// are off.
	Revisions client.Reader
	// Mapper maps kinds on the cluster (the kinds a definition outputs,
	// a ComponentDefinition's workload); nil checks none.
	Mapper meta.RESTMapper
}

// Result is a check's verdict: Errors refuse the object, Warnings are
// returned to the client with an admitted one.
type Result struct {
	Errors   field.ErrorList
	Warnings []string
}

func (r *Result) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// Application checks app: its step types exist, its workflow checks, and
// every deploy step's placement renders.
func (c *Checker) Application(ctx context.Context, app *v1beta1.Application) Result {
	var res Result
	spec := field.NewPath("spec")
	res.Errors = append(res.Errors, metadataErrors(app)...)
	res.Errors = append(res.Errors, duplicateComponents(app)...)
	for i, comp := range app.Spec.Components {
		if err := definition.CheckPin(comp.Type); err != nil {
			res.Errors = append(res.Errors, invalid(spec.Child("components").Index(i).Child("type"), err.Error()))
		}
	}
	if len(res.Errors) > 0 {
		return res
	}
	steps, err := c.Resolver.Steps(ctx, app)
	if err != nil {
		res.warn("step definitions not checked: %v", err)
	} else {
		res.Errors = append(res.Errors, missingSteps(app, steps)...)
		c.unrunnableSteps(app, steps, &res)
	}
	if defs, err := c.Resolver.Resolve(ctx, app); err == nil {
		res.Errors = append(res.Errors, missingParams(app, defs)...)
	}
	wf := workflow.Of(app)
	var flow workflow.Flow
	gated := workflow.Gated(wf)
	if gated {
		flow, err = workflow.Steps(wf)
		if err == nil {
			flow.Use(c.Renderer.Evaluator())
			err = flow.CheckConditions()
		}
		gated = err == nil
		switch {
		case errors.Is(err, cueeval.ErrUnavailable), errors.As(err, new(*cueeval.BudgetError)):
			res.warn("workflow not checked: %v", err)
		case err != nil:
			res.Errors = append(res.Errors, invalid(spec.Child("workflow"), err.Error()))
		}
	}
	if len(res.Errors) > 0 {
		return res
	}
	placed, err := c.place(ctx, app)
	if err != nil {
		if errors.As(err, new(*workflow.UnsupportedError)) || errors.As(err, new(*workflow.InvalidWorkflowError)) {
			res.Errors = append(res.Errors, invalid(spec.Child("workflow"), err.Error()))
			return res
		}
		// Clusters come and go: the controller reports it.
		res.warn("placements not checked: %v", err)
		return res
	}
	if gated && flow.TakesInputs() {
		// Steps taking other steps' outputs render when those exist.
		if placed, _, err = placement.WithInputs(placed, flow, nil); err != nil {
			res.warn("steps taking inputs not checked: %v", err)
			return res
		}
	}
	actx := render.AppContext{}
	if c.Context != nil {
		actx = c.Context(app)
	}
	_, err = delivery.Objects(app, placed, delivery.Input{
		Renderer:    c.Renderer,
		Definitions: func(shaped *v1beta1.Application) (render.Definitions, error) { return c.Resolver.Resolve(ctx, shaped) },
		Context:     actx,
	})
	c.renderVerdict(app, err, &res)
	return res
}

func (c *Checker) place(ctx context.Context, app *v1beta1.Application) ([]placement.Step, error) {
	if c.Placements != nil {
		return c.Placements(ctx, app)
	}
	return placement.Resolve(app, nil)
}

// renderVerdict sorts a render's error: the user's to fix (refused, at the
// field at fault) or only the cluster's to answer (admitted, warned).
func (c *Checker) renderVerdict(app *v1beta1.Application, err error, res *Result) {
	if err == nil {
		return
	}
	var need *render.ActionsError
	var defsErr *delivery.DefinitionsError
	var rerr *render.Error
	switch {
	case errors.As(err, &need):
		res.warn("component %q is checked when its chart is fetched (the controller reports it)", need.Component)
	case errors.As(err, &defsErr), errors.Is(err, cueeval.ErrUnavailable):
		res.warn("not fully checked: %v", err)
	case errors.As(err, &rerr):
		switch rerr.Reason {
		case v1beta1.ReasonDefinitionNotFound, v1beta1.ReasonInvalidProperties, v1beta1.ReasonRenderFailed:
			res.Errors = append(res.Errors, invalid(fieldOf(app, rerr), err.Error()))
		default:
			// A budget hit depends on the load of the moment.
			res.warn("not fully checked: %v", err)
		}
	default:
		res.warn("not fully checked: %v", err)
	}
}

// fieldOf is the path of the field a render error is about.
func fieldOf(app *v1beta1.Application, e *render.Error) *field.Path {
	spec := field.NewPath("spec")
	for i, comp := range app.Spec.Components {
		if comp.Name != e.Component {
			continue
		}
		p := spec.Child("components").Index(i)
		if e.Trait != "" {
			for j, t := range comp.Traits {
				if t.Type == e.Trait {
					p = p.Child("traits").Index(j)
					break
				}
			}
		}
		if e.Reason == v1beta1.ReasonDefinitionNotFound {
			return p.Child("type")
		}
		p = p.Child("properties")
		if e.Path != "" {
			p = p.Child(e.Path)
		}
		return p
	}
	if e.Reason == v1beta1.ReasonDefinitionNotFound {
		for k, pol := range app.Spec.Policies {
			if pol.Type == e.Definition {
				return spec.Child("policies").Index(k).Child("type")
			}
		}
	}
	return spec
}

// missingSteps refuses step types that have no definition, as the
// controller does before rendering.
func missingSteps(app *v1beta1.Application, defs map[string]*v1beta1.WorkflowStepDefinition) field.ErrorList {
	if app.Spec.Workflow == nil {
		return nil
	}
	var out field.ErrorList
	check := func(p *field.Path, typ string) {
		if typ == "" || workflow.Native(typ) || defs[typ] != nil {
			return
		}
		what := "WorkflowStepDefinition"
		if _, rev, ok := definition.Pin(typ); ok {
			what = fmt.Sprintf("DefinitionRevision %q", rev)
		}
		out = append(out, field.NotFound(p.Child("type"), typ+" (no "+what+" in the Application's namespace or the system namespace)"))
	}
	steps := field.NewPath("spec", "workflow", "steps")
	for i, s := range app.Spec.Workflow.Steps {
		check(steps.Index(i), s.Type)
		for j, sub := range s.SubSteps {
			check(steps.Index(i).Child("subSteps").Index(j), sub.Type)
		}
	}
	return out
}

// Definition checks a definition as the definition controller does: its
// template compiles (with the provider packages a step template may
// import), its status templates parse, and the revision it names, if
// any, is not taken by another spec.
func (c *Checker) Definition(ctx context.Context, def client.Object) Result {
	var res Result
	res.Errors = append(res.Errors, metadataErrors(def)...)
	kind, tmpl, path, status := parts(def)
	if tmpl != "" {
		if err := c.Renderer.CheckTemplate(kind, def.GetNamespace(), def.GetName(), tmpl); err != nil {
			var rerr *render.Error
			switch {
			case !errors.As(err, &rerr) || rerr.Reason == v1beta1.ReasonEvaluationBudgetExceeded:
				res.warn("template not checked: %v", err)
			case kind == render.KindStep:
				// A step definition is data until a workflow runs it
				// (KubeVela compiles none at admission): vela-core's own
				// steps import packages Steward does not provide.
				res.warn("%s", unrunnableStep(def.GetName(), err))
			default:
				res.Errors = append(res.Errors, invalid(path, err.Error()))
			}
		}
		c.checkOutputs(kind, def.GetName(), tmpl, path, isAddonDefinition(def), &res)
	}
	if cd, ok := def.(*v1beta1.ComponentDefinition); ok {
		c.checkWorkload(cd, &res)
	}
	if status != nil {
		if err := c.Renderer.CheckStatus(kind, def.GetName(), status); err != nil {
			var rerr *render.Error
			if errors.As(err, &rerr) && rerr.Reason != v1beta1.ReasonEvaluationBudgetExceeded {
				res.Errors = append(res.Errors, invalid(field.NewPath("spec", "status"), err.Error()))
			}
		}
	}
	if named, err := definition.NamedRevision(def); err != nil {
		res.Errors = append(res.Errors, invalid(field.NewPath("spec", "version"), err.Error()))
	} else if named != "" && c.Revisions != nil {
		rev := &v1beta1.DefinitionRevision{}
		if err := c.Revisions.Get(ctx, client.ObjectKey{Namespace: def.GetNamespace(), Name: named}, rev); err == nil &&
			rev.Spec.DefinitionType == definition.TypeOf(def) && rev.Spec.RevisionHash != definition.SpecHash(def) {
			res.Errors = append(res.Errors, field.Forbidden(field.NewPath("spec"),
				fmt.Sprintf("DefinitionRevision %s already holds another spec, and a revision never changes: name a new revision (spec.version or annotation %s)", named, v1beta1.AnnotationDefinitionRevisionName)))
		}
	}
	return res
}

// unrunnableStep is the warning for a step definition whose template
// Steward cannot run.
func unrunnableStep(name string, err error) string {
	if workflow.Native(name) {
		return fmt.Sprintf("Steward cannot run this template (%v); steps of type %s run Steward's own %s instead, and this definition is not used", err, name, name)
	}
	return fmt.Sprintf("Steward cannot run this template (%v): a workflow step of type %s fails when it runs, with the reason in the Application's status.workflow", err, name)
}

// unrunnableSteps warns of the steps of app whose definitions Steward
// cannot run: the Application is admitted (KubeVela would run them), and
// the step fails when the workflow reaches it.
func (c *Checker) unrunnableSteps(app *v1beta1.Application, defs map[string]*v1beta1.WorkflowStepDefinition, res *Result) {
	for _, typ := range workflow.CustomTypes(app.Spec.Workflow) {
		d := defs[typ]
		if d == nil || d.Spec.Schematic == nil || d.Spec.Schematic.CUE == nil {
			continue
		}
		err := c.Renderer.CheckTemplate(render.KindStep, d.Namespace, d.Name, d.Spec.Schematic.CUE.Template)
		var rerr *render.Error
		if err != nil && errors.As(err, &rerr) && rerr.Reason != v1beta1.ReasonEvaluationBudgetExceeded {
			res.warn("workflow step type %s: %s", typ, unrunnableStep(typ, err))
		}
	}
}

// parts returns what Definition checks of a definition.
func parts(def client.Object) (kind, tmpl string, path *field.Path, status *v1beta1.Status) {
	path = field.NewPath("spec", "schematic", "cue", "template")
	// read is a component's or trait's template, where render reads it.
	read := func(t render.Template, err error) string {
		if err != nil {
			return ""
		}
		if t.Field == render.FieldExtensionTemplate {
			path = field.NewPath("spec", "extension", "template")
		}
		return t.Text
	}
	switch d := def.(type) {
	case *v1beta1.ComponentDefinition:
		return render.KindComponent, read(render.ComponentTemplate(d)), path, d.Spec.Status
	case *v1beta1.TraitDefinition:
		return render.KindTrait, read(render.TraitTemplate(d)), path, d.Spec.Status
	case *v1beta1.PolicyDefinition:
		return render.KindPolicy, render.PolicyTemplate(d).Text, path, nil
	case *v1beta1.WorkflowStepDefinition:
		if d.Spec.Schematic != nil && d.Spec.Schematic.CUE != nil {
			tmpl = d.Spec.Schematic.CUE.Template
		}
		return render.KindStep, tmpl, path, nil
	}
	return "", "", path, nil
}

// invalid is a field error without the value (an Application's value is
// in the manifest the user holds), read as "<field>: Invalid value: <detail>".
func invalid(path *field.Path, detail string) *field.Error {
	return &field.Error{Type: field.ErrorTypeInvalid, Field: path.String(), BadValue: field.OmitValueType{}, Detail: detail}
}

// summary joins a result's errors for a log line.
func (r Result) summary() string {
	var parts []string
	for _, e := range r.Errors {
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}
