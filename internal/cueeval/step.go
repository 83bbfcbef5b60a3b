package cueeval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/tools/flow"

	"github.com/steward-oam/steward/api/v1beta1"
)

// KindStep is the source kind of a workflow step definition's template.
const KindStep = "WorkflowStepDefinition"

// Step control actions: what a step template's builtin actions ask of
// its step.
const (
	// StepWait: a #ConditionalWait whose continue is false; the step
	// stays running and runs again later.
	StepWait = "wait"
	// StepFail: a #Fail; the step fails.
	StepFail = "fail"
	// StepSuspend: a #Suspend; the workflow suspends at the step.
	StepSuspend = "suspend"
	// StepBreak: a #Break; the step ends, as succeeded, without running
	// the rest of its actions.
	StepBreak = "break"
)

// maxStepIterations bounds the builtin actions one evaluation carries
// out before it answers: each needs the template evaluated again.
const maxStepIterations = 64

// StepInput is one evaluation of a workflow step definition's template:
// with its parameter (the step's properties, inputs filled in), its
// context, and the results of the provider actions carried out so far in
// this run of the step. The evaluator carries out the builtin actions
// (wait, fail, suspend, break, message, string conversion) itself, in
// dependency order, and answers with the provider actions that may run
// next, or with how the step ends.
type StepInput struct {
	Source  Source          `json:"source"`
	Context json.RawMessage `json:"context"`
	Params  json.RawMessage `json:"params"`
	// Done are the results of the actions carried out so far.
	Done []ActionResult `json:"done,omitempty"`
	// Resumed says the step was suspended by its own #Suspend and then
	// resumed: its suspend actions are passed.
	Resumed bool `json:"resumed,omitempty"`
	// Outputs are the step's outputs, each a CUE expression over the
	// template's value (KubeVela's valueFrom), evaluated once every
	// action has run.
	Outputs []NamedExpr `json:"outputs,omitempty"`
}

// NamedExpr is a named CUE expression.
type NamedExpr struct {
	Name string `json:"name"`
	Expr string `json:"expr"`
}

// Action is a provider action a step template asks for, with its
// parameters concrete.
type Action struct {
	// Path is where the action is in the template; its result is filled
	// in there.
	Path string `json:"path"`
	// Provider and Do name the action (kube apply, http do, ...); an
	// action of the older vela/op package is named as its current form.
	Provider string `json:"provider"`
	Do       string `json:"do"`
	// Legacy is the vela/op action's own name when the action is of that
	// package: its results fill its own fields, not $returns.
	Legacy string `json:"legacy,omitempty"`
	// Params are the action's parameters as JSON.
	Params json.RawMessage `json:"params,omitempty"`
}

// ActionResult is what an action returned ($returns), to be filled in
// at its path.
type ActionResult struct {
	Path    string          `json:"path"`
	Legacy  string          `json:"legacy,omitempty"`
	Returns json.RawMessage `json:"returns,omitempty"`
	// Chart, for vela/helm's #Render, is the fetched chart the evaluator
	// renders into $returns.
	Chart *ChartAction `json:"chart,omitempty"`
}

// StepRound is the answer to a StepInput: the actions to carry out next,
// or how the step ends.
type StepRound struct {
	// Actions may run now, in any order; their results come back in the
	// next StepInput.
	Actions []Action `json:"actions,omitempty"`
	// Control is set when a builtin action decides the step's fate:
	// StepWait, StepFail, StepSuspend or StepBreak.
	Control string `json:"control,omitempty"`
	// Duration is a suspend action's duration, if any.
	Duration string `json:"duration,omitempty"`
	// Message is the message the step's actions set last.
	Message string `json:"message,omitempty"`
	// Done is true when every action ran: Outputs hold the outputs.
	Done    bool                       `json:"done,omitempty"`
	Outputs map[string]json.RawMessage `json:"outputs,omitempty"`
}

// legacyAction is how a vela/op action maps to its current form: the
// provider and action, the fields that are its parameters, and the
// fields its results fill (field: name in $returns, "" for all of it).
type legacyAction struct {
	provider, do string
	inputs       []string
	fills        map[string]string
}

