// Package workflow runs an Application's workflow and is the one writer
// of its status.workflow. A Run is one pass of the workflow of the
// version the Application keeps, of one of three kinds:
//
//   - a gated run, for a workflow with more than deploy steps to run in
//     one pass: steps one after another or as a DAG (dependsOn), step
//     groups whose sub-steps run in parallel or one by one, suspend steps
//     that wait until the workflow is resumed (or for their duration),
//     deploy steps with auto: false, steps that wait for another
//     Application (depends-on-app), custom steps (WorkflowStepDefinitions),
//     and the steps' if conditions and timeouts. It decides which steps a
//     pass runs, and so which objects it applies;
//   - a one-pass run, for any other version: it applies nothing of its
//     own and reports the steps KubeVela would show, each with its phase
//     from what the pass delivered;
//   - a refused run, for a workflow Steward refused before anything of it
//     was applied: the step at fault failed, the others skipped.
//
// It is pure: given the steps, the status of the run so far and the time,
// a constructor says which steps a pass runs, and Finish records what the
// pass achieved (the controller's Judge), in KubeVela's status.workflow
// shape. The controller writes Report into status.workflow and nothing
// else there.
//
// Usage:
//
//	flow, err := workflow.Steps(wf)         // parse and check (steps.go)
//	flow.Use(evaluator)                     // conditions are CUE, evaluated within the budget
//	err = flow.CheckConditions()            // before a version is recorded (conditions.go)
//	run := workflow.AdvanceWith(flow, app.Status.Workflow, revision, now, data) // gated (run.go)
//	run := workflow.OnePassRun(app, app.Status.Workflow, revision, now)         // one pass (onepass.go)
//	run := workflow.RefusedRun(app, revision, err, app.Status.Workflow, now)    // refused (refused.go)
//	// apply what run.Reached delivers (gated runs), then
//	run.Finish(judge, now)                  // judge.go
//	app.Status.Workflow = run.Report()
//
// Files:
//
//	flow.go        the flow of a gated workflow and its step types, as recorded with a version
//	steps.go       parsing and validation of a workflow (Steps, Mode)
//	check.go       the step types and properties Steward carries out (Check)
//	conditions.go  if conditions, evaluated within the budget
//	run.go         the Run type and the gated run's state machine (AdvanceWith, Finish)
//	report.go      what a run tells the controller: its kind, Report, the steps a pass runs
//	judge.go       what Finish asks of the controller (Judge, Delivery)
//	suspend.go     suspend steps and approvals
//	timeout.go     step timeouts
//	custom.go      custom steps (WorkflowStepDefinitions): their verdicts, their missing definitions
//	data.go        values passed between steps (inputs, outputs)
//	onepass.go     one-pass runs (OnePassRun)
//	refused.go     refused runs (RefusedRun)
//	default.go     the workflow KubeVela generates for an Application without one, and
//	               the steps a one-pass version reports (OnePass)
package workflow
