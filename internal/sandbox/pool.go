package sandbox

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/steward-oam/steward/internal/cueeval"
)

// Options bound the evaluators of a Pool.
type Options struct {
	// Evaluators is the most child processes evaluating at once; an
	// evaluation waits for a free one.
	Evaluators int
	// Timeout bounds one evaluation, from the request written to the
	// answer read. An evaluator that does not answer in time is killed.
	Timeout time.Duration
	// Memory bounds one evaluator's heap, in bytes; its address space is
	// bounded to what it reserved at start plus this plus 256 MiB.
	Memory int64
	// ObjectBytes bounds one rendered object, and ResponseBytes the result
	// of one evaluation, both as JSON; zero is unbounded (ResponseBytes
	// then defaults to 64 MiB, which the controller reads at most).
	ObjectBytes   int
	ResponseBytes int
	// RenderBytes is the render size limit behind ResponseBytes (which
	// leaves room for the encoding), named in messages.
	RenderBytes int
	// CacheSize bounds the compiled sources each evaluator keeps.
	CacheSize int
	// RetryBase and RetryMax bound how long a request that hit a limit is
	// answered with the same error without being evaluated again: RetryBase
	// after the first failure, doubling with each further one. The same
	// definition with the same input fails the same way; a changed
	// definition or input is a new request, except that a definition that
	// took too much time or memory in a namespace is not evaluated there
	// again meanwhile, whatever its input (Request.Tenant).
	RetryBase, RetryMax time.Duration
	// Flags name the flag that sets each limit, for messages.
	Flags map[cueeval.Limit]string
	// Observer is told about every evaluation; nil for none.
	Observer Observer
}

// Defaults are the limits of the controller's flags.
func Defaults() Options {
	return Options{
		Evaluators: 2,
		Timeout:    10 * time.Second,
		Memory:     256 << 20,
		RetryBase:  time.Minute,
		RetryMax:   30 * time.Minute,
	}
}

// Observer hears of every evaluation, as metrics do.
type Observer interface {
	// Evaluated is one evaluation: outcome is "ok", "error" (the source
	// or input is at fault), "failed" (the evaluator failed otherwise) or
	// the limit it hit; cached says the answer was a remembered failure.
	Evaluated(outcome string, cached bool, d time.Duration)
	// EvaluatorStarted is one evaluator process started.
	EvaluatorStarted()
}

// Pool evaluates CUE in child processes: each runs one evaluation at a
// time, within a deadline and a memory limit, so that no definition can
// take the controller's memory or hold a reconcile forever. It implements
// cueeval.Evaluator and is safe for concurrent use.
//
// Evaluators start when first needed and live until Close; one that hits
// a limit is killed and replaced by a new one on the next request.
type Pool struct {
	opts     Options
	exe      string
	slots    chan struct{}
	failures *failures

	mu   sync.Mutex
	idle []*worker
	// all are the evaluators alive, idle or evaluating; endedCPU is the
	// CPU time of those that ended.
	all      map[*worker]bool
	endedCPU time.Duration
	closed   bool
}

// requestBytes bounds a request: definitions and Applications are API
// objects of at most a few MiB, and live objects as many.
const requestBytes = 256 << 20

// defaultResponseBytes bounds a response when no output limit is set.
const defaultResponseBytes = 64 << 20

// New returns a Pool; no process starts until the first evaluation.
func New(opts Options) (*Pool, error) {
	d := Defaults()
	if opts.Evaluators <= 0 {
		opts.Evaluators = d.Evaluators
	}
	if opts.Timeout <= 0 {
		opts.Timeout = d.Timeout
	}
	if opts.Memory <= 0 {
		opts.Memory = d.Memory
	}
	if opts.ResponseBytes <= 0 {
		opts.ResponseBytes = defaultResponseBytes
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = d.RetryBase
	}
	if opts.RetryMax < opts.RetryBase {
		opts.RetryMax = opts.RetryBase
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary to start CUE evaluators from: %w", err)
	}
	return &Pool{
		opts:     opts,
		exe:      exe,
		slots:    make(chan struct{}, opts.Evaluators),
		failures: newFailures(opts.RetryBase, opts.RetryMax),
		all:      map[*worker]bool{},
	}, nil
}

// Options returns the limits the pool applies.
func (p *Pool) Options() Options { return p.opts }

