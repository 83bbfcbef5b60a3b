package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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
		if s.If != "" && s.If != IfAlways {
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
	results, err := f.conditions(exprs, pending)
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
func (f Flow) conditions(exprs []string, st *v1beta1.WorkflowStatus) ([]cueeval.ExprResult, error) {
	if f.ev == nil {
		return nil, errors.New("the workflow's conditions have no evaluator")
	}
	res, err := f.ev.Evaluate(&cueeval.Request{Bools: &cueeval.Expressions{Exprs: exprs, Scope: ifScope(st), What: "workflow step conditions"}})
	if err != nil {
		return nil, err
	}
	if len(res.Results) != len(exprs) {
		return nil, fmt.Errorf("evaluating workflow step conditions: %d results for %d conditions", len(res.Results), len(exprs))
	}
	return res.Results, nil
}

// runs evaluates the step's condition over the run's status: with no if,
// the step runs when no step it waits for failed (failed says whether one
// did), as in KubeVela.
func (s Step) runs(f Flow, st *v1beta1.WorkflowStatus, failed bool) (bool, error) {
	switch s.If {
	case "":
		return !failed, nil
	case IfAlways:
		return true, nil
	}
	res, err := f.conditions([]string{s.If}, st)
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
	return fmt.Errorf("step %q: if %q: %s (Steward reads always and CUE over status.<step>.phase, succeeded, failed, skipped, timeout, reason and message; inputs are not read in if)", s.Name, s.If, msg)
}

// ifScope is what an if expression reads, as JSON: status.<step> holds
// each step's phase, reason and message and the booleans succeeded,
// failed, skipped and timeout (sub-steps included).
func ifScope(st *v1beta1.WorkflowStatus) json.RawMessage {
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
	raw, _ := json.Marshal(map[string]any{"status": fields})
	return raw
}

// wake asks for a pass within d.
// conditionRetry is how soon a step whose condition could not be
// evaluated within the budget is tried again.
const conditionRetry = 30 * time.Second
