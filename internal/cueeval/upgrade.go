package cueeval

import (
	"strconv"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/ast/astutil"
	"cuelang.org/go/cue/token"
)

// upgradeSyntax rewrites what KubeVela's evaluator accepted and CUE v0.11
// and later reject, as KubeVela itself rewrites definitions before
// compiling them (its pkg/cue/upgrade, applied to templates and to the
// three status parts alike):
//
//   - list addition `a + b + c` becomes `list.Concat([a, b, c])`, and
//     list multiplication `a * n` (or `n * a`) becomes `list.Repeat(a, n)`,
//     importing "list" when the file does not;
//   - an unquoted field label `error` becomes `"error"` when the file also
//     calls CUE's `error` builtin, which the label would otherwise hide.
//
// CUE's syntax does not say which values are lists, so KubeVela guesses,
// and upgradeSyntax guesses the same way (see listNames): an operand is a
// list when it is a list literal, a call of the "list" package, or a name
// (`ports`, or `parameter.ports`) declared somewhere in the file with such
// a value. It also takes for list arithmetic what CUE would reject anyway
// (addChain, repeatOperands): a + chain holding a list literal, a list
// literal times any count but a string. Arithmetic on anything else is
// left alone, so numbers and strings add as before. It reports whether it
// changed f; the identifiers of a changed file are resolved again.
func upgradeSyntax(f *ast.File) bool {
	changed := upgradeListArithmetic(f)
	if upgradeErrorLabels(f) {
		changed = true
	}
	if changed {
		resolveAgain(f)
	}
	return changed
}

// upgradeListArithmetic rewrites list addition and multiplication. It
// works from the leaves up, so that `a + [x] * n` is a list addition once
// its right side is a list.Repeat.
func upgradeListArithmetic(f *ast.File) bool {
	lists := listNames(f)
	changed := false
	call := func(fn string, args ...ast.Expr) *ast.CallExpr {
		changed = true
		return &ast.CallExpr{
			Fun:  &ast.SelectorExpr{X: ast.NewIdent("list"), Sel: ast.NewIdent(fn)},
			Args: args,
		}
	}
	astutil.Apply(f, nil, func(c astutil.Cursor) bool {
		bin, ok := c.Node().(*ast.BinaryExpr)
		if !ok {
			return true
		}
		switch bin.Op {
		case token.ADD:
			// a + b + c is ((a + b) + c): one list.Concat for the chain.
			if operands := addChain(bin, lists); operands != nil {
				c.Replace(call("Concat", &ast.ListLit{Elts: operands}))
			}
		case token.MUL:
			if l, n := repeatOperands(bin, lists); l != nil {
				ast.SetRelPos(l, token.NoRelPos)
				ast.SetRelPos(n, token.NoRelPos)
				c.Replace(call("Repeat", l, n))
			}
		}
		return true
	})
	if changed {
		importList(f)
	}
	return changed
}

// addChain is the operands of a chain of + that adds lists, flattened
// (an operand that is a list.Concat([...]) call gives its elements); nil
// when the chain does not add lists. It adds lists when every operand is
// taken for a list, as KubeVela guesses, or when one of them certainly
// is one and none is a scalar literal: since CUE v0.11 a list operand
// makes + an error whatever the other side, so taking it for list addition
// breaks nothing that worked.
func addChain(bin *ast.BinaryExpr, lists listSet) []ast.Expr {
	var operands []ast.Expr
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
			walk(b.X)
			walk(b.Y)
			return
		}
		operands = append(operands, e)
	}
	walk(bin)
	allLists, certain, scalar := true, false, false
	for _, e := range operands {
		allLists = allLists && lists.isList(e)
		certain = certain || isCertainList(e)
		scalar = scalar || isScalarLiteral(e)
	}
	if !allLists && (!certain || scalar) {
		return nil
	}
	var out []ast.Expr
	for _, e := range operands {
		out = append(out, concatArgs(e)...)
	}
	return out
}

