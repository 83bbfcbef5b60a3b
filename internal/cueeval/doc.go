// Package cueeval evaluates the CUE of definitions and workflows and
// returns plain data: JSON bytes, strings and booleans, never a CUE value.
// Every CUE evaluation in Steward happens here, behind one interface, so
// that it can run in a bounded child process (internal/sandbox) and a
// definition written by a tenant cannot take the controller's memory or
// time. (Only parsing a workflow output's valueFrom, at most 4096 bytes,
// happens elsewhere.)
//
// Usage:
//
//	var ev cueeval.Evaluator = cueeval.NewLocal(0) // in-process, unbounded
//	res, err := ev.Evaluate(&cueeval.Request{Render: &cueeval.TemplateInput{
//		Source: cueeval.Source{Kind: cueeval.KindComponent, Name: "webservice", Text: tmpl},
//		Context: ctxJSON, Params: paramsJSON,
//	}})
//	var ee *cueeval.Error        // the template or its input is at fault
//	var be *cueeval.BudgetError  // the evaluation hit its time, memory or output limit
//
// Callers in Steward use a sandbox.Pool, which implements Evaluator with
// child processes; NewLocal is what those processes run, and what pure
// unit tests use.
//
// Implementation notes:
//
//   - One Request holds one operation: render a template, inspect it
//     (parameter defaults, the workload it renders), evaluate a
//     definition's status parts, check a source compiles, or evaluate
//     workflow expressions in a scope. Inputs are JSON bytes, so that a
//     request crosses a pipe as it is, and outputs are JSON bytes and
//     strings, so that nothing of CUE leaves the evaluation.
//   - Each source is compiled once into its own CUE context and kept in a
//     bounded LRU (k8s.io/utils/lru) under its Key; an entry is replaced
//     when the Version the caller gives (UID, resourceVersion, hash of the
//     text) changes. A compiled source has a mutex: CUE values are not
//     safe for concurrent evaluation.
//   - Before compiling, CUE written for KubeVela's older evaluator is
//     rewritten as KubeVela v1.11 rewrites it (upgrade.go): list addition
//     and multiplication become list.Concat and list.Repeat, and an
//     `error` label that hides the error builtin is quoted.
//   - Status parts are evaluated in KubeVela's order, details, then
//     healthPolicy, then customStatus, each seeing in context.status what
//     the ones before found (status.go).
//   - Data is compiled with BuildExpr, which the CUE runtime does not
//     index, so a long-lived compiled template does not grow with the
//     evaluations it serves.
//   - Trait patches are exported as a tree (PatchNode) that keeps the
//     // +patchKey and // +patchStrategy comment directives CUE carries
//     on fields; internal/render applies them in Go.
//   - A panic of the CUE evaluator is returned as an *Error, never
//     propagated.
//
// Files:
//
//	actions.go    provider actions of component templates (vela/helm #Render): ChartAction, ChartInfo
//	compile.go    Local, the in-process Evaluator, and its cache of compiled sources
//	errors.go     Error (the source is at fault), BudgetError and Limit (a bound was hit), ErrUnavailable
//	evaluator.go  the Evaluator interface, Source, Request and Response: what goes in and out of an evaluation
//	expr.go       workflow expressions (if, inputs) evaluated to booleans or JSON
//	local.go      Local.Evaluate: one Request run in this process
//	patch.go      Patch and PatchNode: a trait's patch as plain data with its +patchKey/+patchStrategy directives
//	stdlib.go     KubeVela's CUE packages (vela/op, vela/kube, vela/http, ...) from stdlib/*.cue, embedded
//	status.go     spec.status evaluated: details, healthPolicy's isHealth, customStatus's message
//	step.go       WorkflowStepDefinition templates evaluated in rounds: StepInput, Action, ActionResult, StepRound
//	template.go   templates filled with context and parameter and exported: output, outputs, patches
//	upgrade.go    upgradeSyntax: what KubeVela's older CUE accepted, rewritten as KubeVela itself does
package cueeval
