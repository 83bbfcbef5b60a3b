// Package report renders a run's Results into docs/benchmarks.md and its
// PNG charts, and holds the figures against what Steward promised: the
// targets of issues 7, 10, 12 and 35, and the budget per app. stewardbench
// writes the page after every run (and with --report-only from a results
// file), and fails the run when a figure is over budget.
//
// # Usage
//
//	err := report.Write(res, "docs/benchmarks.md", "docs/img", "bench/results/latest.json")
//	for _, o := range report.OverBudget(res) {
//		fmt.Fprintln(os.Stderr, o)
//	}
//
// # Implementation notes
//
//   - The page is a pure function of the results (and of the scenarios'
//     fixtures it describes, such as the size of an unrelated
//     Deployment): the same results file gives the same page and charts,
//     byte for byte, so a regenerated page shows only what changed.
//   - Watch mode: the targets of issue 12 are checked on the first
//     controller whose command line has --drift-detection=watch
//     (record.Controller.IsWatchMode), those of issues 7 and 10 on the
//     first one without (subjects, report.go); so are the budgets.
//   - The budget (budget.go) holds a figure only when the run measured it
//     at the size the budget is written for; results that measured none
//     (older ones) render without the section.
//   - A section renders only when the results hold its scenario, and a
//     column only when some result measured it: results recorded before a
//     figure existed (kept by --merge, or soak-before.json) render as they
//     did.
//   - Nothing here asserts timings; the tests render fixtures and check
//     tables, verdicts and charts.
//
// # Files
//
//	apprevisions.go the ApplicationRevision storage section (figures from internal/apprevision's TestStorage)
//	bigapp.go       the big-app section: dispatch time and tracker sizes
//	budget.go       Budget and BudgetCheck: heap per app and CPU per re-sync held against docs/benchmarks.md#budget
//	charts.go       the report's PNG charts (gonum/plot)
//	definitions.go  the definitions section: definition changes and admission latency
//	format.go       the report's Markdown tables and number formats
//	helm.go         the helm section
//	managed.go      the managed-objects section (heap per managed object)
//	report.go       Write: the page, its intro and method, the memory, steady, drift, fleet and CPU sections; targets
//	scale.go        the scale and shards sections and the targets of issue 35
//	soak.go         the soak section
//	summary.go      the summary: each target with a verdict per controller
package report
