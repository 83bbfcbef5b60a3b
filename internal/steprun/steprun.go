package steprun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/workflow"
)

// MaxRounds bounds the evaluations of one run of a step: a template
// whose actions chain deeper is failed, never run for ever.
const MaxRounds = 32

// MaxActions bounds the provider actions one run of a step carries out.
const MaxActions = 64

// Step reasons, in status.workflow.steps[].reason.
const (
	// ReasonAction: a provider action failed; the step waits and runs
	// again (transient: a webhook down).
	ReasonAction = "Action"
	// ReasonUnsupported: the template asks for a provider action Steward
	// does not carry out, or imports a package it does not provide.
	ReasonUnsupported = "Unsupported"
	// ReasonTemplate: the template does not evaluate with these
	// properties.
	ReasonTemplate = "Template"
	// ReasonFail: the template's #Fail action failed the step.
	ReasonFail = "Fail"
	// ReasonWait: a #ConditionalWait is not met yet.
	ReasonWait = "Wait"
	// ReasonRefused: a provider action was refused for good (an object
	// another Application owns, one outside the Application's namespace).
	ReasonRefused = "Refused"
	// ReasonApplying: a kube action recorded objects, which are applied
	// before the step runs again.
	ReasonApplying = "Applying"
	// ReasonActionRunning: a remote action (http.do, email.send) runs in
	// the background; the step goes on when it ends.
	ReasonActionRunning = "ActionRunning"
)

// FlagMaxRunResult is the flag of Runner.MaxRunBytes, for messages.
const FlagMaxRunResult = "--max-step-result-size"

// DefaultMaxRunBytes bounds the results of one run of a step when the
// Runner sets none.
const DefaultMaxRunBytes = 16 << 20

// Runner runs custom steps.
type Runner struct {
	Renderer  *render.Renderer
	Providers provider.Registry
	// Background runs remote actions off the caller's goroutine; nil runs
	// them in line.
	Background *Background
	// MaxRunBytes bounds the results of all actions of one run together,
	// as JSON: what every evaluation of the step is given back (0 is
	// DefaultMaxRunBytes).
	MaxRunBytes int64
}

// Step is one run of a custom step.
type Step struct {
	// Name and Type are the step's; Definition is its step definition.
	Name       string
	Type       string
	Definition *metav1.ObjectMeta
	Template   string
	// Params is the step's parameter (properties with inputs filled in).
	Params json.RawMessage
	// Context is KubeVela's step context (name, namespace, appName,
	// appRevision, stepName, stepSessionID, ...).
	Context map[string]any
	// Outputs are the step's outputs.
	Outputs []workflow.Output
	// Resumed says the step suspended itself and was resumed.
	Resumed bool
	// Started is when the step first ran: waits back off from it.
	Started time.Time
	// Run names this run of the step, whose remote actions' results
	// Background keeps until the run ends.
	Run RunID
}

// Outcome is how one run of a step ended.
type Outcome struct {
	workflow.Verdict
	// Actions are the provider actions carried out, by name, in order.
	Actions []string
}

// Run runs a step once, to its end or until it waits. A run waiting on a
// remote action or on objects it recorded goes on in a later pass with
// the results it has; any other end releases them.
func (r *Runner) Run(ctx context.Context, env *provider.Env, st Step) Outcome {
	out := r.run(ctx, env, st)
	if r.Background != nil && out.Reason != ReasonActionRunning && out.Reason != ReasonApplying {
		r.Background.Release(st.Run)
	}
	return out
}

func (r *Runner) maxRunBytes() int64 {
	if r.MaxRunBytes > 0 {
		return r.MaxRunBytes
	}
	return DefaultMaxRunBytes
}

