package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/boundary"
)

// Call is one provider action a step template asks for.
type Call struct {
	// Provider and Do name the action as KubeVela's CUE packages do:
	// #provider "http", #do "do".
	Provider string `json:"provider"`
	Do       string `json:"do"`
	// Params are the action's $params, concrete, as JSON.
	Params json.RawMessage `json:"params"`
}

// Name is "<provider>.<do>", as messages name an action.
func (c Call) Name() string { return c.Provider + "." + c.Do }

// Env is what an action runs with: whose step it is, how it reaches the
// cluster, and what it may reach and return.
type Env struct {
	// Namespace and App name the Application whose step runs.
	Namespace string
	App       string
	// Step names the step.
	Step string
	// Client reads and writes the hub (local) cluster as the Application
	// acts there: through its ServiceAccount when it has one.
	Client client.Client
	// Boundary is what the Application may reach: every object and
	// namespace an action reads, writes or deletes, and every Secret it
	// takes credentials from, is checked against it before the request
	// is sent.
	Boundary boundary.Boundary
	// Managed, when set, names what manages an object ("component
	// \"web\" of this Application", "Application team-b/shop"), "" when
	// nothing does: actions never delete nor overwrite such an object.
	Managed func(obj *unstructured.Unstructured) string
	// MaxResultBytes bounds what one action returns, as JSON (headers and
	// body of an HTTP response included); 0 is DefaultMaxResultBytes.
	// Actions stop reading past it and fail with a *TooLargeError.
	MaxResultBytes int64
	// Log is the step's logger.
	Log logr.Logger
}

// DefaultMaxResultBytes bounds one action's result when Env sets none.
const DefaultMaxResultBytes = 4 << 20

// maxResult is the bound on one action's result.
func (e *Env) maxResult() int64 {
	if e.MaxResultBytes > 0 {
		return e.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// managedBy names what manages obj, "" when nothing does (no Managed
// function: only the ownership labels of another Application count).
func (e *Env) managedBy(obj *unstructured.Unstructured) string {
	if e.Managed != nil {
		return e.Managed(obj)
	}
	return ""
}

// Handler carries out one action: it returns the action's $returns as
// JSON (nil for none). An error fails the step with its message.
type Handler func(ctx context.Context, env *Env, params json.RawMessage) (json.RawMessage, error)

// Registry maps "<provider>.<do>" to its Handler.
type Registry map[string]Handler

// UnsupportedError is an action no handler carries out: the step is
// refused with it, never skipped.
type UnsupportedError struct{ Call Call }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("provider %q action %q is not supported by Steward (see docs/workflow.md)", e.Call.Provider, e.Call.Do)
}

// Do carries out a call with its handler.
func (r Registry) Do(ctx context.Context, env *Env, c Call) (json.RawMessage, error) {
	h, ok := r[c.Name()]
	if !ok {
		return nil, &UnsupportedError{Call: c}
	}
	return h(ctx, env, c.Params)
}

// With returns a registry holding r's handlers and those of others,
// later ones replacing earlier ones of the same name.
func (r Registry) With(others ...Registry) Registry {
	out := Registry{}
	for _, reg := range append([]Registry{r}, others...) {
		for k, h := range reg {
			out[k] = h
		}
	}
	return out
}

// ErrPending wraps the error of an action that started and is not done
// yet (an object recorded, to be applied): the step runs again soon.
var ErrPending = errors.New("pending")

// RefusedError is an action refused for good (an object another
// Application owns, one outside the Application's namespace): running
// the step again would not help, so the step fails. A boundary refusal
// (*boundary.Error in Err's chain) gives the step its reason.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refuse wraps err as a RefusedError.
func Refuse(format string, args ...any) error {
	return &RefusedError{Err: fmt.Errorf(format, args...)}
}

// Refused wraps an error, a boundary refusal among them, as a
// RefusedError; nil stays nil.
func Refused(err error) error {
	if err == nil {
		return nil
	}
	return &RefusedError{Err: err}
}

// ReasonTooLarge is the step reason of an action whose result, or a step
// run's results together, went past their bound.
const ReasonTooLarge = "ResultTooLarge"

// TooLargeError is a result past its bound: the action (or the step)
// fails for good; the message names the bound and its flag.
type TooLargeError struct {
	// What went past the bound ("the response of GET https://x/y").
	What string
	// Limit is the bound in bytes, and Flag the flag that sets it.
	Limit int64
	Flag  string
}

func (e *TooLargeError) Error() string {
	flag := ""
	if e.Flag != "" {
		flag = " (" + e.Flag + ")"
	}
	return fmt.Sprintf("%s is larger than %s, the most one action may return%s", e.What, FormatBytes(e.Limit), flag)
}

// FlagMaxActionResult is the flag of Env.MaxResultBytes, for messages.
const FlagMaxActionResult = "--max-step-action-result-size"

// FormatBytes writes a size as the flags take it: 4Mi, 512Ki, 100.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKi", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
