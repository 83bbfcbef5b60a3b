package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// namedObject is one entry of `outputs`, in template order.
type namedObject struct {
	name   string
	object map[string]any
}

// evaluation is what one template evaluated to, as plain Go data.
type evaluation struct {
	output       map[string]any
	outputs      []namedObject
	patch        *cueeval.Patch
	patchOutputs []cueeval.NamedPatch
	// actions are the provider actions the template asks for before it
	// can render; nothing else is set then.
	actions []cueeval.Action
	charts  []cueeval.ChartInfo
}

// evaluateDefinition decodes properties and evaluates a definition's CUE
// template with them and the context.
func (r *Renderer) evaluateDefinition(kind string, meta *metav1.ObjectMeta, tmpl Template, tmplErr error,
	props *runtime.RawExtension, ctx map[string]any, done []cueeval.ActionResult, u *Usage) (*evaluation, *Error) {
	if tmplErr != nil {
		return nil, renderErr("", fmt.Errorf("%s %q: %w", kind, meta.Name, tmplErr))
	}
	if tmpl.Field == "" {
		return nil, renderErr("", fmt.Errorf("%s %q has no CUE template (%s or %s); only CUE templates are supported",
			kind, meta.Name, FieldSchematicTemplate, FieldExtensionTemplate))
	}
	params, err := decodeProperties(props)
	if err != nil {
		return nil, &Error{Reason: v1beta1.ReasonInvalidProperties, Err: err}
	}
	in, err := templateInput(r.source(kind, cueeval.PartTemplate, meta, tmpl.Text), params, ctx)
	if err != nil {
		return nil, renderErr("context", err)
	}
	in.Actions = done
	if err := u.due(r.limits); err != nil {
		return nil, err
	}
	res, rerr := r.evaluate(&cueeval.Request{Render: in, Tenant: tenantOf(ctx)}, in.Source)
	if rerr != nil {
		return nil, rerr
	}
	if res.Render == nil {
		return nil, renderErr("", fmt.Errorf("evaluating %s: the evaluator answered without a result", in.Source.Describe()))
	}
	if err := u.add(res.Render, r.limits); err != nil {
		return nil, err
	}
	return decodeEvaluation(res.Render)
}

// templateInput encodes a template's parameter and context as the
// evaluator takes them. Data goes in as JSON source rather than as Go
// values: CUE v0.17 evaluates some templates (KubeVela's env trait)
// differently when context is filled with converted Go values, and JSON
// source is what KubeVela itself compiles.
func templateInput(src cueeval.Source, params any, ctx map[string]any) (*cueeval.TemplateInput, error) {
	c, err := json.Marshal(ctx)
	if err != nil {
		return nil, err
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return &cueeval.TemplateInput{Source: src, Context: c, Params: p}, nil
}

// decodeEvaluation turns the evaluator's JSON into Go data.
func decodeEvaluation(r *cueeval.Rendered) (*evaluation, *Error) {
	ev := &evaluation{patch: r.Patch, patchOutputs: r.PatchOutputs, actions: r.Actions, charts: r.Charts}
	if r.Output != nil {
		obj, err := decodeObject(r.Output)
		if err != nil {
			return nil, renderErr("output", err)
		}
		ev.output = obj
	}
	for _, o := range r.Outputs {
		obj, err := decodeObject(o.Object)
		if err != nil {
			return nil, renderErr("outputs."+o.Name, err)
		}
		ev.outputs = append(ev.outputs, namedObject{name: o.Name, object: obj})
	}
	return ev, nil
}

// decodeObject decodes the JSON of one exported object.
func decodeObject(b []byte) (map[string]any, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want an object, got %s", jsonType(v))
	}
	return obj, nil
}

// tenantOf is the namespace of the Application a context is for.
func tenantOf(ctx map[string]any) string {
	ns, _ := ctx["namespace"].(string)
	return ns
}

func renderErr(path string, err error) *Error {
	return &Error{Reason: v1beta1.ReasonRenderFailed, Path: path, Err: err}
}

// decodeProperties reads properties as JSON data; absent is an empty object.
func decodeProperties(props *runtime.RawExtension) (map[string]any, error) {
	if props == nil || len(props.Raw) == 0 || string(props.Raw) == "null" {
		return map[string]any{}, nil
	}
	v, err := decodeJSON(props.Raw)
	if err != nil {
		return nil, fmt.Errorf("properties are not valid JSON: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("properties must be an object, got %s", jsonType(v))
	}
	return m, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return normalizeNumbers(out), nil
}

// normalizeNumbers turns json.Number into int64 when integral, else float64.
func normalizeNumbers(x any) any {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			t[k] = normalizeNumbers(v)
		}
	case []any:
		for i, v := range t {
			t[i] = normalizeNumbers(v)
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return x
}
