package render

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/lru"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// Definition kinds, as used in cache keys and CheckTemplate.
const (
	KindComponent = cueeval.KindComponent
	KindTrait     = cueeval.KindTrait
	KindPolicy    = cueeval.KindPolicy
)

// Renderer renders Applications. It is safe for concurrent use.
//
// Every CUE evaluation goes through its Evaluator: in the controller and
// the CLI a sandbox.Pool, which evaluates in child processes bounded in
// time and memory, so that no definition can take the process down. The
// evaluator keeps each definition revision compiled once, keyed by name
// and checked against UID, resourceVersion and template hash.
type Renderer struct {
	ev cueeval.Evaluator
	// checked remembers what checking a template's text found, by kind
	// and hash of the text: a fleet's definitions share their templates
	// (every namespace installs the same ones), and each is checked again
	// whenever its definition changes.
	checked *lru.Cache
	// noCache compiles every template on every use (benchmarks).
	noCache bool
	// observe is told about every cache lookup; nil when nobody listens.
	observe CacheObserver
	limits  Limits
}

// Limits bound what one render may produce; zero fields are unbounded.
// The sandbox bounds each evaluation's time and memory; these bound the
// objects all evaluations of an Application add up to, so that what is
// recorded and applied stays within what a tracker and the API server
// hold.
type Limits struct {
	// Objects is the most objects one Application may render, all its
	// components and clusters together.
	Objects int
	// ObjectBytes is the largest one object may be, as JSON.
	ObjectBytes int
	// TotalBytes is the most all objects of one render may add up to.
	TotalBytes int
	// Time bounds all evaluations of one version together: many
	// evaluations each under the evaluator's timeout must not hold a
	// reconcile for their sum.
	Time time.Duration
	// Flags name the flags that set each limit, for messages.
	ObjectsFlag, ObjectBytesFlag, TotalBytesFlag, TimeFlag string
}

// CacheObserver is told whether each lookup of a compiled template hit the
// cache. kind is KindComponent, KindTrait or KindPolicy. It is called on
// the rendering goroutine and must be cheap and safe for concurrent use,
// as a Prometheus counter is.
type CacheObserver func(kind string, hit bool)

// Option configures a Renderer.
type Option func(*Renderer)

// WithEvaluator evaluates CUE with ev (a sandbox.Pool in the controller
// and the CLI) instead of in this process.
func WithEvaluator(ev cueeval.Evaluator) Option {
	return func(r *Renderer) { r.ev = ev }
}

// WithCacheObserver reports every compile-cache lookup to fn, so that the
// controller can export hit and miss counts as metrics without render
// depending on a metrics library.
func WithCacheObserver(fn CacheObserver) Option {
	return func(r *Renderer) { r.observe = fn }
}

// WithLimits bounds what one render may produce.
func WithLimits(l Limits) Option {
	return func(r *Renderer) { r.limits = l }
}

// NewRenderer returns a Renderer. Without WithEvaluator it evaluates in
// this process, unbounded: fine for tests and trusted definitions only.
func NewRenderer(opts ...Option) *Renderer {
	r := &Renderer{checked: lru.New(checkedSize)}
	for _, o := range opts {
		o(r)
	}
	if r.ev == nil {
		r.ev = cueeval.NewLocal(0)
	}
	return r
}

// Evaluator is what the Renderer evaluates CUE with, for the other CUE a
// caller evaluates (workflow conditions and outputs) to share its budget.
func (r *Renderer) Evaluator() cueeval.Evaluator { return r.ev }

// Limits returns the render limits the Renderer applies.
func (r *Renderer) Limits() Limits { return r.limits }

// evaluate runs one request, reporting its cache lookups. Its error is an
// *Error naming src.
func (r *Renderer) evaluate(req *cueeval.Request, src cueeval.Source) (*cueeval.Response, *Error) {
	res, err := r.ev.Evaluate(req)
	if res != nil && r.observe != nil {
		for _, c := range res.Cache {
			r.observe(c.Kind, c.Hit)
		}
	}
	if err != nil {
		return nil, evaluationError(err, src)
	}
	return res, nil
}