var legacyActions = map[string]legacyAction{
	"apply":             {"kube", "apply", []string{"cluster", "value", "patch"}, map[string]string{"value": "value"}},
	"patch":             {"kube", "patch", []string{"cluster", "value", "patch"}, map[string]string{"result": "result"}},
	"apply-in-parallel": {"kube", "apply-in-parallel", []string{"cluster", "value"}, nil},
	"read":              {"kube", "read", []string{"cluster", "value"}, map[string]string{"value": "value", "err": "err"}},
	"list":              {"kube", "list", []string{"cluster", "resource", "filter"}, map[string]string{"list": "values", "err": "err"}},
	"delete":            {"kube", "delete", []string{"cluster", "value", "filter"}, map[string]string{"err": "err"}},
	"do":                {"http", "do", []string{"method", "url", "request", "tls_config"}, map[string]string{"response": ""}},
	"send":              {"email", "send", []string{"from", "to", "content"}, nil},
	"string":            {"util", "string", []string{"bt"}, map[string]string{"str": "str"}},
	"log":               {"util", "log", []string{"data", "level", "source"}, nil},
	"create-config":     {"config", "create", []string{"name", "namespace", "template", "config"}, nil},
	"delete-config":     {"config", "delete", []string{"name", "namespace"}, nil},
	"read-config":       {"config", "read", []string{"name", "namespace"}, map[string]string{"config": "config"}},
	"list-config":       {"config", "list", []string{"template", "namespace"}, map[string]string{"configs": "configs"}},
	"wait":              {"builtin", "wait", []string{"continue", "message"}, nil},
	"suspend":           {"builtin", "suspend", []string{"duration", "message"}, nil},
	"break":             {"builtin", "break", []string{"message"}, nil},
	"fail":              {"builtin", "fail", []string{"message"}, nil},
	"message":           {"builtin", "message", []string{"message"}, nil},
	"var":               {"builtin", "var", []string{"method", "path", "value"}, nil},
}

var (
	pathDo       = cue.ParsePath("#do")
	pathProvider = cue.ParsePath("#provider")
	pathParams   = cue.ParsePath("$params")
	pathReturns  = cue.ParsePath("$returns")
)

// compileStep compiles a step template with KubeVela's packages.
func compileStep(src string) *compiled {
	text, err := withStdlib(src)
	if err != nil {
		return &compiled{err: err}
	}
	// Step templates read results that only exist once actions ran
	// (`req.$returns.body`): nothing is checked before they did.
	c := compileSource(text+contextDecl, false)
	c.actions = declaredActions(text)
	return c
}

// isAction reports whether v is a provider action: it has #do and
// #provider.
func isAction(v cue.Value) (flow.Runner, error) {
	if !v.LookupPath(pathDo).Exists() || !v.LookupPath(pathProvider).Exists() {
		return nil, nil
	}
	return flow.RunnerFunc(func(*flow.Task) error { return nil }), nil
}

// stepTask is one action found in the template.
type stepTask struct {
	path     string
	at       cue.Path // set for a definition template's actions
	provider string
	do       string
	legacy   string
	value    cue.Value
	deps     []string
}

