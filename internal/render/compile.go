package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/lru"
)

// Definition kinds, as used in cache keys and CheckTemplate.
const (
	KindComponent = "ComponentDefinition"
	KindTrait     = "TraitDefinition"
	KindPolicy    = "PolicyDefinition"
)

// contextDecl declares `context` so that templates referring to it compile
// before the renderer fills it.
const contextDecl = "\ncontext: _\n"

// compiled is one definition's template compiled into its own CUE context.
// CUE values are not safe for concurrent evaluation, so every use of value
// holds mu; different definitions render in parallel.
type compiled struct {
	mu      sync.Mutex
	ctx     *cue.Context
	value   cue.Value
	version string
	err     error
}

// cacheKey is a definition's name plus the part of it compiled: "" for
// the template, or one of the status fields (status.go). The entry for a
// key is replaced when the definition's UID, resourceVersion or source
// changes, so the cache holds at most one compiled template per definition
// part.
type cacheKey struct {
	kind, namespace, name string
	part                  string
}

// DefaultCacheSize bounds the compiled definition parts a Renderer keeps:
// a template and up to three status templates per definition revision in
// use. Past it, the least recently used part is dropped and compiled again
// when next needed.
const DefaultCacheSize = 1024

// Renderer renders Applications. It is safe for concurrent use and keeps
// each definition revision compiled once, keyed by name and checked
// against UID, resourceVersion and template hash, in an LRU cache of
// bounded size.
//
// Memory stays bounded by the definitions in use, not by the number of
// evaluations: every evaluation compiles its data (context, parameter,
// live objects) with BuildExpr, which the CUE runtime does not index,
// and exports plain Go data, so nothing of it stays reachable once it
// returns. CompileBytes would register each compiled document with the
// context's runtime for the runtime's lifetime.
type Renderer struct {
	cache *lru.Cache
	// noCache compiles every template on every use (benchmarks).
	noCache bool
	// observe is told about every cache lookup; nil when nobody listens.
	observe CacheObserver
}

// CacheObserver is told whether each lookup of a compiled template hit the
// cache. kind is KindComponent, KindTrait or KindPolicy. It is called on
// the rendering goroutine and must be cheap and safe for concurrent use,
// as a Prometheus counter is.
type CacheObserver func(kind string, hit bool)

// Option configures a Renderer.
type Option func(*Renderer)

// WithCacheSize bounds the compiled definition parts kept (default
// DefaultCacheSize).
func WithCacheSize(n int) Option {
	return func(r *Renderer) { r.cache = lru.New(max(n, 1)) }
}

// WithCacheObserver reports every compile-cache lookup to fn, so that the
// controller can export hit and miss counts as metrics without render
// depending on a metrics library.
func WithCacheObserver(fn CacheObserver) Option {
	return func(r *Renderer) { r.observe = fn }
}

// NewRenderer returns a Renderer with an empty compile cache.
func NewRenderer(opts ...Option) *Renderer {
	r := &Renderer{cache: lru.New(DefaultCacheSize)}
	for _, o := range opts {
		o(r)
	}
	return r
}

// CheckTemplate compiles a definition's template alone and returns the CUE
// error with its position, so the controller can report a definition that
// will never render. kind is KindComponent, KindTrait or KindPolicy.
func (r *Renderer) CheckTemplate(kind, name, template string) error {
	c := compileTemplate(template)
	if c.err != nil {
		return fmt.Errorf("%s %q: %w", kind, name, c.err)
	}
	return nil
}

// compileTemplate compiles a definition template into a fresh CUE context.
func compileTemplate(src string) *compiled {
	return compileSource(src+contextDecl, true)
}

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

// template returns the compiled template of a definition, compiling it on
// first use or when the definition changed.
func (r *Renderer) template(kind string, meta *metav1.ObjectMeta, src string) *compiled {
	return r.cached(kind, "", meta, src, compileTemplate)
}

// cached returns one compiled part of a definition from the cache,
// compiling src with compile on a miss.
func (r *Renderer) cached(kind, part string, meta *metav1.ObjectMeta, src string, compile func(string) *compiled) *compiled {
	if r.noCache {
		return compile(src)
	}
	sum := sha256.Sum256([]byte(src))
	version := string(meta.UID) + "/" + meta.ResourceVersion + "/" + hex.EncodeToString(sum[:8])
	key := cacheKey{kind: kind, namespace: meta.Namespace, name: meta.Name, part: part}

	v, ok := r.cache.Get(key)
	c, _ := v.(*compiled)
	hit := ok && c.version == version
	if r.observe != nil {
		r.observe(kind, hit)
	}
	if hit {
		return c
	}
	c = compile(src)
	c.version = version
	r.cache.Add(key, c)
	return c
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

// Forget drops the compiled parts of a definition that no longer exists,
// so that deleted or re-created definitions do not accumulate.
func (r *Renderer) Forget(kind, namespace, name string) {
	for _, part := range []string{"", partHealthPolicy, partCustomStatus, partDetails} {
		r.cache.Remove(cacheKey{kind: kind, namespace: namespace, name: name, part: part})
	}
}

// CachedParts is the number of compiled definition parts held.
func (r *Renderer) CachedParts() int { return r.cache.Len() }
