package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// auxiliaryWorkload is the trait type KubeVela labels a component
// definition's own outputs with.
const auxiliaryWorkload = "AuxiliaryWorkload"

// Render renders every component of app with its traits. It fails on the
// first component or trait that does not render, with an *Error naming it;
// a failed render returns no partial result, so nothing is applied from it.
func (r *Renderer) Render(app *v1beta1.Application, defs Definitions, actx AppContext) (*Result, error) {
	return r.RenderCounted(app, defs, actx, &Usage{})
}

// RenderCounted is Render counting what it produces in u, which several
// renders of one version (one per cluster) share: the version as a whole
// is held to the Renderer's Limits, and stops at the first evaluation
// that takes it past them.
func (r *Renderer) RenderCounted(app *v1beta1.Application, defs Definitions, actx AppContext, u *Usage) (*Result, error) {
	u.start(r.limits)
	base := appContext(app, actx)
	res := &Result{Components: make([]Component, 0, len(app.Spec.Components))}
	for i := range app.Spec.Components {
		comp, err := r.renderComponent(app, &app.Spec.Components[i], defs, base, actx, u)
		if err != nil {
			return nil, err
		}
		res.Components = append(res.Components, *comp)
	}
	if err := r.checkObjectSizes(res); err != nil {
		return nil, err
	}
	return res, nil
}

// Usage is what the renders of one version have produced so far. Every
// evaluation's objects count as they come back, so that a version that
// will not fit the limits stops at once, having held no more than the
// limits in memory; and the renders together must end within
// Limits.Time.
type Usage struct {
	// Objects and Bytes count the objects the evaluations returned and
	// their size as JSON (patches included).
	Objects, Bytes int
	deadline       time.Time
}

func (u *Usage) start(l Limits) {
	if u.deadline.IsZero() && l.Time > 0 {
		u.deadline = time.Now().Add(l.Time)
	}
}

// due fails an evaluation about to start past the render's deadline.
func (u *Usage) due(l Limits) *Error {
	if u.deadline.IsZero() || time.Now().Before(u.deadline) {
		return nil
	}
	return &Error{Reason: v1beta1.ReasonEvaluationBudgetExceeded, Err: &LimitError{Limit: cueeval.LimitTime, Max: int(l.Time), Flag: l.TimeFlag}}
}

// add counts what one evaluation returned.
func (u *Usage) add(r *cueeval.Rendered, l Limits) *Error {
	if r.Output != nil {
		u.Objects++
	}
	u.Objects += len(r.Outputs)
	u.Bytes += r.Bytes()
	switch {
	case l.Objects > 0 && u.Objects > l.Objects:
		return &Error{Reason: v1beta1.ReasonEvaluationBudgetExceeded, Err: &LimitError{Limit: cueeval.LimitObjects, Max: l.Objects, Flag: l.ObjectsFlag}}
	case l.TotalBytes > 0 && u.Bytes > l.TotalBytes:
		return &Error{Reason: v1beta1.ReasonEvaluationBudgetExceeded, Err: &LimitError{Limit: cueeval.LimitRenderBytes, Max: l.TotalBytes, Flag: l.TotalBytesFlag}}
	}
	return nil
}

// checkObjectSizes holds each rendered object, traits' patches applied, to
// the object size limit: a tracker records it whole, and the API server
// stores nothing larger.
func (r *Renderer) checkObjectSizes(res *Result) *Error {
	l := r.limits
	if l.ObjectBytes <= 0 {
		return nil
	}
	for _, c := range res.Components {
		check := func(o *unstructured.Unstructured, trait string) *Error {
			b, err := json.Marshal(o.Object)
			if err != nil {
				return &Error{Component: c.Name, Trait: trait, Reason: v1beta1.ReasonRenderFailed, Err: err}
			}
			if len(b) > l.ObjectBytes {
				return &Error{Component: c.Name, Trait: trait, Reason: v1beta1.ReasonEvaluationBudgetExceeded,
					Err: &LimitError{Limit: cueeval.LimitObjectBytes, Max: l.ObjectBytes, Flag: l.ObjectBytesFlag,
						Object: fmt.Sprintf("%s %q", o.GetKind(), o.GetName()), Size: len(b)}}
			}
			return nil
		}
		if c.Workload != nil {
			if err := check(c.Workload, ""); err != nil {
				return err
			}
		}
		for _, a := range c.Auxiliaries {
			if err := check(a.Object, a.Trait); err != nil {
				return err
			}
		}
	}
	return nil
}

// componentState is a component while its traits apply: the workload and
// the auxiliaries so far.
type componentState struct {
	workload map[string]any
	aux      []Auxiliary
	objects  []map[string]any // aux objects, parallel to aux
}

func (r *Renderer) renderComponent(app *v1beta1.Application, ac *v1beta1.ApplicationComponent,
	defs Definitions, base map[string]any, actx AppContext, u *Usage) (*Component, error) {
	return r.renderComponentWith(app, ac, defs, base, actx, u, nil)
}

