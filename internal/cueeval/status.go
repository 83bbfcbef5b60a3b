package cueeval

import (
	"encoding/json"
	"errors"
	"strings"

	"cuelang.org/go/cue"
)

// maxDetailLabel is the longest status.details field name kept, as in
// KubeVela: details are meant to be short keys a user scans.
const maxDetailLabel = 31

var (
	pathIsHealth     = cue.ParsePath("isHealth")
	pathMessage      = cue.ParsePath("message")
	pathContextState = cue.ParsePath("context.status")
)

// contextStatus is `context.status` as KubeVela gives it to the status
// parts: empty for details, then details' concrete fields (`$` ones
// included) for healthPolicy, then healthPolicy's result too for
// customStatus.
type contextStatus struct {
	Details map[string]json.RawMessage
	Healthy *bool
	// detailsSet says details evaluated: its fields then appear, as an
	// empty object when there are none.
	detailsSet bool
}

func (s *contextStatus) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	if s.detailsSet {
		d := s.Details
		if d == nil {
			d = map[string]json.RawMessage{}
		}
		out["details"] = d
	}
	if s.Healthy != nil {
		out["healthy"] = *s.Healthy
	}
	return json.Marshal(out)
}

// status evaluates each status part of in that is set, in KubeVela's
// order: details, then healthPolicy, then customStatus, each seeing what
// the ones before it found in context.status.
func (l *Local) status(in *StatusInput, res *Response) *StatusResult {
	out := &StatusResult{Healthy: true}
	use := func(src *Source) *compiled {
		c, hit := l.compile(*src)
		res.Cache = append(res.Cache, CacheLookup{Kind: src.Kind, Hit: hit})
		return c
	}
	st := &contextStatus{}
	if in.Details != nil {
		details, values, err := use(in.Details).details(in, st)
		out.Details = details
		if err != nil {
			out.DetailsErr = err.Error()
		}
		if values != nil {
			st.Details, st.detailsSet = values, true
		}
	}
	if in.HealthPolicy != nil {
		ok, err := use(in.HealthPolicy).isHealth(in, st)
		out.Healthy = ok && err == nil
		if err != nil {
			out.HealthErr = err.Error()
		}
	}
	healthy := out.Healthy
	st.Healthy = &healthy
	if in.CustomStatus != nil {
		msg, err := use(in.CustomStatus).message(in, st)
		out.Message = msg
		if err != nil {
			out.MessageErr = err.Error()
		}
	}
	return out
}

// fillStatus evaluates a compiled status part with its input and
// context.status. The caller holds c.mu.
func (c *compiled) fillStatus(in *StatusInput, st *contextStatus) (cue.Value, error) {
	if c.err != nil {
		return cue.Value{}, errors.New("template does not compile: " + c.err.Error())
	}
	ctxVal, err := c.source(in.Context)
	if err != nil {
		return cue.Value{}, errors.New("context: " + err.Error())
	}
	paramVal, err := c.source(in.Params)
	if err != nil {
		return cue.Value{}, errors.New("parameter: " + err.Error())
	}
	b, err := st.MarshalJSON()
	if err != nil {
		return cue.Value{}, errors.New("context.status: " + err.Error())
	}
	stVal, err := c.source(b)
	if err != nil {
		return cue.Value{}, errors.New("context.status: " + err.Error())
	}
	return c.value.FillPath(pathContext, ctxVal).FillPath(pathContextState, stVal).FillPath(pathParameter, paramVal), nil
}

// isHealth evaluates a healthPolicy, which must produce a concrete
// `isHealth: bool`.
func (c *compiled) isHealth(in *StatusInput, st *contextStatus) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fillStatus(in, st)
	if err != nil {
		return false, err
	}
	hv := v.LookupPath(pathIsHealth)
	if !hv.Exists() {
		if err := v.Err(); err != nil {
			return false, flattenCUE(err, "", false)
		}
		return false, errors.New("isHealth is not set")
	}
	ok, err := hv.Bool()
	if err != nil {
		return false, flattenCUE(err, "", false)
	}
	return ok, nil
}

// message evaluates a customStatus, which produces `message: string`; no
// message is an empty one.
func (c *compiled) message(in *StatusInput, st *contextStatus) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fillStatus(in, st)
	if err != nil {
		return "", err
	}
	mv := v.LookupPath(pathMessage)
	if !mv.Exists() {
		return "", nil
	}
	s, err := mv.String()
	if err != nil {
		return "", flattenCUE(err, "", false)
	}
	return s, nil
}

// details evaluates status.details: every regular top-level field becomes
// one entry, except context and parameter, names starting with "$" or
// longer than maxDetailLabel, and fields marked @local(), @private() (as
// KubeVela names it) or @exclude(). Strings are kept as they are, other
// values as JSON. A field that is not concrete (the live object lacks
// what it reads) is left out, so a user never reads "_|_".
//
// values are the concrete fields as JSON, for context.status.details of
// the other parts: the same fields, plus the "$" ones (KubeVela's way to
// pass a value on without showing it), whatever their attributes; nil
// when details did not evaluate.
func (c *compiled) details(in *StatusInput, st *contextStatus) (map[string]string, map[string]json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fillStatus(in, st)
	if err != nil {
		return nil, nil, err
	}
	it, err := v.Fields()
	if err != nil {
		return nil, nil, flattenCUE(err, "", false)
	}
	out := map[string]string{}
	values := map[string]json.RawMessage{}
	for it.Next() {
		label := it.Selector().Unquoted()
		fv := it.Value()
		dollar := strings.HasPrefix(label, "$")
		switch {
		case label == "context" || label == "parameter" || len(label) > maxDetailLabel:
			continue
		case !dollar && excluded(fv):
			continue
		case fv.Validate(cue.Concrete(true)) != nil:
			continue
		}
		if b, err := fv.MarshalJSON(); err == nil {
			values[label] = b
		}
		if dollar {
			continue
		}
		if s, ok := stringify(fv); ok {
			out[label] = s
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, values, nil
}

// excluded reports whether a details field is marked to stay out of them.
func excluded(v cue.Value) bool {
	for _, a := range v.Attributes(cue.FieldAttr) {
		switch a.Name() {
		case "local", "private", "exclude":
			return true
		}
	}
	return false
}

// stringify renders a concrete value for status.details.
func stringify(v cue.Value) (string, bool) {
	if v.Validate(cue.Concrete(true)) != nil {
		return "", false
	}
	if s, err := v.String(); err == nil {
		return s, true
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return "", false
	}
	return string(b), true
}
