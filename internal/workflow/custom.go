package workflow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Native reports whether Steward runs a step type itself. Every other
// type is a custom step: a WorkflowStepDefinition's CUE template, which
// the controller runs (internal/steprun). A definition named like a
// native type does not replace it.
func Native(stepType string) bool {
	switch stepType {
	case v1beta1.WorkflowStepTypeDeploy, v1beta1.WorkflowStepTypeApplyComponent, v1beta1.WorkflowStepTypeApplyObject,
		v1beta1.WorkflowStepTypeSuspend, v1beta1.WorkflowStepTypeStepGroup, v1beta1.WorkflowStepTypeDependsOnApp,
		v1beta1.WorkflowStepTypeApplyApplication:
		return true
	}
	return false
}

// CustomTypes returns the custom step types a workflow names (sub-steps
// included), each once.
func CustomTypes(wf *v1beta1.Workflow) []string {
	if wf == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if !Native(t) && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, s := range wf.Steps {
		add(s.Type)
		for _, sub := range s.SubSteps {
			add(sub.Type)
		}
	}
	return out
}

// MissingDefinitionError is a custom step whose type has no
// WorkflowStepDefinition: the version is refused, nothing of it applied.
type MissingDefinitionError struct {
	Step, Type string
	// Namespaces are where the definition was looked for.
	Namespaces []string
}

func (e *MissingDefinitionError) Error() string {
	what := "WorkflowStepDefinition"
	if name, rev, ok := strings.Cut(e.Type, "@v"); ok {
		// A pinned revision (notify@v2) is read from DefinitionRevision notify-v2.
		what = fmt.Sprintf("DefinitionRevision %q", name+"-v"+rev)
	}
	return fmt.Sprintf("workflow step %q: step type %q has no %s in namespace %s; nothing of this version is applied",
		e.Step, e.Type, what, strings.Join(quoted(e.Namespaces), " or "))
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// ReasonResumed marks, in a running custom step's status, a step resumed
// after its own #Suspend: the suspend stays passed until the step ends.
const ReasonResumed = "Resumed"

// Verdict is how a custom step the controller ran in this pass ended.
type Verdict struct {
	// Phase is WorkflowStepSucceeded, WorkflowStepFailed,
	// WorkflowStepRunning (it waits: it runs again after Retry) or
	// WorkflowStepSuspending (the run suspends at it, for Duration when
	// set, else until resumed).
	Phase    string
	Reason   string
	Message  string
	Retry    time.Duration
	Duration time.Duration
	// Values are the outputs the step exported, by name.
	Values map[string]json.RawMessage
}

// Custom names the custom steps this pass runs, with whether each was
// resumed after suspending itself (its suspend actions then pass).
func (r *Run) Custom() map[string]bool {
	if r == nil {
		return nil
	}
	out := map[string]bool{}
	for _, name := range r.running {
		if s, ok := r.Step(name); ok && s.Custom {
			out[name] = r.resumedCustom[name] || r.status[name].Reason == ReasonResumed
		}
	}
	return out
}

// Settle records how a custom step ended this pass; Finish applies it.
func (r *Run) Settle(name string, v Verdict) {
	if r.verdicts == nil {
		r.verdicts = map[string]Verdict{}
	}
	r.verdicts[name] = v
}

// resumeAt is the note a custom step suspending for a duration keeps in
// its message: when it resumes by itself.
var resumeAt = regexp.MustCompile(`\(resumes by itself at ([0-9TZ:+.-]+)\)$`)

// settleCustom applies a custom step's verdict; it reports whether the
// step ran to an end (succeeded or failed).
func (r *Run) settleCustom(s *Step, ss *v1beta1.StepStatus, v Verdict, now time.Time) bool {
	t := metav1.NewTime(now)
	switch v.Phase {
	case v1beta1.WorkflowStepSucceeded:
		ss.Phase, ss.Reason, ss.Message, ss.LastExecuteTime = v1beta1.WorkflowStepSucceeded, "", v.Message, t
		r.Export(v.Values)
		return true
	case v1beta1.WorkflowStepFailed:
		ss.Phase, ss.Reason, ss.Message, ss.LastExecuteTime = v1beta1.WorkflowStepFailed, v.Reason, v.Message, t
		return true
	case v1beta1.WorkflowStepSuspending:
		msg := v.Message
		if msg == "" {
			msg = "suspended by the step"
		}
		if v.Duration > 0 {
			msg += fmt.Sprintf(" (resumes by itself at %s)", now.Add(v.Duration).UTC().Format(time.RFC3339))
			r.wake(v.Duration)
		}
		r.wait(s, ss, msg, fmt.Sprintf("suspended at step %q", s.Name))
		return false
	default:
		ss.Message = v.Message
		if ss.Reason != ReasonResumed {
			// A step resumed after suspending itself keeps saying so
			// until it ends: its suspend actions stay passed.
			ss.Reason = v.Reason
		}
		if v.Retry > 0 {
			r.wake(v.Retry)
		}
		r.waited = true
		return false
	}
}

// customSuspended handles a custom step that suspended itself in an
// earlier pass: resumed (by hand, or its duration passed) it runs again
// with its suspend actions passed; otherwise it keeps waiting.
func (r *Run) customSuspended(s *Step, ss *v1beta1.StepStatus) bool {
	resumed := r.resumed(ss)
	if m := resumeAt.FindStringSubmatch(ss.Message); !resumed && m != nil && !r.manual {
		if at, err := time.Parse(time.RFC3339, m[1]); err == nil {
			if left := at.Sub(r.now); left > 0 {
				r.wake(left)
			} else {
				resumed = true
			}
		}
	}
	if !resumed {
		r.wait(s, ss, ss.Message, fmt.Sprintf("suspended at step %q", s.Name))
		return false
	}
	if r.resumedCustom == nil {
		r.resumedCustom = map[string]bool{}
	}
	r.resumedCustom[s.Name] = true
	ss.Phase, ss.Message, ss.Reason = v1beta1.WorkflowStepRunning, "", ReasonResumed
	r.settleSuspend()
	return true
}

// StepStatus returns the status of a step of the run, by name.
func (r *Run) StepStatus(name string) (v1beta1.StepStatus, bool) {
	if r == nil || r.status[name] == nil {
		return v1beta1.StepStatus{}, false
	}
	return *r.status[name], true
}