// step evaluates a step template once (see StepInput).
func (c *compiled) step(in *StepInput) (*StepRound, *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	base, ferr := c.fill(in.Context, in.Params)
	if ferr != nil {
		return nil, ferr
	}
	if param := base.LookupPath(pathParameter); param.Exists() {
		if err := param.Validate(); err != nil {
			return nil, propsErr(flattenCUE(err, "parameter", false))
		}
	}
	// fills are what is unified at an action's path: its results.
	fills := map[string]cue.Value{}
	var order []string
	for _, d := range in.Done {
		var returns any
		if len(d.Returns) > 0 {
			dec := json.NewDecoder(bytes.NewReader(d.Returns))
			dec.UseNumber()
			if err := dec.Decode(&returns); err != nil {
				return nil, renderErr(d.Path, fmt.Errorf("the results of the action at %s do not parse: %w", d.Path, err))
			}
		}
		fv, err := c.fillValue(fillOf(d.Legacy, returns))
		if err != nil {
			return nil, renderErr(d.Path, err)
		}
		fills[d.Path] = fv
		order = append(order, d.Path)
	}
	out := &StepRound{}
	for range maxStepIterations {
		v := base
		for _, p := range order {
			v = v.FillPath(cue.ParsePath(p), fills[p])
		}
		// A field that does not evaluate (a response that is not JSON)
		// fails the step only if an action or an output reads it: the
		// actions are found field by field.
		tasks, err := findActions(v)
		if err != nil {
			return nil, renderErr("", err)
		}
		// A field declared as an action that does not evaluate to one (a
		// property outside the action's parameters, a definition the
		// package does not have) fails the step: it is never skipped.
		if err := c.checkDeclared(v, tasks); err != nil {
			return nil, err
		}
		var pending, ready []stepTask
		for _, t := range tasks {
			if _, ok := fills[t.path]; ok {
				continue
			}
			pending = append(pending, t)
			if !slices.ContainsFunc(t.deps, func(d string) bool { _, ok := fills[d]; return !ok }) {
				ready = append(ready, t)
			}
		}
		if len(pending) == 0 {
			outputs, err := stepOutputs(v, in.Outputs)
			if err != nil {
				return nil, err
			}
			out.Done, out.Outputs = true, outputs
			return out, nil
		}
		progressed := false
		var blocked error
		blockedWait := false
		// Control actions (wait, fail, suspend, break) decide last: the
		// other actions ready now run first, as their results may be
		// what a condition reads.
		slices.SortStableFunc(ready, func(a, b stepTask) int { return boolInt(isControl(a)) - boolInt(isControl(b)) })
		for _, t := range ready {
			if isControl(t) && (progressed || len(out.Actions) > 0) {
				break
			}
			params, err := actionParams(t)
			if err != nil {
				// Its parameters may read what another action returns.
				if blocked == nil {
					blocked = fmt.Errorf("the %s action at %s: %w", actionName(t), t.path, err)
					// A wait whose condition cannot be decided yet (a
					// status field not reported) waits, as KubeVela's.
					blockedWait = t.provider == "builtin" && t.do == "wait"
				}
				continue
			}
			if t.provider == "builtin" && t.do != "var" {
				var p struct {
					Continue bool   `json:"continue"`
					Message  string `json:"message"`
					Duration string `json:"duration"`
				}
				_ = json.Unmarshal(params, &p)
				if p.Message != "" {
					out.Message = p.Message
				}
				switch t.do {
				case "wait":
					if !p.Continue {
						out.Control = StepWait
						return out, nil
					}
				case "fail":
					out.Control = StepFail
					return out, nil
				case "break":
					out.Control = StepBreak
					return out, nil
				case "suspend":
					if !in.Resumed {
						out.Control, out.Duration = StepSuspend, p.Duration
						return out, nil
					}
				case "message":
				default:
					return nil, renderErr(t.path, fmt.Errorf("builtin action %q at %s is not known", t.do, t.path))
				}
				fills[t.path], _ = c.fillValue(map[string]any{})
				order = append(order, t.path)
				progressed = true
				continue
			}
			if t.provider == "util" && t.do == "string" {
				var p struct {
					BT []byte `json:"bt"`
				}
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, renderErr(t.path, fmt.Errorf("util.#ConvertString at %s: %w", t.path, err))
				}
				fv, err := c.fillValue(fillOf(t.legacy, map[string]any{"str": string(p.BT)}))
				if err != nil {
					return nil, renderErr(t.path, err)
				}
				fills[t.path] = fv
				order = append(order, t.path)
				progressed = true
				continue
			}
			out.Actions = append(out.Actions, Action{Path: t.path, Provider: t.provider, Do: t.do, Legacy: t.legacy, Params: params})
		}
		if len(out.Actions) > 0 {
			return out, nil
		}
		if !progressed {
			if blockedWait {
				out.Control = StepWait
				if out.Message == "" {
					out.Message = "waiting: " + blocked.Error()
				}
				return out, nil
			}
			if blocked == nil {
				blocked = fmt.Errorf("its actions wait for each other (%s)", actionNames(pending))
			}
			return nil, renderErr("", blocked)
		}
	}
	return nil, renderErr("", fmt.Errorf("the step's builtin actions did not settle after %d evaluations", maxStepIterations))
}

// fillValue compiles a fill into the template's context: through JSON,
// so that integers stay integers.
func (c *compiled) fillValue(x any) (cue.Value, error) {
	raw, err := json.Marshal(x)
	if err != nil {
		return cue.Value{}, err
	}
	return c.source(raw)
}

// fillOf is what is unified at an action's path for its results: its
// $returns, or, for a vela/op action, its own fields.
func fillOf(legacy string, returns any) any {
	if legacy == "" {
		if returns == nil {
			return map[string]any{}
		}
		return map[string]any{"$returns": returns}
	}
	la, ok := legacyActions[legacy]
	out := map[string]any{}
	if !ok {
		return out
	}
	m, _ := returns.(map[string]any)
	for field, from := range la.fills {
		if from == "" {
			if returns != nil {
				out[field] = returns
			}
			continue
		}
		if x, ok := m[from]; ok && x != nil && x != "" {
			out[field] = x
		}
	}
	return out
}