// errClosed is an evaluation asked of a closed pool: the controller is
// stopping, and nothing should be concluded from it.
var errClosed = fmt.Errorf("%w: the evaluator pool is closed", cueeval.ErrUnavailable)

// Evaluate runs req in an evaluator. A request that hit a limit recently
// is answered with the same *cueeval.BudgetError at once, and so is one
// with a source that hit the time or memory limit in the same tenant's
// namespace, whatever its input.
func (p *Pool) Evaluate(req *cueeval.Request) (*cueeval.Response, error) {
	start := time.Now()
	// The request as sent to an evaluator that compiled its sources
	// before: without their texts, which their versions identify.
	short, err := encodeFrame(withoutTexts(req))
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	if len(short) > requestBytes {
		return nil, fmt.Errorf("the request is %d bytes, more than an evaluator reads (%d)", len(short), requestBytes)
	}
	key, sourceKey := sha256.Sum256(short), sourcesKey(req)
	for _, k := range []*[32]byte{&key, sourceKey} {
		if k == nil {
			continue
		}
		if be := p.failures.get(*k, start); be != nil {
			p.observe(string(be.Limit), true, start)
			return nil, be
		}
	}
	res, err := p.run(req, short)
	var be *cueeval.BudgetError
	switch {
	case err == nil && res.Budget != nil:
		be = res.Budget
		err = be
	case errors.As(err, &be):
	}
	if be != nil {
		p.name(be)
		now := time.Now()
		p.failures.put(key, be, now)
		if sourceKey != nil && (be.Limit == cueeval.LimitTime || be.Limit == cueeval.LimitMemory) {
			p.failures.put(*sourceKey, be, now)
		}
		p.observe(string(be.Limit), false, start)
		return res, be
	}
	switch {
	case err != nil:
		p.observe("failed", false, start)
		return nil, err
	case res.Err != nil:
		p.observe("error", false, start)
		return res, res.Err
	}
	p.failures.forget(key)
	p.observe("ok", false, start)
	return res, nil
}

// sourcesKey identifies the request's sources, at their versions, in its
// tenant's namespace; nil when it has none or no tenant. A source that
// took more time or memory than allowed is not evaluated again in that
// namespace until its back-off ends, whatever the input: a tenant who
// changes its Application's spec in a loop does not get a new budget each
// time. Other namespaces using the same definition are not affected.
func sourcesKey(req *cueeval.Request) *[32]byte {
	srcs := req.Sources()
	if req.Tenant == "" || len(srcs) == 0 {
		return nil
	}
	h := sha256.New()
	h.Write([]byte(req.Tenant))
	for _, s := range srcs {
		h.Write([]byte{0})
		h.Write([]byte(s.Key()))
		h.Write([]byte{0})
		h.Write([]byte(s.Version))
	}
	var k [32]byte
	h.Sum(k[:0])
	return &k
}

// run sends one request to a free evaluator and reads its answer. An
// evaluator that was not this request's to lose (the kernel killed it
// while idle, or its memory held other requests' templates) gets the
// request sent once more, to a new evaluator.
func (p *Pool) run(req *cueeval.Request, short []byte) (*cueeval.Response, error) {
	p.slots <- struct{}{}
	defer func() { <-p.slots }()
	fresh := false
	for {
		w, err := p.take(fresh)
		if err != nil {
			return nil, err
		}
		res, err := p.exchange(w, req, short)
		if err == nil {
			w.learn(req)
			p.put(w)
			return res, nil
		}
		err = w.failure(err, p.opts)
		p.end(w)
		if fresh || !w.innocent(err) {
			return nil, err
		}
		fresh = true
	}
}

// exchange sends req to w (short, without the texts, when w compiled
// them before) and reads the answer, within the timeout.
func (p *Pool) exchange(w *worker, req *cueeval.Request, short []byte) (*cueeval.Response, error) {
	deadline := time.Now().Add(p.opts.Timeout)
	frame := short
	var err error
	if !w.knows(req) {
		if frame, err = p.whole(req); err != nil {
			return nil, err
		}
	}
	res, err := w.roundTrip(frame, deadline, p.opts.ResponseBytes)
	if err == nil && res.NeedSource {
		// It dropped a compiled source since: send the texts.
		if frame, err = p.whole(req); err != nil {
			return nil, err
		}
		res, err = w.roundTrip(frame, deadline, p.opts.ResponseBytes)
	}
	if err == nil && res.NeedSource {
		err = fmt.Errorf("%w: it asked for sources it was sent", errBadFrame)
	}
	return res, err
}