// repeatOperands is the list and the count of a list multiplication; nil
// when bin is not one. As KubeVela guesses, a list times a number literal
// or a name not taken for a list; and also a list literal (or list
// package call) times any count that is neither a list nor a string.
func repeatOperands(bin *ast.BinaryExpr, lists listSet) (l, n ast.Expr) {
	for _, p := range [][2]ast.Expr{{bin.X, bin.Y}, {bin.Y, bin.X}} {
		l, n := p[0], p[1]
		if lists.isList(l) && lists.isNumber(n) {
			return l, n
		}
		if isCertainList(l) && !lists.isList(n) && !isCertainList(n) && !isStringLiteral(n) {
			return l, n
		}
	}
	return nil, nil
}

// isCertainList reports whether an operand is a list whatever the names
// of the file: a list literal, or a call of a "list" function that
// returns a list.
func isCertainList(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ListLit:
		return true
	case *ast.ParenExpr:
		return isCertainList(x.X)
	}
	switch name, _ := listCall(e); name {
	case "Concat", "Repeat", "FlattenN", "Range", "Slice", "Take", "Drop", "Reverse", "Sort", "SortStable", "SortStrings":
		return true
	}
	return false
}

// isScalarLiteral reports whether an operand is a number, string, bool or
// null literal, or an interpolation: never a list.
func isScalarLiteral(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit, *ast.Interpolation:
		return true
	case *ast.UnaryExpr:
		return isScalarLiteral(x.X)
	case *ast.ParenExpr:
		return isScalarLiteral(x.X)
	}
	return false
}

// isStringLiteral reports whether an operand is a string: `"-" * 3`
// repeats a string, not a list.
func isStringLiteral(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING
	case *ast.Interpolation:
		return true
	}
	return false
}

// concatArgs is the elements of a list.Concat([...]) call, or e alone.
func concatArgs(e ast.Expr) []ast.Expr {
	if name, args := listCall(e); name == "Concat" && len(args) == 1 {
		if l, ok := args[0].(*ast.ListLit); ok {
			return l.Elts
		}
	}
	return []ast.Expr{e}
}

// listCall is the function name and arguments of a call `list.F(...)`.
func listCall(e ast.Expr) (string, []ast.Expr) {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return "", nil
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", nil
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "list" {
		return "", nil
	}
	name, _, _ := ast.LabelName(sel.Sel)
	return name, c.Args
}

// listSet is the names KubeVela's upgrade takes for lists: field names
// (`ports`) and field names qualified by the enclosing struct literals
// (`parameter.ports`).
type listSet map[string]bool

// listNames collects the names of fields declared with a list value
// anywhere in f, then, until nothing changes, those whose value is list
// arithmetic or a call of the "list" package over such names.
func listNames(f *ast.File) listSet {
	lists := listSet{}
	eachFieldOf(f, func(name string, x *ast.Field) {
		if isListValue(x.Value) {
			lists[name] = true
		} else if s, ok := x.Value.(*ast.StructLit); ok {
			lists.nested(s, name, isListValue)
		}
	})
	for changed := true; changed; {
		changed = false
		eachFieldOf(f, func(name string, x *ast.Field) {
			if !lists[name] && lists.isListResult(x.Value) {
				lists[name], changed = true, true
			} else if s, ok := x.Value.(*ast.StructLit); ok {
				if lists.nested(s, name, func(e ast.Expr) bool { return lists.isListResult(e) }) {
					changed = true
				}
			}
		})
	}
	return lists
}

// nested adds the fields of s, and of struct literals within, that match
// is, both by name and qualified by prefix; it reports whether it added
// one.
func (lists listSet) nested(s *ast.StructLit, prefix string, is func(ast.Expr) bool) bool {
	added := false
	for _, d := range s.Elts {
		x, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		id, ok := x.Label.(*ast.Ident)
		if !ok {
			continue
		}
		q := prefix + "." + id.Name
		if !lists[q] && is(x.Value) {
			lists[q], lists[id.Name] = true, true
			added = true
		} else if inner, ok := x.Value.(*ast.StructLit); ok && lists.nested(inner, q, is) {
			added = true
		}
	}
	return added
}

// eachFieldOf calls fn for every field of f with an identifier label.
func eachFieldOf(f *ast.File, fn func(name string, x *ast.Field)) {
	ast.Walk(f, func(n ast.Node) bool {
		if x, ok := n.(*ast.Field); ok {
			if id, ok := x.Label.(*ast.Ident); ok {
				fn(id.Name, x)
			}
		}
		return true
	}, nil)
}

