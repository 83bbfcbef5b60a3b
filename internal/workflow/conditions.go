package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// Use makes the flow evaluate its steps' conditions with ev: the
// controller's bounded evaluator pool. A run of a flow without one fails
// a step that has a condition.
func (f *Flow) Use(ev cueeval.Evaluator) { f.ev = ev }

// CheckConditions checks that every condition evaluates to a boolean over
// the steps' status, here, before any step has run: a typo in a step name
// is refused now, not found when the step is reached. A condition stopped
// by the evaluation budget is returned as the evaluator's
// *cueeval.BudgetError.
func (f Flow) CheckConditions() error {
	pending := &v1beta1.WorkflowStatus{}
	var conds []*Step
	f.each(func(s *Step, _ *Step) {
		pending.Steps = append(pending.Steps, v1beta1.WorkflowStepStatus{StepStatus: v1beta1.StepStatus{Name: s.Name, Phase: v1beta1.WorkflowStepPending}})
		if s.If != "" && s.If != IfAlways && !s.readsInputs() {
			// A condition over the step's inputs has no value to read
			// before the run exports it: Steps checked what it names.
			conds = append(conds, s)
		}
	})
	if len(conds) == 0 {
		return nil
	}
	exprs := make([]string, len(conds))
	for i, s := range conds {
		exprs[i] = s.If
	}
	results, err := f.conditions(exprs, pending, nil)
	if err != nil {
		names := make([]string, len(conds))
		for i, s := range conds {
			names[i] = strconv.Quote(s.Name)
		}
		return fmt.Errorf("evaluating the if of steps %s: %w", strings.Join(names, ", "), err)
	}
	for i, res := range results {
		if res.Err != "" {
			return conds[i].conditionErr(res.Err)
		}
	}
	return nil
}

// conditions evaluates if expressions over the steps' status.
func (f Flow) conditions(exprs []string, st *v1beta1.WorkflowStatus, inputs map[string]json.RawMessage) ([]cueeval.ExprResult, error) {
	if f.ev == nil {
		return nil, errors.New("the workflow's conditions have no evaluator")
	}
	res, err := f.ev.Evaluate(&cueeval.Request{Bools: &cueeval.Expressions{Exprs: exprs, Scope: ifScope(st, inputs), What: "workflow step conditions"}})
	if err != nil {
		return nil, err
	}
	if len(res.Results) != len(exprs) {
		return nil, fmt.Errorf("evaluating workflow step conditions: %d results for %d conditions", len(res.Results), len(exprs))
	}
	return res.Results, nil
}

// runs evaluates the step's condition over the run's status and the
// values the step takes (inputs, by the output they come from): with no
// if, the step runs when no step it waits for failed (failed says
// whether one did), as in KubeVela.
func (s Step) runs(f Flow, st *v1beta1.WorkflowStatus, failed bool, inputs map[string]json.RawMessage) (bool, error) {
	switch s.If {
	case "":
		return !failed, nil
	case IfAlways:
		return true, nil
	}
	res, err := f.conditions([]string{s.If}, st, inputs)
	if err != nil {
		return false, fmt.Errorf("step %q: if %q: %w", s.Name, s.If, err)
	}
	if res[0].Err != "" {
		return false, s.conditionErr(res[0].Err)
	}
	return res[0].Bool, nil
}

// conditionErr says the step's condition does not evaluate.
func (s Step) conditionErr(msg string) error {
	return fmt.Errorf("step %q: if %q: %s (Steward reads always and CUE over status.<step>.phase, succeeded, failed, skipped, timeout, reason and message, and inputs[\"<output>\"], the values the step takes)", s.Name, s.If, msg)
}

