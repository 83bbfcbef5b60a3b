package render

import (
	"fmt"
	"strings"

	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Error is a render failure a user can act on: it names the component, the
// trait (empty when the component definition itself failed), the definition
// type and, when CUE reports one, the field path at fault. Reason is one of
// v1beta1.ReasonDefinitionNotFound, ReasonInvalidProperties or
// ReasonRenderFailed, so the controller can copy it into a condition.
type Error struct {
	Component  string
	Trait      string
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
