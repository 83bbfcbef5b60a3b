package steprun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Background runs the remote provider actions of custom steps (`http.do`,
// `email.send`) off the reconcile workers. A step that asks for one
// starts it here and waits (its run is pending); when the action ends,
// Done is called with its Application, which is reconciled again, and
// the step's next run takes the result. A slow server so costs its own
// Application time, never a reconcile worker.
//
// A run's results are kept until the run ends (Release): a step that
// asks for two actions in sequence gets the first's result again in the
// pass that starts the second, and never sends it twice. A run that ends
// (succeeds, fails, or waits on a condition) releases them, so its next
// run sends its requests anew, as KubeVela's does. Results are bounded:
// each by the action's own bound, all those held together by
// MaxHeldBytes (a result past it is dropped and its action fails), and a
// result nobody takes is dropped after heldFor.
type Background struct {
	// Workers bounds the actions running at once, over all Applications;
	// PerNamespace those of one namespace, so that one tenant cannot hold
	// them all.
	Workers      int
	PerNamespace int
	// MaxQueued bounds the actions of one namespace not done yet (running
	// or waiting for a worker); past it an action is refused (its step
	// waits and tries again).
	MaxQueued int
	// MaxHeldBytes bounds the results kept, over all runs.
	MaxHeldBytes int64
	// Timeout bounds one action, whatever it asked for.
	Timeout time.Duration
	// Done is told of each action that ended, with its Application.
	Done func(app types.NamespacedName)

	once    sync.Once
	workers chan struct{}
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    map[string]*job
	running map[string]int // namespace → actions running
	queued  map[string]int // namespace → actions not done yet
	held    int64
	now     func() time.Time
}

// RunID names one run of one step of one Application: results are kept
// per run.
type RunID struct {
	App types.NamespacedName
	// Run identifies the run: the Application's UID, the workflow run and
	// the step, so that a new run (or an Application of the same name)
	// never takes another's results.
	Run string
}

// heldFor is how long a result nobody takes is kept.
const heldFor = 10 * time.Minute

// Background defaults.
const (
	DefaultWorkers      = 16
	DefaultPerNamespace = 4
	DefaultMaxHeldBytes = 64 << 20
	defaultTimeout      = 2 * time.Minute
)

type job struct {
	run      RunID
	returns  json.RawMessage
	err      error
	done     bool
	finished time.Time
	released bool
}

func (b *Background) init() {
	b.once.Do(func() {
		if b.Workers <= 0 {
			b.Workers = DefaultWorkers
		}
		if b.PerNamespace <= 0 || b.PerNamespace > b.Workers {
			b.PerNamespace = min(DefaultPerNamespace, b.Workers)
		}
		if b.MaxQueued <= 0 {
			b.MaxQueued = 16 * b.PerNamespace
		}
		if b.MaxHeldBytes <= 0 {
			b.MaxHeldBytes = DefaultMaxHeldBytes
		}
		if b.Timeout <= 0 {
			b.Timeout = defaultTimeout
		}
		if b.now == nil {
			b.now = time.Now
		}
		b.workers = make(chan struct{}, b.Workers)
		b.cond = sync.NewCond(&b.mu)
		b.jobs = map[string]*job{}
		b.running = map[string]int{}
		b.queued = map[string]int{}
	})
}

// jobKey names one action of one run: where the template asks for it and
// with what.
func jobKey(run RunID, path, name string, params json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(run.App.String() + "\x00" + run.Run + "\x00" + path + "\x00" + name + "\x00"))
	h.Write(params)
	return hex.EncodeToString(h.Sum(nil))
}

// Result returns the action's result once it has run: ready is false
// while it runs (do is started the first time it is asked for), and the
// step waits. do runs with a context bounded by Timeout, not the caller's.
func (b *Background) Result(run RunID, path, name string, params json.RawMessage, do func(context.Context) (json.RawMessage, error)) (returns json.RawMessage, err error, ready bool) {
	b.init()
	key := jobKey(run, path, name, params)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweepLocked()
	if j, ok := b.jobs[key]; ok && !j.released {
		if !j.done {
			return nil, nil, false
		}
		return j.returns, j.err, true
	}
	ns := run.App.Namespace
	if b.queued[ns] >= b.MaxQueued {
		return nil, fmt.Errorf("%d provider actions of namespace %q are already running or waiting to; this one is tried again later", b.queued[ns], ns), true
	}
	j := &job{run: run}
	b.jobs[key] = j
	b.queued[ns]++
	go b.run(key, j, do)
	return nil, nil, false
}

// run waits for a worker of its namespace and the pool, runs do, and
// keeps the result.
func (b *Background) run(key string, j *job, do func(context.Context) (json.RawMessage, error)) {
	ns := j.run.App.Namespace
	b.mu.Lock()
	for b.running[ns] >= b.PerNamespace {
		b.cond.Wait()
	}
	b.running[ns]++
	b.mu.Unlock()
	b.workers <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), b.Timeout)
	returns, err := do(ctx)
	cancel()
	<-b.workers

	b.mu.Lock()
	b.running[ns]--
	b.queued[ns]--
	if b.running[ns] == 0 {
		delete(b.running, ns)
	}
	if b.queued[ns] == 0 {
		delete(b.queued, ns)
	}
	b.cond.Broadcast()
	if !j.released {
		if b.held+int64(len(returns)) > b.MaxHeldBytes {
			returns, err = nil, fmt.Errorf("its result (%d bytes) was dropped: the results the controller holds for steps would exceed %d bytes; it is tried again later", len(returns), b.MaxHeldBytes)
		}
		j.returns, j.err = returns, err
		b.held += int64(len(returns))
	} else if b.jobs[key] == j {
		delete(b.jobs, key)
	}
	j.done, j.finished = true, b.now()
	b.mu.Unlock()
	if b.Done != nil && !j.released {
		b.Done(j.run.App)
	}
}

// Release drops the results of a run that ended; actions of it still
// running are dropped when they end.
func (b *Background) Release(run RunID) {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, j := range b.jobs {
		if j.run == run {
			b.dropLocked(k, j)
		}
	}
}

// Forget drops the results of every run of an Application (deleted).
func (b *Background) Forget(app types.NamespacedName) {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, j := range b.jobs {
		if j.run.App == app {
			b.dropLocked(k, j)
		}
	}
}

// Pending reports whether the Application has actions running or
// results waiting to be taken.
func (b *Background) Pending(app types.NamespacedName) bool {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, j := range b.jobs {
		if j.run.App == app && !j.released {
			return true
		}
	}
	return false
}

// Held is the bytes of results kept.
func (b *Background) Held() int64 {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

func (b *Background) dropLocked(key string, j *job) {
	if !j.done {
		j.released = true // dropped when it ends
		return
	}
	b.held -= int64(len(j.returns))
	if b.jobs[key] == j {
		delete(b.jobs, key)
	}
}

// sweepLocked drops results nobody took for heldFor.
func (b *Background) sweepLocked() {
	now := b.now()
	for k, j := range b.jobs {
		if j.done && now.Sub(j.finished) > heldFor {
			b.dropLocked(k, j)
		}
	}
}
