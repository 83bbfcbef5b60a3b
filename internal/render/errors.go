package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// Error is a render failure a user can act on: it names the component, the
// trait (empty when the component definition itself failed), the definition
// type and, when CUE reports one, the field path at fault. Reason is one of
// v1beta1.ReasonDefinitionNotFound, ReasonInvalidProperties,
// ReasonRenderFailed or ReasonEvaluationBudgetExceeded (an evaluation or
// what it produced hit a limit), so the controller can copy it into a
// condition.
type Error struct {
	Component string
	Trait     string
	// Policy names the policy whose template failed (RenderPolicies);
	// Component and Trait are empty then.
	Policy     string
	Definition string
	Reason     string
	// Path is the CUE field path at fault, relative to `parameter` for
	// InvalidProperties (for example "ports[0].port").
	Path string
	// Err is the underlying cause.
	Err error
}

// Error reads like
// `component "web" trait "scaler": properties do not fit parameter: replicas: conflicting values "x" and int`.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Component != "" {
		fmt.Fprintf(&b, "component %q ", e.Component)
	}
	if e.Trait != "" {
		fmt.Fprintf(&b, "trait %q ", e.Trait)
	}
	if e.Policy != "" {
		fmt.Fprintf(&b, "policy %q ", e.Policy)
	}
	s := strings.TrimSuffix(b.String(), " ")
	if s != "" {
		s += ": "
	}
	switch e.Reason {
	case v1beta1.ReasonInvalidProperties:
		s += "properties do not fit parameter: "
	case v1beta1.ReasonDefinitionNotFound:
		return s + e.Err.Error()
	}
	if e.Err == nil {
		return s + "unknown error"
	}
	return s + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// LimitError is a render that produced more, or larger, objects than the
// Renderer's Limits allow.
type LimitError struct {
	Limit cueeval.Limit
	// Max is the limit's value: objects, bytes, or a time.Duration.
	Max  int
	Flag string
	// Object names the object too large, and Size its size, for
	// LimitObjectBytes.
	Object string
	Size   int
}

func (e *LimitError) Error() string {
	var s string
	switch e.Limit {
	case cueeval.LimitTime:
		s = fmt.Sprintf("takes more than %s to render", time.Duration(e.Max))
	case cueeval.LimitObjects:
		s = fmt.Sprintf("renders more than %d objects", e.Max)
	case cueeval.LimitObjectBytes:
		s = fmt.Sprintf("renders %s of %s, more than the %s an object may have", e.Object, cueeval.FormatBytes(int64(e.Size)), cueeval.FormatBytes(int64(e.Max)))
	default:
		s = fmt.Sprintf("renders more than %s of objects", cueeval.FormatBytes(int64(e.Max)))
	}
	if e.Flag != "" {
		s += " (" + e.Flag + ")"
	}
	return s
}