func (r *Runner) run(ctx context.Context, env *provider.Env, st Step) Outcome {
	var out Outcome
	ctxRaw, err := json.Marshal(st.Context)
	if err != nil {
		return failed(out, ReasonTemplate, fmt.Sprintf("step context: %v", err))
	}
	in := &cueeval.StepInput{
		Source:  r.Renderer.StepSource(st.Definition, st.Template),
		Context: ctxRaw,
		Params:  st.Params,
		Resumed: st.Resumed,
	}
	for _, o := range st.Outputs {
		in.Outputs = append(in.Outputs, cueeval.NamedExpr{Name: o.Name, Expr: o.ValueFrom})
	}
	message := ""
	var held int64 // bytes of the results in.Done carries
	for range MaxRounds {
		round, rerr := r.Renderer.EvaluateStep(in, env.Namespace)
		if rerr != nil {
			if rerr.Reason == v1beta1.ReasonEvaluationBudgetExceeded {
				return failed(out, v1beta1.ReasonEvaluationBudgetExceeded, rerr.Error())
			}
			if errors.Is(rerr, cueeval.ErrUnavailable) {
				return waiting(out, st, ReasonTemplate, rerr.Error())
			}
			var up *cueeval.UnknownPackageError
			if errors.As(rerr, &up) {
				return failed(out, ReasonUnsupported, fmt.Sprintf("step definition %q %v", st.Type, rerr.Err))
			}
			return failed(out, ReasonTemplate, fmt.Sprintf("step definition %q: %v", st.Type, rerr.Err))
		}
		if round.Message != "" {
			message = round.Message
		}
		switch round.Control {
		case cueeval.StepWait:
			msg := message
			if msg == "" {
				msg = "waiting for a condition of the step to be met"
			}
			return waiting(out, st, ReasonWait, msg)
		case cueeval.StepFail:
			msg := message
			if msg == "" {
				msg = "failed by the step"
			}
			return failed(out, ReasonFail, msg)
		case cueeval.StepSuspend:
			out.Phase, out.Message = v1beta1.WorkflowStepSuspending, message
			if round.Duration != "" {
				d, err := time.ParseDuration(round.Duration)
				if err != nil || d <= 0 {
					return failed(out, ReasonTemplate, fmt.Sprintf("suspend duration %q: want a positive duration such as 30s", round.Duration))
				}
				out.Duration = d
			}
			return out
		case cueeval.StepBreak:
			out.Phase, out.Message = v1beta1.WorkflowStepSucceeded, message
			return out
		}
		if round.Done {
			out.Phase, out.Message, out.Values = v1beta1.WorkflowStepSucceeded, message, round.Outputs
			return out
		}
		var pending, running []string
		for _, a := range round.Actions {
			if len(out.Actions) >= MaxActions {
				return failed(out, ReasonTemplate, fmt.Sprintf("the step ran %d provider actions, the most one run of a step may", MaxActions))
			}
			call := provider.Call{Provider: a.Provider, Do: a.Do, Params: a.Params}
			out.Actions = append(out.Actions, call.Name())
			returns, err, ready := r.do(ctx, env, st, a.Path, call)
			if !ready {
				running = append(running, fmt.Sprintf("%s at %s", call.Name(), a.Path))
				continue
			}
			if err == nil && int64(len(returns)) > env.MaxResultBytes && env.MaxResultBytes > 0 {
				err = &provider.TooLargeError{What: fmt.Sprintf("the result of %s", call.Name()), Limit: env.MaxResultBytes, Flag: provider.FlagMaxActionResult}
			}
			var unsupported *provider.UnsupportedError
			var refused *provider.RefusedError
			var tooLarge *provider.TooLargeError
			switch {
			case errors.As(err, &unsupported):
				return failed(out, ReasonUnsupported, fmt.Sprintf("step definition %q: %v", st.Type, err))
			case errors.As(err, &refused):
				reason := ReasonRefused
				if be := boundary.As(err); be != nil {
					reason = be.Reason
				} else if egress.IsDenied(err) {
					reason = egress.Reason
				}
				env.Log.V(1).Info("Workflow step action refused", "step", st.Name, "action", call.Name(), "reason", reason, "error", err.Error())
				return failed(out, reason, fmt.Sprintf("%s at %s: %v", call.Name(), a.Path, err))
			case errors.As(err, &tooLarge):
				env.Log.V(1).Info("Workflow step action result refused: too large", "step", st.Name, "action", call.Name(), "error", err.Error())
				return failed(out, provider.ReasonTooLarge, fmt.Sprintf("%s at %s: %v", call.Name(), a.Path, err))
			case errors.Is(err, provider.ErrPending):
				// The other actions of the round run first: what they
				// apply is recorded in the same pass.
				pending = append(pending, err.Error())
				continue
			case err != nil:
				env.Log.V(1).Info("Workflow step action failed", "step", st.Name, "action", call.Name(), "error", err.Error())
				return waiting(out, st, ReasonAction, fmt.Sprintf("%s at %s: %v", call.Name(), a.Path, err))
			}
			held += int64(len(returns))
			if held > r.maxRunBytes() {
				return failed(out, provider.ReasonTooLarge, fmt.Sprintf("the results of the step's actions add up to more than %s, the most one run of a step may hold (%s); the last was %s at %s",
					provider.FormatBytes(r.maxRunBytes()), FlagMaxRunResult, call.Name(), a.Path))
			}
			in.Done = append(in.Done, cueeval.ActionResult{Path: a.Path, Legacy: a.Legacy, Returns: returns})
		}
		if len(running) > 0 {
			// Requeued when an action ends (Background.Done); the retry
			// is only a safety net.
			out.Phase, out.Reason = v1beta1.WorkflowStepRunning, ReasonActionRunning
			out.Message = "waiting for " + strings.Join(running, ", ") + " (run in the background; the step goes on when it ends)"
			out.Retry = r.Background.Timeout + time.Second
			return out
		}
		if len(pending) > 0 {
			out = waiting(out, st, ReasonApplying, strings.Join(pending, "; "))
			out.Retry = 0
			return out
		}
	}
	return failed(out, ReasonTemplate, fmt.Sprintf("the step's actions did not end after %d rounds", MaxRounds))
}

// do carries out one action: a remote one through Background (ready is
// false while it runs), any other in line.
func (r *Runner) do(ctx context.Context, env *provider.Env, st Step, path string, call provider.Call) (json.RawMessage, error, bool) {
	if r.Background == nil || !provider.Remote(call.Name()) {
		returns, err := r.Providers.Do(ctx, env, call)
		return returns, err, true
	}
	return r.Background.Result(st.Run, path, call.Name(), call.Params, func(ctx context.Context) (json.RawMessage, error) {
		return r.Providers.Do(ctx, env, call)
	})
}

func failed(out Outcome, reason, msg string) Outcome {
	out.Phase, out.Reason, out.Message = v1beta1.WorkflowStepFailed, reason, msg
	return out
}

// waiting leaves the step running, to run again after a back-off that
// grows with how long it has waited: 1s doubling to a minute, as
// KubeVela's workflow backs off.
func waiting(out Outcome, st Step, reason, msg string) Outcome {
	out.Phase, out.Reason, out.Message = v1beta1.WorkflowStepRunning, reason, msg
	out.Retry = Backoff(time.Since(st.Started))
	return out
}

// Backoff is how long a step that has waited for waited waits next.
func Backoff(waited time.Duration) time.Duration {
	d := time.Second
	for d < time.Minute && d*2 <= waited {
		d *= 2
	}
	return d
}
