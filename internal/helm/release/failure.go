package release

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// Permanent reports whether err is a chart that cannot be prepared for a
// reason trying again does not change: a chart or version the source
// does not have, credentials it refuses, a source that is not a chart
// (fetch.IsPermanent); a valuesFrom source or credentials' Secret that
// does not exist, whose key is missing or is not YAML; parameters that
// do not parse; a Secret or values source in a namespace it may not be
// in; a chart that fails to render with its values (RenderFailure).
// A source out of reach, a chart still being fetched, or a read the
// API server failed or refused (RBAC can change) is transient.
// KubeVela's workflow ends (workflowFailed) on the first kind after its
// retries (MaxRetries); the second is retried with back-off for as long
// as it lasts.
func Permanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Permanent
}

// RenderFailure is err as a permanent failure (Permanent) when it is a
// chart that failed to render with its values (cueeval.Error.Chart: their
// values.schema.json, a template's required or fail), which KubeVela's
// workflow ends on after its retries; nil for any other err.
func RenderFailure(err error) error {
	var ce *cueeval.Error
	if !errors.As(err, &ce) || !ce.Chart {
		return nil
	}
	return &Error{Reason: v1beta1.ReasonRenderFailed, Err: err, Permanent: true}
}

// MaxRetries is how many times a render that fails permanently is tried
// before the workflow ends: KubeVela's
// --max-workflow-step-error-retry-times (10), after which the step is
// FailedAfterRetries and the Application workflowFailed.
const MaxRetries = 10

// RetryAfter is how long KubeVela's workflow waits before trying a
// failed step again after its n-th failure (n from 1): 2^n × 50 ms, at
// least 1 s and at most 5 min (its --max-workflow-failed-backoff-time).
// The ten tries of MaxRetries then take about a minute.
func RetryAfter(n int) time.Duration {
	const (
		least = time.Second
		most  = 5 * time.Minute
	)
	if n < 1 {
		return least
	}
	if n > 20 {
		return most
	}
	d := time.Duration(1<<n) * 50 * time.Millisecond
	return min(max(d, least), most)
}

// maxFailureKeys bounds the renders Failures counts at once; past it
// the counts start again from zero (a render then takes its retries
// again, which is all that is lost).
const maxFailureKeys = 1 << 16

// Failures counts how many times in a row each render failed
// permanently, so that the workflow ends after MaxRetries tries as
// KubeVela's does. Its key names what is retried: an Application and
// its generation, so that a change of the Application starts the count
// again. Safe for concurrent use; the zero value is ready.
type Failures struct {
	mu sync.Mutex
	n  map[string]int
}

// Note counts one more permanent failure of key and returns how many
// there were in a row (1 the first time).
func (f *Failures) Note(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil || len(f.n) >= maxFailureKeys {
		f.n = map[string]int{}
	}
	f.n[key]++
	return f.n[key]
}

// Ended counts err against key when it is permanent (Permanent) and
// returns how many permanent failures key had in a row, and whether that
// is MaxRetries or more: then the workflow ends, as KubeVela's does. A
// nil or transient err (the render succeeded, or may) forgets the count.
func (f *Failures) Ended(key string, err error) (int, bool) {
	if !Permanent(err) {
		f.Forget(key)
		return 0, false
	}
	n := f.Note(key)
	return n, n >= MaxRetries
}

// Forget ends key's count. Ended does when the render succeeded or failed
// transiently.
func (f *Failures) Forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.n, key)
}

// transientRead reports whether err is a read that may succeed when
// tried again: the API server failed or refused it (RBAC can change), it
// timed out, or the connection broke. A missing object is not: it is
// the user's to create, and Values reports it as such.
func transientRead(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err)
	}
	var ne net.Error
	return errors.As(err, &ne)
}