// whole encodes the request with its sources' texts.
func (p *Pool) whole(req *cueeval.Request) ([]byte, error) {
	frame, err := encodeFrame(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	if len(frame) > requestBytes {
		return nil, fmt.Errorf("the request is %d bytes, more than an evaluator reads (%d)", len(frame), requestBytes)
	}
	return frame, nil
}

// withoutTexts is a copy of req whose cached sources have no Text.
func withoutTexts(req *cueeval.Request) *cueeval.Request {
	out := *req
	switch {
	case req.Render != nil:
		in := *req.Render
		out.Render = &in
	case req.Inspect != nil:
		in := *req.Inspect
		out.Inspect = &in
	case req.Step != nil:
		in := *req.Step
		out.Step = &in
	case req.Status != nil:
		in := *req.Status
		for _, part := range []**cueeval.Source{&in.HealthPolicy, &in.CustomStatus, &in.Details} {
			if *part != nil {
				src := **part
				*part = &src
			}
		}
		out.Status = &in
	}
	for _, src := range out.Sources() {
		src.Text, src.Omitted = "", true
	}
	return &out
}

// name fills in the limit's value and flag, which the evaluator does not
// know.
func (p *Pool) name(be *cueeval.BudgetError) {
	if be.Flag == "" {
		be.Flag = p.opts.Flags[be.Limit]
	}
	if be.Budget != "" {
		return
	}
	switch be.Limit {
	case cueeval.LimitTime:
		be.Budget = p.opts.Timeout.String()
	case cueeval.LimitMemory:
		be.Budget = cueeval.FormatBytes(p.opts.Memory)
	}
}

func (p *Pool) observe(outcome string, cached bool, start time.Time) {
	if p.opts.Observer != nil {
		p.opts.Observer.Evaluated(outcome, cached, time.Since(start))
	}
}

// take returns an idle evaluator, or starts one (always when fresh).
func (p *Pool) take(fresh bool) (*worker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	for n := len(p.idle); n > 0 && !fresh; n = len(p.idle) {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		if w.alive() {
			p.mu.Unlock()
			return w, nil
		}
		// Ended while idle (the kernel's OOM killer takes evaluators
		// first): no request of its is to blame.
		p.endLocked(w)
	}
	p.mu.Unlock()
	w, err := startWorker(p.exe, workerConfig{
		Memory: p.opts.Memory, ObjectBytes: p.opts.ObjectBytes, ResponseBytes: p.opts.ResponseBytes,
		RenderBytes: p.opts.RenderBytes, RequestBytes: requestBytes, CacheSize: p.opts.CacheSize,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: starting an evaluator: %w", cueeval.ErrUnavailable, err)
	}
	if p.opts.Observer != nil {
		p.opts.Observer.EvaluatorStarted()
	}
	p.mu.Lock()
	p.all[w] = true
	p.mu.Unlock()
	return w, nil
}

// put returns an evaluator to the idle list, or stops it when the pool
// closed meanwhile.
func (p *Pool) put(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.endLocked(w)
		return
	}
	p.idle = append(p.idle, w)
}

// end stops an evaluator for good.
func (p *Pool) end(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked(w)
}

func (p *Pool) endLocked(w *worker) {
	w.stop()
	if !p.all[w] || w.ending {
		return
	}
	w.ending = true
	go func() {
		// Its CPU time is final once it is reaped; until then CPUTime
		// reads it from /proc, so the sum never goes down.
		<-w.done
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.all, w)
		p.endedCPU += w.cpuTime()
	}()
}

// Close stops every idle evaluator; those evaluating stop when they
// answer. Evaluations after Close fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, w := range p.idle {
		p.endLocked(w)
	}
	p.idle = nil
	return nil
}

// Start lets a controller-runtime manager own the pool: it closes the
// pool when the manager stops.
func (p *Pool) Start(ctx context.Context) error {
	<-ctx.Done()
	return p.Close()
}

// NeedLeaderElection is false: every replica closes its pool when its
// manager stops, leader or not.
func (p *Pool) NeedLeaderElection() bool { return false }