// renderComponentWith renders a component; with live set, the traits of
// stage PostDispatch see live as context.output (the workload as it is in
// the cluster, status included) instead of the rendered workload.
func (r *Renderer) renderComponentWith(app *v1beta1.Application, ac *v1beta1.ApplicationComponent,
	defs Definitions, base map[string]any, actx AppContext, u *Usage, live map[string]any) (*Component, error) {
	named := func(e *Error, trait string) *Error {
		e.Component, e.Trait = ac.Name, trait
		if e.Definition == "" {
			e.Definition = ac.Type
			if trait != "" {
				e.Definition = trait
			}
		}
		return e
	}
	def := defs.Components[ac.Type]
	if def == nil {
		return nil, named(&Error{Reason: v1beta1.ReasonDefinitionNotFound,
			Err: fmt.Errorf("component type %q has no ComponentDefinition%s", ac.Type, pinned(ac.Type, defs.NoRevisions, autoUpdate(app)))}, "")
	}
	ctx := componentContext(base, ac.Name, actx.AppRevisionNum)
	if ac.ReplicaKey != "" {
		// One copy of a component a replication policy selects.
		ctx["replicaKey"] = ac.ReplicaKey
	}
	tmpl, terr := ComponentTemplate(def)
	ev, rerr := r.evaluateDefinition(KindComponent, &def.ObjectMeta, tmpl, terr, ac.Properties, ctx, actx.Actions[ac.Name], u)
	if rerr != nil {
		return nil, named(rerr, "")
	}
	if len(ev.actions) > 0 {
		return nil, &ActionsError{Component: ac.Name, Type: ac.Type, Actions: ev.actions}
	}
	st := &componentState{workload: ev.output}
	for _, o := range ev.outputs {
		st.add("", o)
	}

	swapped := false
	for _, t := range sortTraits(ac.Traits, defs) {
		tdef := defs.Traits[t.Type]
		if tdef == nil {
			return nil, named(&Error{Reason: v1beta1.ReasonDefinitionNotFound,
				Err: fmt.Errorf("trait type %q has no TraitDefinition%s", t.Type, pinned(t.Type, defs.NoRevisions, autoUpdate(app)))}, t.Type)
		}
		if tdef.Spec.Stage == v1beta1.TraitStagePostDispatch {
			if actx.DeferPostDispatch && live == nil {
				continue
			}
			if live != nil && !swapped {
				st.workload, swapped = live, true
			}
		}
		if err := r.applyTrait(st, tdef, t, ctx, u); err != nil {
			return nil, named(err, t.Type)
		}
	}

	if swapped {
		// The live workload is not the component's to apply again.
		st.workload = nil
	}
	out := &Component{Name: ac.Name, Type: ac.Type, ReplicaKey: ac.ReplicaKey, DependsOn: slices.Clone(ac.DependsOn), Charts: ev.charts}
	meta := objectMeta{app: app, component: ac.Name, revision: actx.AppRevision, replicaKey: ac.ReplicaKey}
	if st.workload != nil {
		obj, err := meta.workload(st.workload, ac.Type)
		if err != nil {
			return nil, named(renderErr("output", err), "")
		}
		out.Workload = obj
	}
	for i, a := range st.aux {
		obj, err := meta.auxiliary(st.objects[i], a)
		if err != nil {
			return nil, named(renderErr("outputs."+a.Name, err), a.Trait)
		}
		a.Object = obj
		out.Auxiliaries = append(out.Auxiliaries, a)
	}
	return out, nil
}

// applyTrait evaluates one trait against the component state: its outputs
// become auxiliaries, its patch changes the workload and its patchOutputs
// change auxiliaries by name.
func (r *Renderer) applyTrait(st *componentState, def *v1beta1.TraitDefinition, t v1beta1.ApplicationTrait, compCtx map[string]any, u *Usage) *Error {
	ctx := st.context(compCtx)
	tmpl, terr := TraitTemplate(def)
	ev, rerr := r.evaluateDefinition(KindTrait, &def.ObjectMeta, tmpl, terr, t.Properties, ctx, nil, u)
	if rerr != nil {
		return rerr
	}
	if len(ev.actions) > 0 {
		return renderErr(ev.actions[0].Path, fmt.Errorf("the %s.%s action at %s: only a component's template may render a Helm chart",
			ev.actions[0].Provider, ev.actions[0].Do, ev.actions[0].Path))
	}
	for _, o := range ev.outputs {
		st.add(t.Type, o)
	}
	if ev.patch != nil {
		if st.workload == nil {
			return renderErr("patch", fmt.Errorf("the component has no workload to patch"))
		}
		w, err := applyPatch(ev.patch, st.workload)
		if err != nil {
			return renderErr("patch", fmt.Errorf("patch: %w", err))
		}
		st.workload = w
	}
	for _, po := range ev.patchOutputs {
		for i, a := range st.aux {
			if a.Name != po.Name {
				continue
			}
			o, err := applyPatch(po.Patch, st.objects[i])
			if err != nil {
				return renderErr("patchOutputs."+po.Name, fmt.Errorf("patchOutputs.%s: %w", po.Name, err))
			}
			st.objects[i] = o
		}
	}
	return nil
}