// isListValue reports whether a field's value declares a list: a list
// literal, a comprehension, a call of the "list" package, or a
// disjunction or default with such a side (`*[] | [...string]`).
func isListValue(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ListLit, *ast.Comprehension, *ast.Ellipsis:
		return true
	case *ast.CallExpr:
		name, _ := listCall(x)
		return name != ""
	case *ast.BinaryExpr:
		return x.Op == token.OR && (isListValue(x.X) || isListValue(x.Y))
	case *ast.UnaryExpr:
		return isListValue(x.X)
	}
	return false
}

// isList reports whether an operand is taken for a list.
func (lists listSet) isList(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ListLit:
		return true
	case *ast.CallExpr:
		name, _ := listCall(x)
		return name != ""
	case *ast.Ident:
		return lists[x.Name]
	case *ast.SelectorExpr:
		name, ok := dottedName(x)
		return ok && lists[name]
	}
	return false
}

// dottedName is `a.b.c` for a selector of identifiers.
func dottedName(e ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name, true
	case *ast.SelectorExpr:
		base, ok := dottedName(x.X)
		sel, ok2 := x.Sel.(*ast.Ident)
		if !ok || !ok2 {
			return "", false
		}
		return base + "." + sel.Name, true
	}
	return "", false
}

// isNumber reports whether an operand may be a count: a number literal,
// or a name not taken for a list.
func (lists listSet) isNumber(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.INT || x.Kind == token.FLOAT
	case *ast.Ident:
		return !lists[x.Name]
	case *ast.UnaryExpr:
		return lists.isNumber(x.X)
	}
	return false
}

// isListResult reports whether a value is list arithmetic or a
// list.Concat or list.Repeat call.
func (lists listSet) isListResult(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BinaryExpr:
		switch x.Op {
		case token.ADD:
			return lists.isList(x.X) && lists.isList(x.Y)
		case token.MUL:
			return (lists.isList(x.X) && lists.isNumber(x.Y)) || (lists.isNumber(x.X) && lists.isList(x.Y))
		}
	case *ast.CallExpr:
		name, _ := listCall(x)
		return name == "Concat" || name == "Repeat"
	}
	return false
}

// importList makes `list` name the "list" package: the file's own import
// when it has one, else a new `import "list"` after the package clause and
// the other imports.
func importList(f *ast.File) {
	for spec := range f.ImportSpecs() {
		if p, err := strconv.Unquote(spec.Path.Value); err == nil && p == "list" && spec.Name == nil {
			return
		}
	}
	at := len(f.Preamble())
	decls := make([]ast.Decl, 0, len(f.Decls)+1)
	decls = append(decls, f.Decls[:at]...)
	decls = append(decls, &ast.ImportDecl{Specs: []*ast.ImportSpec{{Path: ast.NewString("list")}}})
	f.Decls = append(decls, f.Decls[at:]...)
}

// upgradeErrorLabels quotes unquoted `error` field labels when the file
// calls the `error` builtin (CUE v0.14), which such a label in scope
// hides. KubeVela quotes them whether or not the builtin is called; in a
// file that does not call it, quoting changes nothing but what a bare
// `error` refers to (the field, before), so Steward leaves those alone.
func upgradeErrorLabels(f *ast.File) bool {
	calls := false
	ast.Walk(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "error" {
				calls = true
			}
		}
		return !calls
	}, nil)
	if !calls {
		return false
	}
	changed := false
	ast.Walk(f, func(n ast.Node) bool {
		if x, ok := n.(*ast.Field); ok {
			if id, ok := x.Label.(*ast.Ident); ok && id.Name == "error" {
				lit := ast.NewString("error")
				ast.SetPos(lit, id.Pos())
				x.Label = lit
				changed = true
			}
		}
		return true
	}, nil)
	return changed
}

// resolveAgain resolves every identifier of f anew, as the parser did,
// so that the names a rewrite added or freed refer where they should.
func resolveAgain(f *ast.File) {
	ast.Walk(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			id.Node, id.Scope = nil, nil
		}
		return true
	}, nil)
	f.Unresolved = nil
	astutil.Resolve(f, func(token.Pos, string, ...any) {})
}
