package cueeval

import (
	"errors"
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Evaluate runs req in this process. A panic of the CUE evaluator is
// returned as an *Error naming what was evaluated.
func (l *Local) Evaluate(req *Request) (res *Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &Error{Reason: v1beta1.ReasonRenderFailed,
				Message: fmt.Sprintf("evaluating %s: the CUE evaluator failed: %v", req.Describe(), p)}
		}
	}()
	res = &Response{}
	for _, src := range req.Sources() {
		if src.Omitted && !l.has(*src) {
			return &Response{NeedSource: true}, nil
		}
	}
	switch {
	case req.Render != nil:
		c := l.template(req.Render.Source, res)
		if c.err != nil {
			return nil, templateErr(req.Render.Source, c.err)
		}
		out, rerr := c.render(req.Render)
		if rerr != nil {
			return nil, rerr
		}
		res.Render = out
	case req.Inspect != nil:
		c := l.template(req.Inspect.Source, res)
		res.Inspection = &Inspection{}
		if c.err == nil {
			res.Inspection = c.inspect(req.Inspect)
		}
	case req.Step != nil:
		c := l.template(req.Step.Source, res)
		if c.err != nil {
			return nil, stepTemplateErr(req.Step.Source, c.err)
		}
		out, serr := c.step(req.Step)
		if serr != nil {
			return nil, serr
		}
		res.Step = out
	case req.Status != nil:
		res.Status = l.status(req.Status, res)
	case req.Check != nil:
		c, _ := l.compile(*req.Check)
		if c.err != nil {
			return nil, &Error{Reason: v1beta1.ReasonRenderFailed, Message: c.err.Error()}
		}
	case req.Bools != nil:
		if res.Results, err = expressions(req.Bools, true); err != nil {
			return nil, &Error{Reason: v1beta1.ReasonRenderFailed, Message: fmt.Sprintf("%s: scope: %v", req.Bools.What, err)}
		}
	case req.Values != nil:
		if res.Results, err = expressions(req.Values, false); err != nil {
			return nil, &Error{Reason: v1beta1.ReasonRenderFailed, Message: fmt.Sprintf("%s: scope: %v", req.Values.What, err)}
		}
	default:
		return nil, errEmptyRequest
	}
	return res, nil
}

// template compiles a template source, noting the cache lookup.
func (l *Local) template(src Source, res *Response) *compiled {
	c, hit := l.compile(src)
	res.Cache = append(res.Cache, CacheLookup{Kind: src.Kind, Hit: hit})
	return c
}

var errEmptyRequest = errors.New("a request with no operation")