func (st *componentState) add(trait string, o namedObject) {
	st.aux = append(st.aux, Auxiliary{Trait: trait, Name: o.name})
	st.objects = append(st.objects, o.object)
}

// context is the trait's context: the component's plus output and outputs.
func (st *componentState) context(compCtx map[string]any) map[string]any {
	ctx := make(map[string]any, len(compCtx)+2)
	for k, v := range compCtx {
		ctx[k] = v
	}
	if st.workload != nil {
		ctx["output"] = st.workload
	}
	if len(st.aux) > 0 {
		outs := make(map[string]any, len(st.aux))
		for i, a := range st.aux {
			outs[a.Name] = st.objects[i]
		}
		ctx["outputs"] = outs
	}
	return ctx
}

// sortTraits orders traits by stage (PreDispatch, default, PostDispatch),
// keeping declared order within a stage. Unknown types sort as default and
// fail when applied.
func sortTraits(traits []v1beta1.ApplicationTrait, defs Definitions) []v1beta1.ApplicationTrait {
	rank := func(t v1beta1.ApplicationTrait) int {
		def := defs.Traits[t.Type]
		if def == nil {
			return 1
		}
		switch def.Spec.Stage {
		case v1beta1.TraitStagePreDispatch:
			return 0
		case v1beta1.TraitStagePostDispatch:
			return 2
		}
		return 1
	}
	out := slices.Clone(traits)
	slices.SortStableFunc(out, func(a, b v1beta1.ApplicationTrait) int { return rank(a) - rank(b) })
	return out
}

// RenderPostDispatch renders the traits of stage PostDispatch of one
// component, as KubeVela does once the component is dispatched and
// healthy: the component and its other traits are rendered as usual, then
// the PostDispatch traits see live (the workload read from the cluster)
// as context.output. It returns the objects those traits render; their
// patches to the workload are not applied (the workload is dispatched
// already), as in KubeVela. namespace is the workload's: the traits'
// context.namespace and the default namespace of what they render.
func (r *Renderer) RenderPostDispatch(app *v1beta1.Application, component, namespace string, defs Definitions, actx AppContext,
	live *unstructured.Unstructured) ([]Auxiliary, error) {
	var ac *v1beta1.ApplicationComponent
	for i := range app.Spec.Components {
		if app.Spec.Components[i].Name == component {
			ac = &app.Spec.Components[i]
		}
	}
	if ac == nil {
		return nil, &Error{Component: component, Reason: v1beta1.ReasonRenderFailed, Err: fmt.Errorf("no component %q", component)}
	}
	placed := app
	if namespace != "" && namespace != app.Namespace {
		placed = app.DeepCopy()
		placed.Namespace = namespace
	}
	wl := live.DeepCopy().Object
	if md, ok := wl["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	u := &Usage{}
	u.start(r.limits)
	comp, err := r.renderComponentWith(placed, ac, defs, appContext(placed, actx), actx, u, wl)
	if err != nil {
		return nil, err
	}
	post := map[string]bool{}
	for _, t := range ac.Traits {
		if d := defs.Traits[t.Type]; d != nil && d.Spec.Stage == v1beta1.TraitStagePostDispatch {
			post[t.Type] = true
		}
	}
	var out []Auxiliary
	for _, a := range comp.Auxiliaries {
		if !post[a.Trait] {
			continue
		}
		if placed != app {
			labels := a.Object.GetLabels()
			labels[v1beta1.LabelAppNamespace] = app.Namespace
			a.Object.SetLabels(labels)
		}
		out = append(out, a)
	}
	return out, nil
}

// autoUpdate reports whether app resolves a pinned type to the newest
// revision in its range (app.oam.dev/autoUpdate).
func autoUpdate(app *v1beta1.Application) bool {
	return app.Annotations[v1beta1.AnnotationAutoUpdate] == "true"
}

// pinned explains a type pinned to a definition revision (webservice@v2)
// that was not found; inRange says it was looked for in its range too
// (autoUpdate).
func pinned(typ string, noRevisions, inRange bool) string {
	name, rev, ok := strings.Cut(typ, "@v")
	if !ok {
		return ""
	}
	if noRevisions {
		return fmt.Sprintf(" (%q pins revision %q of definition %q, and definition revisions are turned off (--definition-revisions=false); remove \"@v%s\" to use the current definition)", typ, "v"+rev, name, rev)
	}
	if inRange {
		return fmt.Sprintf(" (%q pins revision %q of definition %q: there is no DefinitionRevision %q, nor one in its range (%q, newest first, with app.oam.dev/autoUpdate), in the Application's namespace or the system namespace; `kubectl get definitionrevisions -l <kind>.oam.dev/name=%s` lists the revisions kept)", typ, "v"+rev, name, name+"-v"+rev, name+"-v"+rev+".*", name)
	}
	return fmt.Sprintf(" (%q pins revision %q of definition %q: there is no DefinitionRevision %q in the Application's namespace or the system namespace; `kubectl get definitionrevisions -l <kind>.oam.dev/name=%s` lists the revisions kept)", typ, "v"+rev, name, name+"-v"+rev, name)
}
