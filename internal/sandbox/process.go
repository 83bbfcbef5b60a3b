package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/utils/lru"

	"github.com/steward-oam/steward/internal/cueeval"
)

// worker is one evaluator process and the pipes to it.
type worker struct {
	cmd    *exec.Cmd
	in     *os.File // its stdin
	out    *os.File // its stdout
	reader *bufio.Reader
	stderr *tail
	done   chan struct{} // closed once the process is reaped
	state  *os.ProcessState
	// compiled are the versions of the sources it was sent, by key: it
	// keeps them compiled (or says NeedSource when it dropped one).
	compiled *lru.Cache
	// served counts the requests it answered: one that served others
	// holds their compiled templates in its memory.
	served int
	// killed is set when the pool kills it; ending when the pool is done
	// with it (under the pool's lock).
	killed atomic.Bool
	ending bool
}

// startWorker starts this binary as an evaluator (see envWorker).
func startWorker(exe string, cfg workerConfig) (*worker, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	w := &worker{in: inW, out: outR, reader: bufio.NewReaderSize(outR, 64<<10), stderr: &tail{max: 8 << 10}, done: make(chan struct{}),
		compiled: lru.New(max(cfg.CacheSize, cueeval.DefaultCacheSize))}
	cmd := exec.Command(exe, workerArg)
	cmd.Env = append(os.Environ(), envWorker+"="+string(raw))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, w.stderr
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	w.cmd = cmd
	go func() {
		_ = cmd.Wait()
		w.state = cmd.ProcessState
		close(w.done)
	}()
	return w, nil
}

// knows reports whether the evaluator was sent every cached source of
// req, at its version.
func (w *worker) knows(req *cueeval.Request) bool {
	for _, src := range req.Sources() {
		if v, ok := w.compiled.Get(src.Key()); !ok || v.(string) != src.Version {
			return false
		}
	}
	return true
}

// learn notes the cached sources of a request the evaluator answered.
func (w *worker) learn(req *cueeval.Request) {
	w.served++
	for _, src := range req.Sources() {
		w.compiled.Add(src.Key(), src.Version)
	}
}

// roundTrip writes one request frame and reads the answer, by deadline.
func (w *worker) roundTrip(frame []byte, deadline time.Time, maxResponse int) (*cueeval.Response, error) {
	if err := w.in.SetWriteDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := w.in.Write(frame); err != nil {
		return nil, err
	}
	if err := w.out.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	var res cueeval.Response
	if err := readFrame(w.reader, maxResponse, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// alive reports whether the process still runs.
func (w *worker) alive() bool {
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// stop ends the process and releases its pipes.
func (w *worker) stop() {
	w.kill()
	w.in.Close()
	w.out.Close()
}

// kill ends the process, noting that the pool did it.
func (w *worker) kill() {
	w.killed.Store(true)
	_ = w.cmd.Process.Kill()
}

// failure explains why the evaluator did not answer: err is what the
// write or read returned. A deadline passed is the time limit, an answer
// too large the render size limit; a process ended by its heap watchdog,
// by a failed allocation, by its stack limit or by the kernel's OOM
// killer is the memory limit; an answer that cannot be read, or any other
// end, is the evaluator failing (not a limit, not remembered).
func (w *worker) failure(err error, opts Options) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.kill()
		return &cueeval.BudgetError{Limit: cueeval.LimitTime, Detail: "the evaluation did not finish in time"}
	case errors.Is(err, errFrameTooLarge):
		w.kill()
		return &cueeval.BudgetError{Limit: cueeval.LimitRenderBytes, Budget: cueeval.FormatBytes(int64(opts.RenderBytes)),
			Detail: "the evaluation's result is larger than a render may be"}
	case errors.Is(err, errBadFrame):
		w.kill()
		return fmt.Errorf("reading the CUE evaluator's answer: %w", err)
	}
	// The pipe broke: the evaluator ended, or is ending.
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		w.kill()
		return fmt.Errorf("the CUE evaluator stopped answering: %w", err)
	}
	out := w.stderr.String()
	status, _ := w.state.Sys().(syscall.WaitStatus)
	memory := func(detail string) error {
		return &cueeval.BudgetError{Limit: cueeval.LimitMemory, Detail: detail}
	}
	switch {
	case status.Exited() && status.ExitStatus() == exitMemory:
		return memory("its heap grew past the limit")
	case strings.Contains(out, "out of memory") || strings.Contains(out, "cannot allocate memory"):
		return memory("an allocation failed")
	case strings.Contains(out, "stack exceeds") || strings.Contains(out, "stack overflow"):
		return memory("it nests deeper than the stack limit allows")
	case status.Signaled() && status.Signal() == syscall.SIGKILL && !w.killed.Load():
		return &killedError{memory("the kernel killed the evaluator, out of memory")}
	}
	return fmt.Errorf("the CUE evaluator ended (%s): %s", w.state, firstLine(out))
}

// killedError is the memory limit when the kernel killed the evaluator:
// possibly for another process's memory, or while it was idle.
type killedError struct{ error }

func (e *killedError) Unwrap() error { return e.error }

// innocent reports whether a failure may not be the request's doing, so
// that it is sent once more to a new evaluator: the kernel took the
// evaluator (it takes evaluators first when the container runs out of
// memory), the evaluator's memory held other requests' templates as well,
// or it had ended before the request reached it.
func (w *worker) innocent(err error) bool {
	var be *cueeval.BudgetError
	switch {
	case errors.As(err, new(*killedError)):
		return true
	case errors.As(err, &be):
		return be.Limit == cueeval.LimitMemory && w.served > 0
	}
	return w.served > 0 && !errors.Is(err, errBadFrame)
}

// firstLine is the first non-empty line of s (a Go runtime's fatal
// error), for messages.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			return l
		}
	}
	return "no message"
}

// tail keeps the first and the last max bytes written to it: an
// evaluator's stderr, which says why it died. A Go runtime's fatal error
// comes first, before the stacks of every goroutine.
type tail struct {
	mu   sync.Mutex
	max  int
	head []byte
	buf  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := t.max - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.buf)
}
