package cueeval

import (
	"bytes"
	"fmt"
	"strings"

	"cuelang.org/go/cue"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Field names of a KubeVela definition template.
var (
	pathParameter    = cue.ParsePath("parameter")
	pathContext      = cue.ParsePath("context")
	pathOutput       = cue.ParsePath("output")
	pathOutputs      = cue.ParsePath("outputs")
	pathPatch        = cue.ParsePath("patch")
	pathPatchOutputs = cue.ParsePath("patchOutputs")
	pathErrs         = cue.ParsePath("errs")
)

// templateErr says a template does not compile, naming it.
func templateErr(src Source, err error) *Error {
	return renderErr("", fmt.Errorf("the template of %s %s/%s does not compile: %w", src.Kind, src.Namespace, src.Name, err))
}

// fill compiles a template's context and parameter into its CUE context
// and unifies them with it. The caller holds c.mu.
func (c *compiled) fill(ctx, params []byte) (cue.Value, *Error) {
	ctxVal, err := c.source(ctx)
	if err != nil {
		return cue.Value{}, renderErr("context", err)
	}
	paramVal, err := c.source(params)
	if err != nil {
		return cue.Value{}, &Error{Reason: v1beta1.ReasonInvalidProperties, Message: err.Error()}
	}
	return c.value.FillPath(pathContext, ctxVal).FillPath(pathParameter, paramVal), nil
}

// render fills a compiled template's context and parameter and exports
// its output, outputs, patch and patchOutputs.
func (c *compiled) render(in *TemplateInput) (*Rendered, *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ferr := c.fill(in.Context, in.Params)
	if ferr != nil {
		return nil, ferr
	}
	param := v.LookupPath(pathParameter)
	if param.Exists() {
		if err := param.Validate(); err != nil {
			return nil, propsErr(flattenCUE(err, "parameter", false))
		}
	}
	if err := checkErrs(v); err != nil {
		return nil, err
	}

	out := &Rendered{}
	if c.usesActions {
		var pending []Action
		var rerr *Error
		v, pending, out.Charts, rerr = c.componentActions(v, in.Actions)
		if rerr != nil {
			return nil, rerr
		}
		if len(pending) > 0 {
			return &Rendered{Actions: pending}, nil
		}
	}
	// fail explains a template error, blaming missing properties first.
	fail := func(err error) *Error {
		if param.Exists() {
			if perr := param.Validate(cue.Concrete(true)); perr != nil {
				return propsErr(missingProps(flattenCUE(perr, "parameter", false)))
			}
		}
		ce := flattenCUE(err, "", false)
		return &Error{Reason: v1beta1.ReasonRenderFailed, Path: ce.path, Message: ce.Error()}
	}

	if o := v.LookupPath(pathOutput); o.Exists() {
		obj, err := exportObject(o)
		if err != nil {
			return nil, fail(err)
		}
		out.Output = obj
	}
	if outs := v.LookupPath(pathOutputs); outs.Exists() {
		err := eachField(outs, func(name string, fv cue.Value) error {
			obj, err := exportObject(fv)
			if err != nil {
				return err
			}
			if obj != nil {
				out.Outputs = append(out.Outputs, NamedObject{Name: name, Object: obj})
			}
			return nil
		})
		if err != nil {
			return nil, fail(err)
		}
	}
	if p := v.LookupPath(pathPatch); p.Exists() {
		rp, err := newPatch(p)
		if err != nil {
			return nil, fail(err)
		}
		out.Patch = rp
	}
	if po := v.LookupPath(pathPatchOutputs); po.Exists() {
		err := eachField(po, func(name string, fv cue.Value) error {
			rp, err := newPatch(fv)
			if err != nil {
				return err
			}
			out.PatchOutputs = append(out.PatchOutputs, NamedPatch{Name: name, Patch: rp})
			return nil
		})
		if err != nil {
			return nil, fail(err)
		}
	}
	return out, nil
}

// inspect fills a compiled template's parameter and context and reads back
// the parameter and whether `output` exists. It exports neither output nor
// outputs, so it costs a fraction of a render.
func (c *compiled) inspect(in *TemplateInput) *Inspection {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &Inspection{}
	v, err := c.fill(in.Context, in.Params)
	if err != nil {
		return out
	}
	if p := v.LookupPath(pathParameter); p.Exists() {
		if b, err := p.MarshalJSON(); err == nil {
			out.Params = b
		}
	}
	out.Workload = describeOutput(v.LookupPath(pathOutput), v.LookupPath(cue.ParsePath("context.name")))
	return out
}

// describeOutput names a template's output as a user reads it; empty when
// there is none. An unnamed workload takes the component's name, as render
// names it.
func describeOutput(o cue.Value, component cue.Value) string {
	if !o.Exists() {
		return ""
	}
	if it, err := o.Fields(); err != nil || !it.Next() {
		return ""
	}
	kind, err := o.LookupPath(cue.ParsePath("kind")).String()
	if err != nil || kind == "" {
		return "the workload"
	}
	name, err := o.LookupPath(cue.ParsePath("metadata.name")).String()
	if err != nil || name == "" {
		name, _ = component.String()
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// checkErrs surfaces a definition's `errs` list, KubeVela's way for a
// template to reject its input with a message of its own.
func checkErrs(v cue.Value) *Error {
	ev := v.LookupPath(pathErrs)
	if !ev.Exists() {
		return nil
	}
	var msgs []string
	if err := ev.Decode(&msgs); err != nil || len(msgs) == 0 {
		return nil
	}
	return &Error{Reason: v1beta1.ReasonRenderFailed, Path: "errs", Message: strings.Join(msgs, "; ")}
}

// missingProps rewrites CUE's "incomplete value T" into words a user reads
// as a missing property.
func missingProps(ce *cueError) *cueError {
	for i, m := range ce.msgs {
		if rest, ok := strings.CutPrefix(m, "incomplete value "); ok {
			ce.msgs[i] = "required property is missing (want " + rest + ")"
		}
	}
	return ce
}

// eachField calls fn for every regular field of a struct, in order.
func eachField(v cue.Value, fn func(name string, fv cue.Value) error) error {
	if err := v.Err(); err != nil {
		return err
	}
	if v.IncompleteKind() == cue.TopKind {
		return nil
	}
	it, err := v.Fields()
	if err != nil {
		return err
	}
	for it.Next() {
		if err := fn(it.Selector().Unquoted(), it.Value()); err != nil {
			return err
		}
	}
	return nil
}

// exportObject exports a concrete CUE struct as the JSON of a Kubernetes
// object. An empty struct exports as nil: the template rendered nothing.
func exportObject(v cue.Value) ([]byte, error) {
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, err
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return nil, err
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("%s: want an object, got %s", v.Path(), jsonKind(t))
	}
	if bytes.Equal(t, []byte("{}")) {
		return nil, nil
	}
	return b, nil
}

// jsonKind names the kind of a JSON value for messages.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a bool"
	}
	return "a number"
}
