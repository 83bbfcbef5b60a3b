package cueeval

import (
	"errors"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	"k8s.io/utils/lru"
)

// contextDecl declares `context` so that templates referring to it compile
// before the renderer fills it.
const contextDecl = "\ncontext: _\n"

// statusDecl declares the two fields a status template reads and the
// renderer fills.
const statusDecl = "\ncontext: _\nparameter: _\n"

// compiled is one source compiled into its own CUE context. CUE values
// are not safe for concurrent evaluation, so every use of value holds mu;
// different sources evaluate in parallel.
type compiled struct {
	mu      sync.Mutex
	ctx     *cue.Context
	value   cue.Value
	version string
	err     error
	// actions, for a step template, are the paths of the fields it
	// declares from a vela package's definition (`kube.#Apply & {...}`):
	// each must evaluate to an action when it exists.
	actions []cue.Path
	// usesActions says a definition template imports a vela package: its
	// provider actions are found and filled before it renders.
	usesActions bool
}

// DefaultCacheSize bounds the compiled sources a Local keeps: a template
// and up to three status parts per definition revision in use. Past it,
// the least recently used is dropped and compiled again when next needed.
const DefaultCacheSize = 1024

// Local evaluates in this process, with no bound on time or memory: the
// evaluator of the sandbox's child processes, and of pure unit tests.
// It is safe for concurrent use.
type Local struct {
	cache *lru.Cache
}

// NewLocal returns a Local whose compile cache holds up to size sources
// (DefaultCacheSize when size is 0 or less).
func NewLocal(size int) *Local {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &Local{cache: lru.New(size)}
}

// Purge drops every compiled source, as when the memory they hold is
// needed more than the time to compile them again.
func (l *Local) Purge() { l.cache.Clear() }

// Forget drops the compiled parts of a definition that no longer exists.
func (l *Local) Forget(kind, namespace, name string) {
	for _, part := range []string{PartTemplate, PartHealthPolicy, PartCustomStatus, PartDetails} {
		l.cache.Remove(Source{Kind: kind, Namespace: namespace, Name: name, Part: part}.key())
	}
}

// Len is the number of compiled sources held.
func (l *Local) Len() int { return l.cache.Len() }

// has reports whether src's version is compiled.
func (l *Local) has(src Source) bool {
	v, ok := l.cache.Get(src.key())
	return ok && v.(*compiled).version == src.Version
}

// compile returns src compiled, from the cache when its version was
// compiled before; hit says which.
func (l *Local) compile(src Source) (c *compiled, hit bool) {
	build := compileTemplate
	switch {
	case src.Part != PartTemplate:
		build = compileStatus
	case src.Kind == KindStep:
		build = compileStep
	}
	if src.Version == "" {
		return build(src.Text), false
	}
	key := src.key()
	if v, ok := l.cache.Get(key); ok {
		if c := v.(*compiled); c.version == src.Version {
			return c, true
		}
	}
	c = build(src.Text)
	c.version = src.Version
	l.cache.Add(key, c)
	return c, false
}

// compileTemplate compiles a definition template into a fresh CUE context.
// A template that imports a vela package (vela/helm) reads it as a step
// template does, and its actions are carried out before it renders
// (actions.go).
func compileTemplate(src string) *compiled {
	text, err := withStdlib(src)
	var unknown *UnknownPackageError
	if errors.As(err, &unknown) {
		return &compiled{err: err}
	}
	if err != nil {
		// A syntax error: compiled as it is, for its position.
		text = src
	}
	// Like a step template, it reads results that exist only once its
	// actions ran: it is not checked before.
	uses := text != src
	c := compileSource(text+contextDecl, !uses)
	c.usesActions = uses
	return c
}

// compileStatus compiles one status part.
func compileStatus(src string) *compiled { return compileSource(src+statusDecl, false) }

// compileSource compiles src, which declares everything it refers to, into
// a fresh CUE context. validate also checks the value before any data is
// filled in. Definition templates pass that check; status templates, whose
// top-level comprehensions read context, fail it until context is filled
// (FillPath re-evaluates, so the error does not stick), and their errors
// surface when they are evaluated.
func compileSource(src string, validate bool) *compiled {
	ctx := cuecontext.New()
	c := &compiled{ctx: ctx}
	f, err := parser.ParseFile("template", src, parser.ParseComments)
	if err != nil {
		c.err = flattenCUE(err, "", true)
		return c
	}
	upgradeSyntax(f)
	guardComprehensions(f)
	v := ctx.BuildFile(f)
	c.value = v
	if !validate {
		return c
	}
	if err := withoutIncomplete(v.Err()); err != nil {
		c.err = flattenCUE(err, "", true)
		return c
	}
	if err := withoutIncomplete(v.Validate()); err != nil {
		c.err = flattenCUE(err, "", true)
	}
	return c
}

// guardComprehensions makes every `for x in E` skip when E does not exist,
// as KubeVela's CUE evaluator did: its definitions iterate over optional
// parameters (`for v in parameter.pvc`) that CUE v0.17 would reject with
// "cannot reference optional field". Each for clause gets a preceding
// `if E != _|_` clause.
func guardComprehensions(f *ast.File) {
	var comps []*ast.Comprehension
	ast.Walk(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.Comprehension); ok {
			comps = append(comps, c)
		}
		return true
	}, nil)
	for _, c := range comps {
		clauses := make([]ast.Clause, 0, 2*len(c.Clauses))
		for _, cl := range c.Clauses {
			if fc, ok := cl.(*ast.ForClause); ok {
				clauses = append(clauses, &ast.IfClause{
					Condition: &ast.BinaryExpr{X: fc.Source, Op: token.NEQ, Y: &ast.BottomLit{}},
				})
			}
			clauses = append(clauses, cl)
		}
		c.Clauses = clauses
	}
}

// withoutIncomplete drops the errors that only say a value is not known
// yet: before properties are filled in, a template may well compare or
// loop over parameters (`if parameter.replicas > 1`), and KubeVela accepts
// such definitions. Real errors (syntax, conflicts, bad references) stay.
func withoutIncomplete(err error) error {
	if err == nil {
		return nil
	}
	var kept cueerrors.Error
	for _, e := range cueerrors.Errors(err) {
		msg := e.Error()
		if strings.Contains(msg, "non-concrete value") || strings.Contains(msg, "incomplete value") {
			continue
		}
		kept = cueerrors.Append(kept, e)
	}
	if kept == nil {
		return nil
	}
	return kept
}

// source compiles JSON source into the compiled source's CUE context as
// an expression. Unlike CompileBytes, BuildExpr registers nothing with
// the context's runtime, so the value is garbage once the evaluation
// ends: this is what keeps a long-lived compiled template from growing
// with every render and health check.
func (c *compiled) source(b []byte) (cue.Value, error) {
	if len(b) == 0 {
		b = []byte("{}")
	}
	expr, err := parser.ParseExpr("data", b)
	if err != nil {
		return cue.Value{}, err
	}
	v := c.ctx.BuildExpr(expr)
	return v, v.Err()
}
