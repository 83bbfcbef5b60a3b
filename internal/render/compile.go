package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// cacheKey is a definition's identity. The entry for an identity is
// replaced when its resourceVersion or template changes, so the cache holds
// at most one compiled template per definition.
type cacheKey struct {
	kind, namespace, name string
	uid                   types.UID
}

// Renderer renders Applications. It is safe for concurrent use and keeps
// every definition compiled once, keyed by identity, resourceVersion and
// template hash.
type Renderer struct {
	mu    sync.Mutex
	cache map[cacheKey]*compiled
	// noCache compiles every template on every use (benchmarks).
	noCache bool
}

// NewRenderer returns a Renderer with an empty compile cache.
func NewRenderer() *Renderer {
	return &Renderer{cache: map[cacheKey]*compiled{}}
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

// compileTemplate compiles src into a fresh CUE context.
func compileTemplate(src string) *compiled {
	ctx := cuecontext.New()
	c := &compiled{ctx: ctx}
	f, err := parser.ParseFile("template", src+contextDecl, parser.ParseComments)
	if err != nil {
		c.err = flattenCUE(err, "", true)
		return c
	}
	guardComprehensions(f)
	v := ctx.BuildFile(f)
	c.value = v
	if err := v.Err(); err != nil {
		c.err = flattenCUE(err, "", true)
		return c
	}
	if err := v.Validate(); err != nil {
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
	if r.noCache {
		return compileTemplate(src)
	}
	sum := sha256.Sum256([]byte(src))
	version := meta.ResourceVersion + "/" + hex.EncodeToString(sum[:8])
	key := cacheKey{kind: kind, namespace: meta.Namespace, name: meta.Name, uid: meta.UID}

	r.mu.Lock()
	c, ok := r.cache[key]
	r.mu.Unlock()
	if ok && c.version == version {
		return c
	}
	c = compileTemplate(src)
	c.version = version
	r.mu.Lock()
	r.cache[key] = c
	r.mu.Unlock()
	return c
}