// findActions returns the template's actions with the actions each
// depends on, by path.
func findActions(v cue.Value) (tasks []stepTask, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("finding the step's actions: %v", p)
		}
	}()
	var found []*flow.Task
	if v.Err() == nil {
		found = flow.New(&flow.Config{}, v, isAction).Tasks()
	} else {
		// A field that does not evaluate (a response that is not JSON)
		// fails the step only if an action reads it: each top-level
		// field that evaluates is searched on its own, with the actions
		// it refers to elsewhere.
		iter, err := v.Fields()
		if err != nil {
			return nil, fmt.Errorf("the step's template: %w", flattenCUE(err, "", false))
		}
		seen := map[string]bool{}
		for iter.Next() {
			if iter.Value().Err() != nil {
				continue
			}
			root := cue.MakePath(iter.Selector())
			for _, t := range flow.New(&flow.Config{Root: root, InferTasks: true}, v, isAction).Tasks() {
				if p := t.Path().String(); !seen[p] {
					seen[p] = true
					found = append(found, t)
				}
			}
		}
	}
	for _, t := range found {
		tv := t.Value()
		do, err := tv.LookupPath(pathDo).String()
		if err != nil {
			return nil, fmt.Errorf("the action at %s: #do: %w", t.Path(), err)
		}
		provider, err := tv.LookupPath(pathProvider).String()
		if err != nil {
			return nil, fmt.Errorf("the action at %s: #provider: %w", t.Path(), err)
		}
		st := stepTask{path: t.Path().String(), provider: provider, do: do, value: tv}
		if provider == "op" {
			st.legacy = do
			if la, ok := legacyActions[do]; ok {
				st.provider, st.do = la.provider, la.do
			}
		}
		for _, d := range t.Dependencies() {
			st.deps = append(st.deps, d.Path().String())
		}
		tasks = append(tasks, st)
	}
	return tasks, nil
}

// actionParams returns an action's parameters, concrete, as JSON.
func actionParams(t stepTask) (json.RawMessage, error) {
	if t.legacy == "" {
		p := t.value.LookupPath(pathParams)
		if !p.Exists() {
			return json.RawMessage("{}"), nil
		}
		if err := p.Validate(cue.Concrete(true)); err != nil {
			return nil, flattenCUE(err, "$params", false)
		}
		return p.MarshalJSON()
	}
	la, ok := legacyActions[t.legacy]
	if !ok {
		// An application action of vela/op: refused by name.
		return nil, nil
	}
	m := map[string]json.RawMessage{}
	for _, f := range la.inputs {
		fv := t.value.LookupPath(cue.ParsePath(f))
		if !fv.Exists() {
			continue
		}
		if err := fv.Validate(cue.Concrete(true)); err != nil {
			return nil, flattenCUE(err, f, false)
		}
		raw, err := fv.MarshalJSON()
		if err != nil {
			return nil, err
		}
		m[f] = raw
	}
	return json.Marshal(m)
}

func actionName(t stepTask) string {
	if t.legacy != "" {
		return "op." + t.legacy
	}
	return t.provider + "." + t.do
}

func actionNames(ts []stepTask) string {
	var out []string
	for _, t := range ts {
		out = append(out, actionName(t)+" at "+t.path)
	}
	return strings.Join(out, ", ")
}

// stepOutputs evaluates the step's outputs over the template's value.
func stepOutputs(v cue.Value, exprs []NamedExpr) (map[string]json.RawMessage, *Error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	out := map[string]json.RawMessage{}
	for _, e := range exprs {
		x := v.Context().CompileString(e.Expr, cue.Scope(v), cue.InferBuiltins(true))
		if err := x.Validate(cue.Concrete(true)); err != nil {
			return nil, &Error{Reason: v1beta1.ReasonRenderFailed, Path: e.Name,
				Message: fmt.Sprintf("output %q: valueFrom %q: %v", e.Name, e.Expr, flattenCUE(err, "", false))}
		}
		raw, err := x.MarshalJSON()
		if err != nil {
			return nil, renderErr(e.Name, fmt.Errorf("output %q: %w", e.Name, err))
		}
		out[e.Name] = raw
	}
	return out, nil
}

// stepTemplateErr is a step template that does not compile.
func stepTemplateErr(src Source, err error) *Error {
	return renderErr("", fmt.Errorf("the template of %s %s/%s does not compile: %w", src.Kind, src.Namespace, src.Name, err))
}

// isControl reports whether an action decides the step's fate.
func isControl(t stepTask) bool {
	if t.provider != "builtin" {
		return false
	}
	switch t.do {
	case "wait", "fail", "suspend", "break":
		return true
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkDeclared fails on a field declared as an action (c.actions) that
// exists and did not evaluate to one.
func (c *compiled) checkDeclared(v cue.Value, tasks []stepTask) *Error {
	found := map[string]bool{}
	for _, t := range tasks {
		found[t.path] = true
	}
	for _, p := range c.actions {
		if found[p.String()] {
			continue
		}
		fv := v.LookupPath(p)
		if !fv.Exists() {
			continue
		}
		if err := fv.Err(); err != nil && !strings.Contains(err.Error(), "cannot reference optional field") && withoutIncomplete(err) != nil {
			return renderErr(p.String(), fmt.Errorf("the action at %s does not evaluate: %w", p, flattenCUE(err, "", false)))
		}
	}
	return nil
}
