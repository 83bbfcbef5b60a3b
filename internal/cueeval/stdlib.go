package cueeval

import (
	"embed"
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/ast/astutil"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
)

// KubeVela's workflow packages a step template may import, as CUE
// definitions of their actions (stdlib/<name>.cue). A template's
// `import "vela/kube"` is replaced by a hidden field holding the package,
// so that `kube.#Apply` reads the action's shape: there is no module to
// load, and nothing outside the template and these files is read.
//
//go:embed stdlib/*.cue
var stdlibFS embed.FS

// stdlibPackages are the packages Steward provides, by import path.
var stdlibPackages = map[string]string{
	"vela/kube":    "kube",
	"vela/http":    "http",
	"vela/builtin": "builtin",
	"vela/util":    "util",
	"vela/config":  "config",
	"vela/email":   "email",
	"vela/op":      "op",
	"vela/helm":    "helm",
}

// stdlibField is the hidden field a package is held in.
func stdlibField(name string) string { return "_vela_" + name }

// stdlibText is every package as hidden fields; vela/op refers to the
// others.
var stdlibText = func() string {
	var b strings.Builder
	for _, name := range []string{"kube", "http", "builtin", "util", "config", "email", "op", "helm"} {
		src, err := stdlibFS.ReadFile("stdlib/" + name + ".cue")
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "\n%s: {\n%s\n}\n", stdlibField(name), src)
	}
	return b.String()
}()

// UnknownPackageError is a step template importing a KubeVela package
// Steward does not provide (vela/query, vela/metrics, vela/multicluster).
type UnknownPackageError struct{ Path string }

func (e *UnknownPackageError) Error() string {
	return fmt.Sprintf("imports %q, a KubeVela package Steward does not provide (it provides %s)", e.Path, providedPackages())
}

func providedPackages() string {
	var out []string
	for _, p := range []string{"vela/kube", "vela/http", "vela/builtin", "vela/op", "vela/config", "vela/util", "vela/email", "vela/helm"} {
		out = append(out, strconv.Quote(p))
	}
	return strings.Join(out, ", ")
}

// withStdlib rewrites a step template so that its vela/* imports read the
// packages above: each reference to an imported package becomes a
// reference to the package's hidden field, and the import goes.
func withStdlib(src string) (string, error) {
	f, err := parser.ParseFile("template", src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	// Which import names stand for which vela package.
	names := map[*ast.ImportSpec]string{}
	var unknown error
	for spec := range f.ImportSpecs() {
		p, _ := strconv.Unquote(spec.Path.Value)
		if !strings.HasPrefix(p, "vela/") {
			continue
		}
		pkg, ok := stdlibPackages[p]
		if !ok {
			if unknown == nil {
				unknown = &UnknownPackageError{Path: p}
			}
			continue
		}
		names[spec] = pkg
	}
	if unknown != nil {
		return "", unknown
	}
	if len(names) == 0 {
		return src, nil
	}
	// References to an import resolve to its spec.
	astutil.Apply(f, func(c astutil.Cursor) bool {
		id, ok := c.Node().(*ast.Ident)
		if !ok {
			return true
		}
		if spec, ok := id.Node.(*ast.ImportSpec); ok {
			if pkg, ok := names[spec]; ok {
				c.Replace(ast.NewIdent(stdlibField(pkg)))
			}
		}
		return true
	}, nil)
	// Drop the vela imports (an import declaration left empty goes too).
	var decls []ast.Decl
	for _, d := range f.Decls {
		imp, ok := d.(*ast.ImportDecl)
		if !ok {
			decls = append(decls, d)
			continue
		}
		var specs []*ast.ImportSpec
		for _, s := range imp.Specs {
			if _, ok := names[s]; !ok {
				specs = append(specs, s)
			}
		}
		if len(specs) == 0 {
			continue
		}
		imp.Specs = specs
		decls = append(decls, imp)
	}
	f.Decls = decls
	out, err := format.Node(f)
	if err != nil {
		return "", err
	}
	return string(out) + stdlibText, nil
}

// declaredActions returns the paths of the fields of a rewritten step
// template whose value refers to a definition of a vela package
// (`_vela_kube.#Apply & {...}`), fields in comprehensions included (they
// exist only when their condition holds). Lists and patterns are not
// followed.
func declaredActions(src string) []cue.Path {
	f, err := parser.ParseFile("template", src)
	if err != nil {
		return nil
	}
	var out []cue.Path
	var walk func(decls []ast.Decl, prefix []cue.Selector)
	walk = func(decls []ast.Decl, prefix []cue.Selector) {
		for _, d := range decls {
			switch x := d.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(x.Label)
				if err != nil || strings.HasPrefix(name, "_vela_") {
					continue
				}
				sel := cue.Str(name)
				if strings.HasPrefix(name, "#") {
					continue
				}
				path := append(append([]cue.Selector{}, prefix...), sel)
				if refersToPackage(x.Value) {
					out = append(out, cue.MakePath(path...))
				}
				if st, ok := x.Value.(*ast.StructLit); ok {
					walk(st.Elts, path)
				}
				if be, ok := x.Value.(*ast.BinaryExpr); ok {
					for _, side := range []ast.Expr{be.X, be.Y} {
						if st, ok := side.(*ast.StructLit); ok {
							walk(st.Elts, path)
						}
					}
				}
			case *ast.Comprehension:
				if st, ok := x.Value.(*ast.StructLit); ok {
					walk(st.Elts, prefix)
				}
			case *ast.EmbedDecl:
				if st, ok := x.Expr.(*ast.StructLit); ok {
					walk(st.Elts, prefix)
				}
			}
		}
	}
	walk(f.Decls, nil)
	return out
}

// refersToPackage reports whether an expression's top level refers to a
// definition of a vela package: `_vela_kube.#Apply`, possibly unified.
func refersToPackage(x ast.Expr) bool {
	switch e := x.(type) {
	case *ast.SelectorExpr:
		// #Steps groups actions; it is not one.
		id, ok := e.X.(*ast.Ident)
		label, _, _ := ast.LabelName(e.Sel)
		return ok && strings.HasPrefix(id.Name, "_vela_") && label != "#Steps"
	case *ast.BinaryExpr:
		return refersToPackage(e.X) || refersToPackage(e.Y)
	case *ast.ParenExpr:
		return refersToPackage(e.X)
	}
	return false
}
