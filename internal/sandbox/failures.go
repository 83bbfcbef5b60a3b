package sandbox

import (
	"sync"
	"time"

	"k8s.io/utils/lru"

	"github.com/steward-oam/steward/internal/cueeval"
)

// failuresSize bounds the requests remembered as having hit a limit.
const failuresSize = 4096

// failures remembers requests that hit a limit, by the hash of their
// frame, so that the same definition with the same input is not evaluated
// again (at the cost of a whole budget) on every pass: it is answered
// with the same error until its back-off ends, RetryBase after the first
// failure and doubling with each further one up to RetryMax.
type failures struct {
	mu        sync.Mutex
	cache     *lru.Cache
	base, max time.Duration
}

type failure struct {
	err    *cueeval.BudgetError
	until  time.Time
	streak int
}

func newFailures(base, max time.Duration) *failures {
	return &failures{cache: lru.New(failuresSize), base: base, max: max}
}

// get returns the remembered error of a request still backing off.
func (f *failures) get(key [32]byte, now time.Time) *cueeval.BudgetError {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.cache.Get(key)
	if !ok {
		return nil
	}
	e := v.(*failure)
	if now.After(e.until) {
		return nil
	}
	be := *e.err
	return &be
}

// put remembers a request that hit a limit.
func (f *failures) put(key [32]byte, err *cueeval.BudgetError, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := &failure{err: err}
	if v, ok := f.cache.Get(key); ok {
		e.streak = v.(*failure).streak + 1
	}
	wait := f.base
	for range e.streak {
		if wait >= f.max/2 {
			wait = f.max
			break
		}
		wait *= 2
	}
	e.until = now.Add(min(wait, f.max))
	f.cache.Add(key, e)
}

// forget drops what is remembered of a request that evaluated: a later
// failure of it starts its back-off over.
func (f *failures) forget(key [32]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cache.Remove(key)
}
