// Package provider carries out the provider actions of KubeVela workflow
// step definitions (`vela/http`, `vela/email`, `vela/config`, `vela/util`,
// and `vela/kube`, whose actions the controller supplies because they
// record what they apply): a step template asks for an action by its
// provider and #do name, with its $params as JSON, and gets its $returns
// back as JSON.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// Env is what an action runs with: whose step it is and how it reaches
// the cluster.
type Env struct {
	// Namespace and App name the Application whose step runs.
	Namespace string
	App       string
	// Step names the step.
	Step string
	// Client reads and writes the hub (local) cluster as the Application
	// acts there: through its ServiceAccount when it has one.
	Client client.Client
	// Log is the step's logger.
	Log logr.Logger
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
// the step again would not help, so the step fails.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refuse wraps err as a RefusedError.
func Refuse(format string, args ...any) error {
	return &RefusedError{Err: fmt.Errorf(format, args...)}
}
