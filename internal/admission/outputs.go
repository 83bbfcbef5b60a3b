package admission

import (
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// outputKind is an object a template's output or outputs names with a
// literal apiVersion and kind.
type outputKind struct {
	// Where is the output: "output", or "outputs.<name>".
	Where            string
	APIVersion, Kind string
}

// outputKinds reads, without evaluating the template, the objects its
// `output` and `outputs` fields name with literal apiVersion and kind, at
// any depth, as KubeVela's webhook does (pkg/webhook/utils,
// ExtractResourceInfo). An apiVersion set in a comprehension (`if
// context.clusterVersion.minor < 25 {apiVersion: ...}`) is not literal and
// not read: which branch renders depends on the cluster and the
// Application. A template that does not parse has none (the compile check
// reports it).
func outputKinds(tmpl string) []outputKind {
	f, err := parser.ParseFile("template", tmpl)
	if err != nil {
		return nil
	}
	var out []outputKind
	ast.Walk(f, func(n ast.Node) bool {
		fd, ok := n.(*ast.Field)
		if !ok {
			return true
		}
		switch labelOf(fd.Label) {
		case "output":
			if k, ok := literalKind(fd.Value); ok {
				k.Where = "output"
				out = append(out, k)
			}
		case "outputs":
			s, ok := fd.Value.(*ast.StructLit)
			if !ok {
				return true
			}
			for _, e := range s.Elts {
				if of, ok := e.(*ast.Field); ok {
					if k, ok := literalKind(of.Value); ok {
						k.Where = "outputs." + labelOf(of.Label)
						out = append(out, k)
					}
				}
			}
		}
		return true
	}, nil)
	return out
}

// labelOf is a field's name; empty for a computed one ((name): ...).
func labelOf(l ast.Label) string {
	name, _, err := ast.LabelName(l)
	if err != nil {
		return ""
	}
	return name
}

// literalKind reads a struct's apiVersion and kind when both are string
// literals.
func literalKind(e ast.Expr) (outputKind, bool) {
	s, ok := e.(*ast.StructLit)
	if !ok {
		return outputKind{}, false
	}
	var k outputKind
	for _, e := range s.Elts {
		fd, ok := e.(*ast.Field)
		if !ok {
			continue
		}
		lit, ok := fd.Value.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			continue
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			v = strings.Trim(lit.Value, `"`)
		}
		switch labelOf(fd.Label) {
		case "apiVersion":
			k.APIVersion = v
		case "kind":
			k.Kind = v
		}
	}
	return k, k.APIVersion != "" && k.Kind != ""
}

// checkOutputs refuses a definition whose template outputs a kind the
// cluster does not have, or names a malformed apiVersion, as KubeVela's
// webhook does (its ValidateResourcesExist gate), with KubeVela's message
// ("resource type not found on cluster: <apiVersion>/<kind>"). A kind the
// cluster serves at another version only (networking.k8s.io/v1beta1
// Ingress, removed in Kubernetes 1.22, in vela-core's own `ingress`
// trait) is admitted with a warning: a GitOps pipeline applying
// KubeVela's definition set must not break on it, and only an Application
// that renders it fails. Addon definitions are not checked (their CRDs
// come with them); nor is anything when the cluster cannot be asked.
func (c *Checker) checkOutputs(kind, name, tmpl string, path *field.Path, addon bool, res *Result) {
	if c.Mapper == nil || tmpl == "" || addon {
		return
	}
	for _, o := range outputKinds(tmpl) {
		ref := o.APIVersion + "/" + o.Kind
		_, refused, unknown := kindOnCluster(c.Mapper, o.APIVersion, o.Kind)
		switch {
		case unknown != nil:
			res.warn("%s: %s not checked: %v", o.Where, ref, unknown)
		case refused == nil:
		case strings.HasPrefix(refused.Error(), "malformed"):
			res.Errors = append(res.Errors, invalid(path, fmt.Sprintf("%s %q: %s: %v", kind, name, o.Where, refused)))
		default:
			gv, _ := schema.ParseGroupVersion(o.APIVersion)
			if m, err := c.Mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: o.Kind}); err == nil {
				res.warn("%s %q: %s: %s is not served by this cluster (it serves %s %s): an Application that renders it fails to apply it",
					kind, name, o.Where, ref, m.GroupVersionKind.GroupVersion(), o.Kind)
				continue
			}
			res.Errors = append(res.Errors, invalid(path, fmt.Sprintf("%s %q: %s: resource type not found on cluster: %s (%v)", kind, name, o.Where, ref, refused)))
		}
	}
}
