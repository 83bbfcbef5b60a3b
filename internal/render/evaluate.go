package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/parser"

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

// namedObject is one entry of `outputs`, in template order.
type namedObject struct {
	name   string
	object map[string]any
}

// namedPatch is one entry of `patchOutputs`.
type namedPatch struct {
	name  string
	patch *rootPatch
}

// evaluation is what one template evaluated to, as plain Go data: nothing
// of it refers to the CUE context any more.
type evaluation struct {
	output       map[string]any
	outputs      []namedObject
	patch        *rootPatch
	patchOutputs []namedPatch
}

// evaluate fills a compiled template's context and parameter and exports
// its output, outputs, patch and patchOutputs. The returned *Error has
// Reason and Path set; the caller names the component and trait.
func (c *compiled) evaluate(params any, ctxData map[string]any) (*evaluation, *Error) {
	if c.err != nil {
		return nil, renderErr("", fmt.Errorf("template does not compile: %w", c.err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()

	ctxVal, err := c.data(ctxData)
	if err != nil {
		return nil, renderErr("context", err)
	}
	paramVal, err := c.data(params)
	if err != nil {
		return nil, &Error{Reason: v1beta1.ReasonInvalidProperties, Err: err}
	}
	v := c.value.FillPath(pathContext, ctxVal).FillPath(pathParameter, paramVal)
	param := v.LookupPath(pathParameter)
	if param.Exists() {
		if err := param.Validate(); err != nil {
			return nil, propsErr(flattenCUE(err, "parameter", false))
		}
	}
	if err := checkErrs(v); err != nil {
		return nil, err
	}

	ev := &evaluation{}
	// fail explains a template error, blaming missing properties first.
	fail := func(err error) *Error {
		if param.Exists() {
			if perr := param.Validate(cue.Concrete(true)); perr != nil {
				return propsErr(missingProps(flattenCUE(perr, "parameter", false)))
			}
		}
		ce := flattenCUE(err, "", false)
		return &Error{Reason: v1beta1.ReasonRenderFailed, Path: ce.path, Err: ce}
	}

	if out := v.LookupPath(pathOutput); out.Exists() {
		obj, err := exportObject(out)
		if err != nil {
			return nil, fail(err)
		}
		ev.output = obj
	}
	if outs := v.LookupPath(pathOutputs); outs.Exists() {
		err := eachField(outs, func(name string, fv cue.Value) error {
			obj, err := exportObject(fv)
			if err != nil {
				return err
			}
			if obj != nil {
				ev.outputs = append(ev.outputs, namedObject{name: name, object: obj})
			}
			return nil
		})
		if err != nil {
			return nil, fail(err)
		}
	}
	if p := v.LookupPath(pathPatch); p.Exists() {
		rp, err := newRootPatch(p)
		if err != nil {
			return nil, fail(err)
		}
		ev.patch = rp
	}
	if po := v.LookupPath(pathPatchOutputs); po.Exists() {
		err := eachField(po, func(name string, fv cue.Value) error {
			rp, err := newRootPatch(fv)
			if err != nil {
				return err
			}
			ev.patchOutputs = append(ev.patchOutputs, namedPatch{name: name, patch: rp})
			return nil
		})
		if err != nil {
			return nil, fail(err)
		}
	}
	return ev, nil
}

// data compiles Go data into the template's CUE context. Data goes in as
// JSON source rather than as Go values: CUE v0.17 evaluates some templates
// (KubeVela's env trait) differently when context is filled with converted
// Go values, and JSON source is what KubeVela itself compiles.
func (c *compiled) data(x any) (cue.Value, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return cue.Value{}, err
	}
	return c.source(b)
}

// source compiles JSON source into the template's CUE context as an
// expression. Unlike CompileBytes, BuildExpr registers nothing with the
// context's runtime, so the value is garbage once the evaluation ends:
// this is what keeps a long-lived compiled template from growing with
// every render and health check.
func (c *compiled) source(b []byte) (cue.Value, error) {
	expr, err := parser.ParseExpr("data", b)
	if err != nil {
		return cue.Value{}, err
	}
	v := c.ctx.BuildExpr(expr)
	return v, v.Err()
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
	return &Error{Reason: v1beta1.ReasonRenderFailed, Path: "errs", Err: errors.New(strings.Join(msgs, "; "))}
}

func propsErr(ce *cueError) *Error {
	return &Error{Reason: v1beta1.ReasonInvalidProperties, Path: ce.path, Err: ce}
}

func renderErr(path string, err error) *Error {
	return &Error{Reason: v1beta1.ReasonRenderFailed, Path: path, Err: err}
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

// exportObject exports a concrete CUE struct as a Kubernetes object. An
// empty struct exports as nil: the template rendered nothing.
func exportObject(v cue.Value) (map[string]any, error) {
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, err
	}
	data, err := exportJSON(v)
	if err != nil {
		return nil, err
	}
	obj, ok := data.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %T", v.Path(), data)
	}
	if len(obj) == 0 {
		return nil, nil
	}
	return obj, nil
}

// exportJSON exports a concrete value as JSON-compatible Go data with
// int64 and float64 numbers, as unstructured objects require.
func exportJSON(v cue.Value) (any, error) {
	b, err := v.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
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
