package cueeval

import (
	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"
)

// expressions evaluates each expression of in in its scope: to a
// boolean (asBool), or to concrete JSON.
func expressions(in *Expressions, asBool bool) ([]ExprResult, error) {
	ctx := cuecontext.New()
	scope := []byte(in.Scope)
	if len(scope) == 0 {
		scope = []byte("{}")
	}
	expr, err := parser.ParseExpr("scope", scope)
	if err != nil {
		return nil, err
	}
	root := ctx.BuildExpr(expr)
	if err := root.Err(); err != nil {
		return nil, err
	}
	out := make([]ExprResult, len(in.Exprs))
	for i, e := range in.Exprs {
		v := ctx.CompileString(e, cue.Scope(root))
		if asBool {
			out[i] = boolResult(v)
			continue
		}
		out[i] = valueResult(v)
	}
	return out, nil
}

func boolResult(v cue.Value) ExprResult {
	if err := v.Err(); err != nil {
		return ExprResult{Err: err.Error()}
	}
	b, err := v.Bool()
	if err != nil {
		return ExprResult{Err: err.Error()}
	}
	return ExprResult{Bool: b}
}

func valueResult(v cue.Value) ExprResult {
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return ExprResult{Err: err.Error()}
	}
	raw, err := v.MarshalJSON()
	if err != nil {
		return ExprResult{Err: err.Error()}
	}
	return ExprResult{Value: raw}
}
