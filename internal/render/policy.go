package render

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/policy"
)

// PolicyObject is one object a policy's template rendered. KubeVela
// renders the template of every policy whose type it does not interpret
// itself and applies its output (and outputs) as objects of the
// Application, on the hub, before the workflow runs.
type PolicyObject struct {
	// Policy is the policy's name in spec.policies, Type its type.
	Policy, Type string
	// Output is the object's key in `outputs`; empty for `output`.
	Output string
	Object *unstructured.Unstructured
}

// RenderPolicies renders the templates of app's policies that are not
// native (policy.Native) and whose PolicyDefinition defs holds, in spec
// order, and returns the objects their output and outputs hold: in the
// Application's namespace unless the template names one, `output` named
// after the policy and each of `outputs` <policy>-<key> unless named,
// labelled as a component's objects are with the policy's name as the
// component (KubeVela's context.name for a policy). A template without
// output renders nothing. Application-scoped definitions are left out:
// they transform the Application instead (policy.Unsupported refuses
// them). A policy type without a definition is left alone, as before.
// The evaluations count toward u, with the version's other renders.
func (r *Renderer) RenderPolicies(app *v1beta1.Application, defs Definitions, actx AppContext, u *Usage) ([]PolicyObject, error) {
	if u == nil {
		u = &Usage{}
	}
	u.start(r.limits)
	var out []PolicyObject
	base := appContext(app, actx)
	for _, p := range app.Spec.Policies {
		def := defs.Policies[p.Type]
		if def == nil || policy.Native(p.Type) || def.Spec.Scope == v1beta1.PolicyScopeApplication {
			continue
		}
		named := func(e *Error) *Error {
			e.Policy, e.Definition = p.Name, p.Type
			return e
		}
		ctx := componentContext(base, p.Name, actx.AppRevisionNum)
		ev, rerr := r.evaluateDefinition(KindPolicy, &def.ObjectMeta, PolicyTemplate(def), nil, p.Properties, ctx, nil, u)
		if rerr != nil {
			return nil, named(rerr)
		}
		if len(ev.actions) > 0 {
			return nil, named(renderErr(ev.actions[0].Path, fmt.Errorf("the %s.%s action at %s: only a component's template may render a Helm chart",
				ev.actions[0].Provider, ev.actions[0].Do, ev.actions[0].Path)))
		}
		meta := objectMeta{app: app, component: p.Name, revision: actx.AppRevision}
		if ev.output != nil {
			obj, err := meta.finish(ev.output, p.Name)
			if err != nil {
				return nil, named(renderErr("output", err))
			}
			out = append(out, PolicyObject{Policy: p.Name, Type: p.Type, Object: obj})
		}
		for _, o := range ev.outputs {
			obj, err := meta.finish(o.object, p.Name+"-"+o.name)
			if err != nil {
				return nil, named(renderErr("outputs."+o.name, err))
			}
			out = append(out, PolicyObject{Policy: p.Name, Type: p.Type, Output: o.name, Object: obj})
		}
	}
	if l := r.limits; l.ObjectBytes > 0 {
		for _, o := range out {
			b, err := json.Marshal(o.Object.Object)
			if err != nil {
				return nil, &Error{Policy: o.Policy, Definition: o.Type, Reason: v1beta1.ReasonRenderFailed, Err: err}
			}
			if len(b) > l.ObjectBytes {
				return nil, &Error{Policy: o.Policy, Definition: o.Type, Reason: v1beta1.ReasonEvaluationBudgetExceeded,
					Err: &LimitError{Limit: cueeval.LimitObjectBytes, Max: l.ObjectBytes, Flag: l.ObjectBytesFlag,
						Object: fmt.Sprintf("%s %q", o.Object.GetKind(), o.Object.GetName()), Size: len(b)}}
			}
		}
	}
	return out, nil
}
