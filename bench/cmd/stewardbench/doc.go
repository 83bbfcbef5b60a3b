// Command stewardbench measures OAM controllers side by side on identical
// Applications: memory against unrelated objects, steady-state API cost,
// drift repair, fleet convergence, one big app, heap per managed object
// and a soak (heap over time under re-syncs). By default Steward runs
// twice, in timer mode and in watch mode (--drift-detection=watch), next
// to the owns baseline. `make bench` and
// `make bench-quick` run it; docs/benchmarks.md explains the scenarios.
//
// Usage:
//
//	stewardbench --profile quick
//	stewardbench --controller 'vela=/path/to/manager --metrics-addr={metrics-addr}' --scenarios steady
//	stewardbench --report-only bench/results/latest.json
//
// Each controller is a separate process started with KUBECONFIG pointing
// at a fresh local control plane; {metrics-addr}, {pprof-addr}, {qps} and
// {burst} in its command line are filled in by the harness.
//
// Files:
//
//	main.go  flags to options, the run and the report (the scenarios, measurements and report are bench's packages)
package main
