// Package record is what a benchmark run records: the profile it ran at,
// the controllers it measured and the host, and every scenario's figures,
// as bench/results/*.json holds them. It is pure data, JSON and the rules
// that read it (growth, per-object heap, quantiles, bounds); the scenarios
// (bench/scenario) fill it in, the report (bench/report) renders it, and
// measure reads the figures that go into it.
//
// # Usage
//
//	prev, err := record.Read("bench/results/latest.json")
//	res = record.Merge(prev, res, []string{record.ScenarioSoak}) // res ran the soak only
//	err = res.WriteJSON("bench/results/latest.json")
//
// # Implementation notes
//
//   - JSON is the contract: bench/results/ keeps runs from every version of
//     the harness, and --merge and --soak-before read them back. A field
//     added later is omitempty, so results recorded before it was measured
//     read as zero and write as before (CPUCost.Measured says which).
//   - Durations are written as seconds (Duration), so that the files read
//     as the report does.
//   - Merge keeps, for every scenario a run skipped, the earlier run's
//     figures together with the profile they were measured at and the run
//     they came from (Results.Earlier), so a page can mix runs honestly.
//   - Controller is the command line a run records; the placeholders it
//     may hold are filled in by measure.StartController.
//
// # Files
//
//	controller.go    Controller, its placeholders and ParseController; IsWatchMode
//	cpu.go           CPUCost, SteadyWindow and ProfilePart: what a controller's process tree spent
//	drift.go         DriftResult and FleetDrift: repair times, their statistics and quantiles
//	duration.go      Duration: a time.Duration written to JSON as seconds
//	merge.go         Merge: the scenarios a run skipped, kept from an earlier run
//	profile.go       scenario names, Profile and each scenario's sizes, the full and quick profiles
//	requests.go      RequestKey and RequestCounts: API requests by verb and resource, as results keep them
//	results.go       Results and what every scenario records; WriteJSON and Read
//	results_soak.go  SoakResult: heap over the soak, its growth and heap retained per reconcile; HeapPackage
package record
