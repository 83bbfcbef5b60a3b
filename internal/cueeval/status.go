package cueeval

import (
	"errors"
	"strings"

	"cuelang.org/go/cue"
)

// maxDetailLabel is the longest status.details field name kept, as in
// KubeVela: details are meant to be short keys a user scans.
const maxDetailLabel = 31

var (
	pathIsHealth = cue.ParsePath("isHealth")
	pathMessage  = cue.ParsePath("message")
)

// status evaluates each status part of in that is set.
func (l *Local) status(in *StatusInput, res *Response) *StatusResult {
	out := &StatusResult{Healthy: true}
	use := func(src *Source) *compiled {
		c, hit := l.compile(*src)
		res.Cache = append(res.Cache, CacheLookup{Kind: src.Kind, Hit: hit})
		return c
	}
	if in.HealthPolicy != nil {
		ok, err := use(in.HealthPolicy).isHealth(in)
		out.Healthy = ok && err == nil
		if err != nil {
			out.HealthErr = err.Error()
		}
	}
	if in.CustomStatus != nil {
		msg, err := use(in.CustomStatus).message(in)
		out.Message = msg
		if err != nil {
			out.MessageErr = err.Error()
		}
	}
	if in.Details != nil {
		details, err := use(in.Details).details(in)
		out.Details = details
		if err != nil {
			out.DetailsErr = err.Error()
		}
	}
	return out
}

// fillStatus evaluates a compiled status part with its input. The caller
// holds c.mu.
func (c *compiled) fillStatus(in *StatusInput) (cue.Value, error) {
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
	return c.value.FillPath(pathContext, ctxVal).FillPath(pathParameter, paramVal), nil
}

// isHealth evaluates a healthPolicy, which must produce a concrete
// `isHealth: bool`.
func (c *compiled) isHealth(in *StatusInput) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fillStatus(in)
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
func (c *compiled) message(in *StatusInput) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fillStatus(in)
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
// longer than maxDetailLabel, and fields marked @local() or @exclude().
// Strings are kept as they are, other values as JSON. A field that is not
// concrete (the live object lacks what it reads) is left out, so a user
// never reads "_|_".
func (c *compiled) details(in *StatusInput) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fillStatus(in)
	if err != nil {
		return nil, err
	}
	it, err := v.Fields()
	if err != nil {
		return nil, flattenCUE(err, "", false)
	}
	out := map[string]string{}
	for it.Next() {
		label := it.Selector().Unquoted()
		if !keepDetail(label, it.Value()) {
			continue
		}
		s, ok := stringify(it.Value())
		if ok {
			out[label] = s
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func keepDetail(label string, v cue.Value) bool {
	switch {
	case label == "context" || label == "parameter":
		return false
	case strings.HasPrefix(label, "$") || len(label) > maxDetailLabel:
		return false
	}
	for _, a := range v.Attributes(cue.FieldAttr) {
		if a.Name() == "local" || a.Name() == "exclude" {
			return false
		}
	}
	return true
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
