package cueeval

import (
	"errors"
	"fmt"
	"strings"

	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Error is an evaluation that failed on its input: the source does not
// compile, the properties do not fit the parameter, or the template
// cannot produce what it declares.
type Error struct {
	// Reason is v1beta1.ReasonInvalidProperties when the properties are at
	// fault, else v1beta1.ReasonRenderFailed.
	Reason string `json:"reason"`
	// Path is the field path at fault, relative to `parameter` for
	// InvalidProperties (for example "ports[0].port"); empty when unknown.
	Path string `json:"path,omitempty"`
	// Message says what is wrong, path included.
	Message string `json:"message"`
	// Chart says a Helm chart failed to render with its values (their
	// values.schema.json, a template's required or fail): the same chart
	// and values fail the same way every time.
	Chart bool `json:"chart,omitempty"`
}

func (e *Error) Error() string { return e.Message }

func renderErr(path string, err error) *Error {
	return &Error{Reason: v1beta1.ReasonRenderFailed, Path: path, Message: err.Error()}
}

func propsErr(ce *cueError) *Error {
	return &Error{Reason: v1beta1.ReasonInvalidProperties, Path: ce.path, Message: ce.Error()}
}

// ErrUnavailable is wrapped by the errors of an evaluator that could not
// evaluate at all (it is shutting down, or could not be started): nothing
// is known of the source, and nothing about it should be reported.
var ErrUnavailable = errors.New("the CUE evaluator is not available")

// Limit names one bound of an evaluation.
type Limit string

// The limits an evaluation can hit.
const (
	// LimitTime: the evaluation did not finish within its timeout.
	LimitTime Limit = "time"
	// LimitMemory: the evaluator's memory (heap, address space or stack)
	// ran out.
	LimitMemory Limit = "memory"
	// LimitObjects: a render produced more objects than allowed.
	LimitObjects Limit = "objects"
	// LimitObjectBytes: one rendered object is larger than allowed.
	LimitObjectBytes Limit = "object-size"
	// LimitRenderBytes: what one render produced, all objects together,
	// is larger than allowed.
	LimitRenderBytes Limit = "render-size"
)

// BudgetError is an evaluation stopped by one of its limits. What was
// being evaluated is not at fault in any other way: it may well render
// under a larger budget.
type BudgetError struct {
	Limit Limit `json:"limit"`
	// Budget is the limit's value as set ("10s", "512Mi").
	Budget string `json:"budget,omitempty"`
	// Flag is the controller flag that sets it.
	Flag string `json:"flag,omitempty"`
	// Detail says what happened, when more is known.
	Detail string `json:"detail,omitempty"`
}

func (e *BudgetError) Error() string {
	s := fmt.Sprintf("exceeded the %s limit", strings.ReplaceAll(string(e.Limit), "-", " "))
	if e.Budget != "" {
		s += " of " + e.Budget
	}
	if e.Flag != "" {
		s += " (" + e.Flag + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// cueError is a CUE evaluation error flattened into one readable line: the
// first path and the messages of every distinct error, without the noise of
// "N errors in empty disjunction".
type cueError struct {
	path string
	msgs []string
	pos  string
}

func (e *cueError) Error() string {
	msg := strings.Join(e.msgs, "; ")
	if e.pos != "" {
		msg += " (" + e.pos + ")"
	}
	if e.path == "" {
		return msg
	}
	return e.path + ": " + msg
}

// flattenCUE turns a CUE error into a cueError whose path has prefix
// stripped (for example "parameter"). withPos adds the source position,
// useful for template compile errors.
func flattenCUE(err error, prefix string, withPos bool) *cueError {
	errs := cueerrors.Errors(err)
	if len(errs) == 0 {
		return &cueError{msgs: []string{err.Error()}}
	}
	out := &cueError{}
	seen := map[string]bool{}
	for i, e := range errs {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if msg == "" {
			// A Go error (a patch or an export that failed) comes promoted
			// to a CUE error whose own message is empty.
			msg = e.Error()
		}
		if strings.Contains(msg, "errors in empty disjunction") && len(errs) > 1 {
			continue
		}
		p := trimPath(e.Path(), prefix)
		if i == 0 || out.path == "" {
			out.path = p
		}
		if p != out.path && p != "" {
			msg = p + ": " + msg
		}
		if seen[msg] {
			continue
		}
		seen[msg] = true
		out.msgs = append(out.msgs, msg)
		if withPos && out.pos == "" {
			for _, pos := range append([]token.Pos{e.Position()}, cueerrors.Positions(e)...) {
				if pos.IsValid() {
					out.pos = fmt.Sprintf("line %d:%d", pos.Line(), pos.Column())
					break
				}
			}
		}
	}
	if len(out.msgs) == 0 {
		format, args := errs[0].Msg()
		out.msgs = []string{fmt.Sprintf(format, args...)}
		out.path = trimPath(errs[0].Path(), prefix)
	}
	out.msgs = joinAlternatives(out.msgs)
	return out
}

// joinAlternatives turns the errors of a failed disjunction,
// `conflicting values "x" and 1`, `conflicting values "x" and int`, into
// one: `conflicting values "x" and int`. Literal alternatives covered by a
// type alternative (a default like *1 | int) are left out.
func joinAlternatives(msgs []string) []string {
	const prefix = "conflicting values "
	var value string
	var alts []string
	for _, m := range msgs {
		m, _, _ = strings.Cut(m, " (mismatched types")
		rest, ok := strings.CutPrefix(m, prefix)
		if !ok {
			return msgs
		}
		v, alt, ok := strings.Cut(rest, " and ")
		if !ok || (value != "" && v != value) {
			return msgs
		}
		value = v
		alts = append(alts, alt)
	}
	if len(alts) == 0 {
		return msgs
	}
	types := map[string]bool{}
	for _, a := range alts {
		types[a] = true
	}
	var kept []string
	for _, a := range alts {
		if covered(a, types) {
			continue
		}
		kept = append(kept, a)
	}
	return []string{prefix + value + " and " + strings.Join(kept, " | ")}
}

func covered(alt string, types map[string]bool) bool {
	switch {
	case strings.HasPrefix(alt, `"`):
		return types["string"]
	case alt == "true" || alt == "false":
		return types["bool"]
	case alt != "" && (alt[0] == '-' || (alt[0] >= '0' && alt[0] <= '9')):
		return types["int"] || types["number"] || types["float"]
	}
	return false
}

// trimPath joins a CUE path as users write it (a.b[0].c) and strips prefix.
func trimPath(path []string, prefix string) string {
	if len(path) > 0 && path[0] == prefix {
		path = path[1:]
	}
	var b strings.Builder
	for _, p := range path {
		if isIndex(p) {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// FormatBytes prints a size as Kubernetes quantities read when it is a
// whole number of KiB or MiB (512Mi, 1536Ki), else in MiB or bytes.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0, n >= 1<<10 && n%(1<<10) == 0:
		return resource.NewQuantity(n, resource.BinarySI).String()
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