// ifScope is what an if expression reads, as JSON: status.<step> holds
// each step's phase, reason and message and the booleans succeeded,
// failed, skipped and timeout (sub-steps included); inputs.<output> the
// values the step takes, by the output they come from, as KubeVela
// names them.
func ifScope(st *v1beta1.WorkflowStatus, inputs map[string]json.RawMessage) json.RawMessage {
	fields := map[string]any{}
	add := func(ss v1beta1.StepStatus) {
		fields[ss.Name] = map[string]any{
			"phase": ss.Phase, "reason": ss.Reason, "message": ss.Message,
			"succeeded": ss.Phase == v1beta1.WorkflowStepSucceeded, "failed": ss.Phase == v1beta1.WorkflowStepFailed,
			"skipped": ss.Phase == v1beta1.WorkflowStepSkipped, "timeout": ss.Phase == v1beta1.WorkflowStepFailed && ss.Reason == v1beta1.WorkflowStepReasonTimeout,
		}
	}
	for _, ss := range st.Steps {
		add(ss.StepStatus)
		for _, sub := range ss.SubStepsStatus {
			add(sub)
		}
	}
	scope := map[string]any{"status": fields}
	if len(inputs) > 0 {
		scope["inputs"] = inputs
	}
	raw, _ := json.Marshal(scope)
	return raw
}

// readsInputs reports whether the step's condition reads its inputs: it
// is evaluated once they are exported.
func (s Step) readsInputs() bool {
	if s.If == "" || s.If == IfAlways {
		return false
	}
	refs, err := refsOf(s.If)
	return err == nil && refs.inputs
}

// condRefs is what an if expression names, read from its syntax.
type condRefs struct {
	// inputs is whether it reads inputs at all; inputNames the inputs it
	// names (inputs.x, inputs["x"]) and steps the steps it names under
	// status (status.x, status["x"]).
	inputs            bool
	inputNames, steps []string
}

// refsOf reads what an if expression names. A name the expression
// computes (inputs[x]) is not known here and is left out.
func refsOf(expr string) (condRefs, error) {
	x, err := parser.ParseExpr("if", expr)
	if err != nil {
		return condRefs{}, err
	}
	var out condRefs
	add := func(root ast.Expr, name string) {
		id, ok := root.(*ast.Ident)
		if !ok {
			return
		}
		switch id.Name {
		case "inputs":
			out.inputNames = append(out.inputNames, name)
		case "status":
			out.steps = append(out.steps, name)
		}
	}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if name, _, err := ast.LabelName(n.Sel); err == nil {
				add(n.X, name)
			}
			// The selected label is no reference of its own.
			ast.Walk(n.X, visit, nil)
			return false
		case *ast.IndexExpr:
			if lit, ok := n.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if name, err := literal.Unquote(lit.Value); err == nil {
					add(n.X, name)
				}
			}
		case *ast.Field:
			ast.Walk(n.Value, visit, nil)
			return false
		case *ast.Ident:
			out.inputs = out.inputs || n.Name == "inputs"
		}
		return true
	}
	ast.Walk(x, visit, nil)
	return out, nil
}

// checkInputConditions checks, from their syntax, the conditions that
// read inputs (their values are exported only while the run goes, so
// CheckConditions cannot evaluate them before): the step takes inputs,
// each input named is one it takes, and each step named under status is
// a step of the workflow.
func checkInputConditions(f Flow) error {
	names := map[string]bool{}
	for s := range f.All() {
		names[s.Name] = true
	}
	for s := range f.All() {
		if !s.readsInputs() {
			continue
		}
		refs, _ := refsOf(s.If)
		takes := map[string]bool{}
		var from []string
		for _, in := range s.Inputs {
			takes[in.From] = true
			from = append(from, strconv.Quote(in.From))
		}
		if len(takes) == 0 {
			return fmt.Errorf("step %q: if %q reads inputs, and the step takes none (declare them: inputs: [{from: <output>}])", s.Name, s.If)
		}
		for _, n := range refs.inputNames {
			if !takes[n] {
				return fmt.Errorf("step %q: if %q reads inputs[%q], which the step does not take (it takes %s)", s.Name, s.If, n, strings.Join(from, ", "))
			}
		}
		for _, n := range refs.steps {
			if !names[n] {
				return fmt.Errorf("step %q: if %q reads status[%q], which names no step of the workflow", s.Name, s.If, n)
			}
		}
	}
	return nil
}

// wake asks for a pass within d.
// conditionRetry is how soon a step whose condition could not be
// evaluated within the budget is tried again.
const conditionRetry = 30 * time.Second