// evaluationError turns an evaluator's error into an *Error: its own
// reason and path when the source or input is at fault, reason
// EvaluationBudgetExceeded naming the definition when a limit stopped it.
func evaluationError(err error, src cueeval.Source) *Error {
	var ee *cueeval.Error
	if errors.As(err, &ee) {
		return &Error{Reason: ee.Reason, Path: ee.Path, Err: ee}
	}
	var be *cueeval.BudgetError
	if errors.As(err, &be) {
		return &Error{Reason: v1beta1.ReasonEvaluationBudgetExceeded, Definition: src.Name,
			Err: fmt.Errorf("evaluating %s: %w", src.Describe(), be)}
	}
	// An evaluator that is not available (errors.Is cueeval.ErrUnavailable)
	// says nothing of the definition; the caller tries again.
	return &Error{Reason: v1beta1.ReasonRenderFailed, Definition: src.Name,
		Err: fmt.Errorf("evaluating %s: %w", src.Describe(), err)}
}

// source is one part of a definition as the evaluator takes it.
func (r *Renderer) source(kind, part string, meta *metav1.ObjectMeta, text string) cueeval.Source {
	src := cueeval.Source{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, Part: part, Text: text}
	if !r.noCache {
		sum := sha256.Sum256([]byte(text))
		src.Version = string(meta.UID) + "/" + meta.ResourceVersion + "/" + hex.EncodeToString(sum[:8])
	}
	return src
}

// CheckTemplate compiles a definition's template alone and returns the CUE
// error with its position, so the controller can report a definition that
// will never render. kind is KindComponent, KindTrait or KindPolicy. The
// error is an *Error, whose Reason is EvaluationBudgetExceeded when the
// template cannot even be compiled within the budget.
func (r *Renderer) CheckTemplate(kind, namespace, name, template string) error {
	sum := sha256.Sum256([]byte(template))
	key := kind + "/" + hex.EncodeToString(sum[:])
	var found *cueeval.Error
	if v, ok := r.checked.Get(key); ok {
		found, _ = v.(*cueeval.Error)
	} else {
		src := cueeval.Source{Kind: kind, Namespace: namespace, Name: name, Text: template}
		if _, err := r.evaluate(&cueeval.Request{Check: &src}, src); err != nil {
			if !errors.As(err, &found) {
				// The budget, or no evaluator: nothing known of the text.
				return err
			}
		}
		r.checked.Add(key, found)
	}
	if found == nil {
		return nil
	}
	return &Error{Reason: found.Reason, Path: found.Path, Err: fmt.Errorf("%s %q: %w", kind, name, found)}
}

// checkedSize bounds the template checks remembered.
const checkedSize = 1024

// CheckStatus parses a definition's status templates and returns the first
// syntax error with its position, so the controller can report a
// definition whose health will never evaluate. Errors that depend on the
// live objects surface from ComponentHealth and TraitHealth instead.
func (r *Renderer) CheckStatus(kind, name string, st *v1beta1.Status) error {
	if st == nil {
		return nil
	}
	for _, p := range []struct{ part, src string }{
		{cueeval.PartHealthPolicy, st.HealthPolicy}, {cueeval.PartCustomStatus, st.CustomStatus}, {cueeval.PartDetails, st.Details},
	} {
		if p.src == "" {
			continue
		}
		src := cueeval.Source{Kind: kind, Name: name, Part: p.part, Text: p.src}
		if _, err := r.evaluate(&cueeval.Request{Check: &src}, src); err != nil {
			if err.Reason == v1beta1.ReasonEvaluationBudgetExceeded {
				return err
			}
			err.Err = fmt.Errorf("%s %q: %s: %w", kind, name, p.part, err.Err)
			return err
		}
	}
	return nil
}

// forgetter is an evaluator that can drop a definition's compiled parts.
type forgetter interface {
	Forget(kind, namespace, name string)
}

// Forget drops the compiled parts of a definition that no longer exists,
// so that deleted or re-created definitions do not accumulate.
func (r *Renderer) Forget(kind, namespace, name string) {
	if f, ok := r.ev.(forgetter); ok {
		f.Forget(kind, namespace, name)
	}
}

// CachedParts is the number of compiled definition parts an in-process
// evaluator holds; 0 for any other.
func (r *Renderer) CachedParts() int {
	if l, ok := r.ev.(*cueeval.Local); ok {
		return l.Len()
	}
	return 0
}
