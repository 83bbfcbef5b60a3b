// Package sandbox runs every CUE evaluation of the controller (and of
// `steward render`) in child processes bounded in time and memory, so
// that no definition, however written, can take the controller's memory
// or hold a reconcile forever: the evaluation budget of issue 27.
//
// Usage:
//
//	pool, err := sandbox.New(sandbox.DefaultBudget().PoolOptions())
//	defer pool.Close() // or mgr.Add(pool): closed when the manager stops
//	r := render.NewRenderer(render.WithEvaluator(pool))
//	_, err = r.Render(app, defs, actx)
//	var be *cueeval.BudgetError // errors.As: the limit hit, its value and flag
//
// delivery.NewRenderer builds both from a Budget (the flags
// --cue-eval-timeout, --cue-eval-memory-limit, --cue-evaluators,
// --max-render-objects, --max-render-object-size, --max-render-size).
//
// Implementation notes:
//
//   - An evaluator is this same binary started again with one argument,
//     __steward-cue-evaluator__, and STEWARD_CUE_EVALUATOR in its
//     environment: the package's init sees both and serves requests on
//     stdin and stdout until stdin closes, before main (or a test binary's
//     TestMain) runs. Every binary that links the
//     package, test binaries included, can be an evaluator; nothing else is
//     installed.
//   - The protocol is one frame per request and per answer: a 4-byte length
//     then the JSON of a cueeval.Request or cueeval.Response. A reader
//     checks the length against its bound before it reads the body.
//   - Time: the controller sets a deadline on the pipe and kills the
//     evaluator when it passes. CUE's evaluator cannot be interrupted, so
//     a process boundary is the only way to stop it.
//   - Memory: the evaluator sets a soft heap limit (the collector works to
//     stay under it), ends itself when a collection finds more live heap
//     than the limit (checked at the end of every collection, so an idle
//     evaluator is never woken), RLIMIT_AS caps its address space so a
//     single huge allocation fails at once, debug.SetMaxStack stops
//     runaway recursion, and oom_score_adj 1000 makes the kernel take an
//     evaluator before the controller. The controller reads why an
//     evaluator died (exit code, the runtime's fatal error, a SIGKILL it
//     did not send) to name the limit. An evaluator that may not have died
//     of the request (the kernel took it, or its memory held other
//     requests' templates) gets the request once more, on a new one.
//   - Output: an evaluator refuses to send an object over the object size
//     limit or an answer over the render size limit; the controller reads
//     no frame larger than that.
//   - A request that hit a limit is remembered by the hash of its frame
//     (sources by version, not text) and answered with the same error,
//     without evaluating, for a back-off that doubles with each failure; a
//     definition version that took too much time or memory is remembered
//     for its tenant's namespace too, whatever the input. A broken
//     definition costs one budget per back-off period, not one per
//     reconcile or spec change.
//   - Errors that say nothing of the source (the pool closed while the
//     controller stops, an evaluator that could not start) wrap
//     cueeval.ErrUnavailable: callers stop the pass rather than report.
//   - Evaluators die with the controller (Pdeathsig, and EOF on stdin), sit
//     in their own process group (a terminal's ^C reaches the controller,
//     which stops them), and are started when first needed.
//
// Files:
//
//	budget.go         Budget: the evaluation budget and its flags (--cue-*), turned into pool Options
//	cpu.go            Pool.CPUTime: CPU the evaluator processes used, for metrics and benchmarks
//	failures.go       failures: requests that hit a limit, answered again with their error until a back-off ends
//	pool.go           Pool, Options, Observer: the evaluator processes, queueing and the per-request deadline
//	process.go        worker: one evaluator process, its pipes, its kill on a deadline or memory bound
//	process_linux.go  sysProcAttr on Linux: own process group, killed when the controller dies (Pdeathsig)
//	process_other.go  sysProcAttr elsewhere: own process group only
//	wire.go           frames: a length-prefixed JSON Request or Response, refused when oversized
//	worker.go         the evaluator side: a process started as a worker serves requests from stdin
package sandbox
