// Package workflow runs an Application's workflow when it has more than
// deploy steps to run in one pass: steps one after another or as a DAG
// (dependsOn), step groups whose sub-steps run in parallel or one by one,
// suspend steps that wait until the workflow is resumed (or for their
// duration), deploy steps with auto: false, steps that wait for another
// Application (depends-on-app), and the steps' if conditions and timeouts.
// It is pure: given the steps, the status of the run so far and the time,
// Advance says which steps a pass runs, and Finish records what the pass
// achieved, in KubeVela's status.workflow shape.
//
// Only workflows with a gate (Gated) are run here; any other workflow is
// delivered in one pass, as before.
//
// Usage:
//
//	flow, err := workflow.Steps(wf)         // parse and check (steps.go)
//	flow.Use(evaluator)                     // conditions are CUE, evaluated within the budget
//	err = flow.CheckConditions()            // before a version is recorded (conditions.go)
//	run := workflow.AdvanceWith(flow, app.Status.Workflow, revision, now, data) // run.go
//	// apply what run.Reached delivers, then
//	run.Finish(judge, now)
//
// Where things are: the flow and its step types (flow.go); parsing and
// validation of a workflow (steps.go, and check.go for the step types and
// properties Steward carries out); if conditions (conditions.go); the run
// state machine (run.go), suspend steps and approvals (suspend.go),
// timeouts (timeout.go); values passed between steps (data.go); the
// workflow KubeVela generates for an Application without one (default.go).
package workflow
