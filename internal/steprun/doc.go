// Package steprun runs a custom workflow step: a WorkflowStepDefinition's
// CUE template, evaluated in the sandbox's evaluators (within the
// evaluation budget) one round at a time. Each round answers with the
// provider actions that may run next, in dependency order; Run carries
// them out with the provider handlers and evaluates again with their
// results, until the template's builtin actions end the step (wait, fail,
// suspend, break) or every action ran.
//
// Usage:
//
//	runner := steprun.Runner{Renderer: renderer, Providers: registry}
//	outcome := runner.Run(ctx, env, steprun.Step{...})
//	flow.Settle(step.Name, outcome.Verdict())
//
// Files:
//
//	background.go  Background: remote actions (http.do, email.send) off the reconcile workers, results held per run
//	steprun.go     Runner, Step and Outcome: a step's rounds of evaluation and actions; step reasons
package steprun
