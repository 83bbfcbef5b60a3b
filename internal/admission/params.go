package admission

import (
	"encoding/json"
	"fmt"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

// requiredParams are the fields of a template's `parameter` a user must
// give, as dotted paths of the leaves (a.b.c), in the template's order:
// KubeVela's rule (pkg/appfile, requiredFields): a field that is neither
// optional (`?`) nor defaulted (`*v | T`) is required, and a struct is
// walked into. They are read from the template's syntax, never by
// evaluating it, so nothing runs in the webhook's process: a field whose
// type is a reference other than to a definition of the template (#Port),
// or set in a comprehension, is not counted; the render check that
// follows still refuses what cannot render.
func requiredParams(tmpl string) []string {
	f, err := parser.ParseFile("template", tmpl)
	if err != nil {
		return nil
	}
	defs := map[string]ast.Expr{}
	var params []ast.Expr
	for _, d := range f.Decls {
		fd, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		switch name := labelOf(fd.Label); {
		case name == "parameter":
			params = append(params, fd.Value)
		case strings.HasPrefix(name, "#"):
			defs[name] = fd.Value
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range params {
		collectRequired("", p, defs, 0, func(path string) {
			if !seen[path] {
				seen[path] = true
				out = append(out, path)
			}
		})
	}
	return out
}

// maxParamDepth bounds the walk (a definition referring to itself).
const maxParamDepth = 16

func collectRequired(prefix string, e ast.Expr, defs map[string]ast.Expr, depth int, add func(string)) {
	if depth > maxParamDepth {
		return
	}
	switch v := e.(type) {
	case *ast.ParenExpr:
		collectRequired(prefix, v.X, defs, depth+1, add)
	case *ast.Ident:
		if d, ok := defs[v.Name]; ok {
			collectRequired(prefix, d, defs, depth+1, add)
		}
	case *ast.StructLit:
		for _, el := range v.Elts {
			fd, ok := el.(*ast.Field)
			if !ok || fd.Constraint == token.OPTION {
				continue
			}
			name, isIdent, err := ast.LabelName(fd.Label)
			if err != nil || name == "" || isIdent && (strings.HasPrefix(name, "#") || strings.HasPrefix(name, "_")) {
				continue
			}
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			switch leaf := required(fd.Value, defs); leaf {
			case fieldStruct:
				collectRequired(path, unparen(fd.Value), defs, depth+1, add)
			case fieldLeaf:
				add(path)
			}
		}
	}
}

// The kinds of a parameter field's value, for the required rule.
const (
	fieldGiven  = iota // optional in effect: a default, a concrete value, or not known from the syntax
	fieldLeaf          // a required value
	fieldStruct        // a struct, walked into
)

func required(e ast.Expr, defs map[string]ast.Expr) int {
	switch v := unparen(e).(type) {
	case *ast.StructLit:
		return fieldStruct
	case *ast.Ident:
		switch v.Name {
		case "string", "int", "bool", "number", "float", "bytes", "uint":
			return fieldLeaf
		}
		if _, ok := defs[v.Name]; ok {
			return fieldStruct
		}
		return fieldGiven
	case *ast.ListLit:
		return fieldLeaf
	case *ast.UnaryExpr:
		if v.Op == token.MUL {
			return fieldGiven
		}
		return fieldLeaf
	case *ast.BinaryExpr:
		if hasDefault(v) {
			return fieldGiven
		}
		return fieldLeaf
	}
	return fieldGiven
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// hasDefault says a disjunction marks a default (*v).
func hasDefault(e ast.Expr) bool {
	switch v := unparen(e).(type) {
	case *ast.UnaryExpr:
		return v.Op == token.MUL
	case *ast.BinaryExpr:
		return v.Op == token.OR && (hasDefault(v.X) || hasDefault(v.Y)) ||
			v.Op == token.AND && (hasDefault(v.X) || hasDefault(v.Y))
	}
	return false
}

// suppliedParams are the parameter paths an Application gives every
// component, as KubeVela counts them: the parameterKey of every input (a
// component's, a workflow step's or sub-step's) and the properties every
// override policy sets. A component's own properties come on top.
func suppliedParams(app *v1beta1.Application) map[string]bool {
	out := map[string]bool{}
	for _, c := range app.Spec.Components {
		for _, in := range c.Inputs {
			out[in.ParameterKey] = true
		}
	}
	// A step's parameterKey is under its properties (apply-component:
	// properties.<path>); a component's is under the component's.
	step := func(in v1beta1.InputItem) {
		out[in.ParameterKey] = true
		if p, ok := strings.CutPrefix(in.ParameterKey, "properties."); ok {
			out[p] = true
		}
	}
	if wf := app.Spec.Workflow; wf != nil {
		for _, s := range wf.Steps {
			for _, in := range s.Inputs {
				step(in)
			}
			for _, sub := range s.SubSteps {
				for _, in := range sub.Inputs {
					step(in)
				}
			}
		}
	}
	for _, p := range app.Spec.Policies {
		if p.Type != "override" || p.Properties == nil {
			continue
		}
		var spec struct {
			Components []struct {
				Properties *runtime.RawExtension `json:"properties"`
			} `json:"components"`
		}
		if json.Unmarshal(p.Properties.Raw, &spec) != nil {
			continue
		}
		for _, c := range spec.Components {
			addProps(out, "", c.Properties)
		}
	}
	return out
}

// addProps adds every path of a properties object (a, a.b, a.b.c).
func addProps(out map[string]bool, prefix string, raw *runtime.RawExtension) {
	if raw == nil || len(raw.Raw) == 0 {
		return
	}
	var m map[string]any
	if json.Unmarshal(raw.Raw, &m) != nil {
		return
	}
	addPaths(out, prefix, m)
}

func addPaths(out map[string]bool, prefix string, m map[string]any) {
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if v == nil {
			continue
		}
		out[p] = true
		if sub, ok := v.(map[string]any); ok {
			addPaths(out, p, sub)
		}
	}
}

// missingParams refuses components that leave a required parameter of
// their definition unset, with KubeVela's message: `component "web":
// missing parameters: image,ports.port`.
func missingParams(app *v1beta1.Application, defs render.Definitions) field.ErrorList {
	var out field.ErrorList
	byType := map[string][]string{} // components of one type share their parse
	var shared map[string]bool
	for i, comp := range app.Spec.Components {
		def := defs.Components[comp.Type]
		if def == nil {
			continue
		}
		req, ok := byType[comp.Type]
		if !ok {
			if t, err := render.ComponentTemplate(def); err == nil && t.Text != "" {
				req = requiredParams(t.Text)
			}
			byType[comp.Type] = req
		}
		if len(req) == 0 {
			continue
		}
		if shared == nil {
			shared = suppliedParams(app)
		}
		own := map[string]bool{}
		addProps(own, "", comp.Properties)
		var missing []string
		for _, p := range req {
			if !own[p] && !shared[p] {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			out = append(out, invalid(field.NewPath("spec", "components").Index(i).Child("properties"),
				fmt.Sprintf("component %q: missing parameters: %s", comp.Name, strings.Join(missing, ","))))
		}
	}
	return out
}
