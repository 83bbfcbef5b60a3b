package cueeval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/helm/chart"
)

// ChartAction is what vela/helm's #Render needs once its chart is
// fetched: the archive, the values (valuesFrom merged under the inline
// values) and how to render. The chart's templates are tenant input like
// a definition's CUE, so they are rendered here, in the evaluator, under
// the same budget.
type ChartAction struct {
	Archive []byte          `json:"archive"`
	Values  json.RawMessage `json:"values,omitempty"`
	Options chart.Options   `json:"options"`
}

// ChartInfo is one chart a template rendered.
type ChartInfo struct {
	Path    string `json:"path"`
	Chart   string `json:"chart"`
	Version string `json:"version"`
	Objects int    `json:"objects"`
	// Hooks are the chart's hooks, which are not delivered.
	Hooks []string `json:"hooks,omitempty"`
	// CRDs are the chart's crds/, apart from its objects: created when
	// missing, never upgraded nor deleted, as Helm does.
	CRDs []json.RawMessage `json:"crds,omitempty"`
}

// componentActions finds the provider actions of a definition template
// and fills the results the caller carried out. Actions without a result
// are returned, with their parameters, for the caller to carry out; only
// vela/helm's #Render may be used by a definition template.
func (c *compiled) componentActions(v cue.Value, done []ActionResult) (cue.Value, []Action, []ChartInfo, *Error) {
	tasks := templateActions(v)
	byPath := map[string]ActionResult{}
	for _, d := range done {
		byPath[d.Path] = d
	}
	var pending []Action
	var charts []ChartInfo
	for _, t := range tasks {
		if t.provider != "helm" || t.do != "render" {
			return v, nil, nil, renderErr(t.path, fmt.Errorf("the %s action at %s: a definition template may only use vela/helm's #Render; other actions run in workflow steps", actionName(t), t.path))
		}
		d, ok := byPath[t.path]
		if !ok {
			params, err := actionParams(t)
			if err != nil {
				return v, nil, nil, renderErr(t.path, fmt.Errorf("the %s action at %s: %w", actionName(t), t.path, err))
			}
			pending = append(pending, Action{Path: t.path, Provider: t.provider, Do: t.do, Params: params})
			continue
		}
		var returns any
		switch {
		case d.Chart != nil:
			var values map[string]any
			if len(d.Chart.Values) > 0 {
				if err := json.Unmarshal(d.Chart.Values, &values); err != nil {
					return v, nil, nil, renderErr(t.path, fmt.Errorf("the chart values do not parse: %w", err))
				}
			}
			r, err := chart.Render(d.Chart.Archive, values, d.Chart.Options)
			if err != nil {
				return v, nil, nil, &Error{Reason: v1beta1.ReasonRenderFailed, Path: t.path, Message: err.Error(), Chart: true}
			}
			resources := make([]any, len(r.Objects))
			for i, o := range r.Objects {
				resources[i] = o
			}
			returns = map[string]any{"resources": resources, "notes": r.Notes}
			info := ChartInfo{Path: t.path, Chart: r.Chart, Version: r.Version, Objects: len(r.Objects), Hooks: r.Hooks}
			for _, crd := range r.CRDs {
				raw, err := json.Marshal(crd)
				if err != nil {
					return v, nil, nil, renderErr(t.path, err)
				}
				info.CRDs = append(info.CRDs, raw)
			}
			charts = append(charts, info)
		case len(d.Returns) > 0:
			if err := json.Unmarshal(d.Returns, &returns); err != nil {
				return v, nil, nil, renderErr(t.path, fmt.Errorf("the results of the action at %s do not parse: %w", t.path, err))
			}
		}
		raw, err := json.Marshal(fillOf("", returns))
		if err != nil {
			return v, nil, nil, renderErr(t.path, err)
		}
		fv, err := c.source(raw)
		if err != nil {
			return v, nil, nil, renderErr(t.path, err)
		}
		v = v.FillPath(t.at, fv)
	}
	return v, pending, charts, nil
}

// maxActionDepth bounds how deep templateActions looks for actions.
const maxActionDepth = 6

// templateActions finds the actions of a definition template: fields,
// hidden ones included (`_rendered: helm.#Render & {...}`), whose value
// has #do and #provider, down to maxActionDepth. The vela packages' own
// fields are not searched.
func templateActions(v cue.Value) []stepTask {
	var out []stepTask
	var walk func(v cue.Value, at []cue.Selector)
	walk = func(v cue.Value, at []cue.Selector) {
		if len(at) > maxActionDepth || v.IncompleteKind() != cue.StructKind {
			return
		}
		iter, err := v.Fields(cue.Hidden(true), cue.Optional(false))
		if err != nil {
			return
		}
		for iter.Next() {
			sel := iter.Selector()
			name := sel.String()
			if len(at) == 0 && (strings.HasPrefix(name, "_vela_") || name == "context" || name == "parameter") {
				continue
			}
			fv := iter.Value()
			path := append(slices.Clone(at), sel)
			if fv.LookupPath(pathDo).Exists() && fv.LookupPath(pathProvider).Exists() {
				do, _ := fv.LookupPath(pathDo).String()
				provider, _ := fv.LookupPath(pathProvider).String()
				p := cue.MakePath(path...)
				out = append(out, stepTask{path: p.String(), at: p, provider: provider, do: do, value: fv})
				continue
			}
			walk(fv, path)
		}
	}
	walk(v, nil)
	return out
}
