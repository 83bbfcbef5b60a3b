package workflow

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// A refused workflow is a failed run of the newest revision: the step at
// fault failed (its group with it), every other skipped, since none ran.
func TestRefusedRun_TheStepAtFaultFailedTheOthersSkipped(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	step := func(name, typ string) v1beta1.WorkflowStepBase {
		return v1beta1.WorkflowStepBase{Name: name, Type: typ}
	}
	app := &v1beta1.Application{Spec: v1beta1.ApplicationSpec{Workflow: &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
		{WorkflowStepBase: step("deploy", "deploy")},
		{WorkflowStepBase: step("", "step-group"), SubSteps: []v1beta1.WorkflowStepBase{step("a", "deploy"), step("tell", "notify")}},
	}}}}
	for name, tt := range map[string]struct {
		err    error
		reason string
		want   string
	}{
		"an unsupported step": {err: &UnsupportedError{Step: "tell", What: `step type "notify"`}, reason: v1beta1.ReasonUnsupportedWorkflow,
			want: "deploy=skipped step-group-1=failed[a=skipped tell=failed]"},
		"a step type with no definition": {err: fmt.Errorf("refused: %w", &MissingDefinitionError{Step: "tell", Type: "notify"}), reason: v1beta1.ReasonDefinitionNotFound,
			want: "deploy=skipped step-group-1=failed[a=skipped tell=failed]"},
		"the workflow itself": {err: errors.New("no steps recorded"),
			want: "deploy=skipped step-group-1=skipped[a=skipped tell=skipped]"},
	} {
		t.Run(name, func(t *testing.T) {
			r := RefusedRun(app, "web-v2", tt.err, nil, now)
			r.Finish(JudgeFunc(func(string) (bool, string) { return true, "" }), now)
			st := r.Report()
			if r.Gated() || !st.Finished || !st.Terminated || st.Phase != v1beta1.WorkflowPhaseFailed || st.AppRevision != "web-v2" || st.Message != tt.err.Error() {
				t.Fatalf("run %+v", st)
			}
			got := ""
			for i, s := range st.Steps {
				if i > 0 {
					got += " "
				}
				got += s.Name + "=" + s.Phase
				if len(s.SubStepsStatus) > 0 {
					got += "["
					for j, sub := range s.SubStepsStatus {
						if j > 0 {
							got += " "
						}
						got += sub.Name + "=" + sub.Phase
						if sub.Phase == v1beta1.WorkflowStepFailed && sub.Reason != tt.reason {
							t.Errorf("reason %q, want %q", sub.Reason, tt.reason)
						}
					}
					got += "]"
				}
			}
			if got != tt.want {
				t.Fatalf("steps %q, want %q", got, tt.want)
			}
		})
	}
	// The same failed run keeps its times.
	first := RefusedRun(app, "web-v2", errors.New("x"), nil, now).Report()
	again := RefusedRun(app, "web-v2", errors.New("x"), first, now.Add(time.Hour)).Report()
	if !again.StartTime.Equal(&first.StartTime) || !again.EndTime.Equal(&first.EndTime) {
		t.Fatalf("times moved: %+v", again)
	}
}
