// Package scenario runs the benchmark: every scenario against every
// controller, each on a fresh control plane, driving identical
// Applications at the controller and recording what bench/measure reads
// into bench/record's Results. bench/cmd/stewardbench is its command line;
// `make bench` and `make bench-quick` run it.
//
// # Usage
//
//	res, err := scenario.Run(ctx, scenario.Options{
//		Controllers: []record.Controller{{Name: "steward",
//			Command: "bin/steward controller --metrics-addr={metrics-addr} --kube-api-qps={qps}"}},
//		Profile: record.QuickProfile(),
//		BinDir:  "bin/k8s", CRDDir: "config/crd",
//		DefinitionDirs: []string{"config/definitions", "bench/definitions"},
//		QPS: 100, Burst: 200, LogDir: "bench/results/logs/now",
//	})
//	_ = res.WriteJSON("bench/results/now.json")
//	_ = report.Write(res, "docs/benchmarks.md", "docs/img", "bench/results/now.json")
//
// # Implementation notes
//
//   - A scenario is a runner method over a session: one controller on one
//     control plane (runner.go). A scenario that fails is recorded in
//     Results.Errors and the run goes on; a session that succeeds records
//     the CPU of its last controller process (Results.CPU).
//   - The apps re-sync while memory is sampled (memory.go, soak.go):
//     memory that grows with passes must show. The managed scenario reads
//     heap per managed object as the growth per object added between
//     levels: the first app's fixed costs (compiled definitions,
//     informers) would swamp the first level.
//   - CPU is divided by the Application reconciles of the same window: the
//     fleet's from the process start until every app is Ready
//     (fleet.go), the soak's over the whole soak, which also reads the RSS
//     of the child processes each minute next to the controller's.
//   - The soak ends with a heap profile in the log directory, summed by
//     package (measure.Process.HeapProfile); one that cannot be read loses
//     its summary, not the soak's figures.
//   - The soak's webservice apps need rolled-out Deployments to be
//     healthy; the control plane runs no Deployment controller, so the
//     harness writes their status (waitHealthy, soak.go).
//   - Fleet drift (drift_fleet.go) watches the damaged kinds itself and
//     times each change from the request's return until a watch sees the
//     object back as the manifest sets it, so repairs are timed alike in
//     watch mode, timer mode and the baseline.
//   - Nothing asserts timings; the tests cover the shapes of the
//     Applications, how fleet drift tells a repair, the rate-limit bound,
//     the options and the CPU per scenario, and (with
//     STEWARD_BENCH_SMOKE=1, smoke_test.go) every scenario at tiny sizes.
//
// # Files
//
//	apps.go          AppShape and ShapeOf: the Applications each scenario creates, and waiting until they are Ready
//	bigapp.go        bigapp: one Application with many objects, dispatch time and tracker sizes
//	definitions.go   definitions: definition changes under autoUpdate, and admission latency
//	drift.go         drift: one hand change, timed until repaired
//	drift_fleet.go   fleet drift: hand edits across a fleet and the time each takes to be repaired
//	fleet.go         fleet: every Application created first, the controller timed until all are Ready
//	helm.go          helm: Applications of one chart from a loopback repository
//	managed.go       managed: heap per managed object, level by level
//	memory.go        memory: heap against unrelated objects in the cluster
//	options.go       Options: the controllers, the profile and the scenarios of a run
//	progress.go      the progress lines, one per measurement
//	runner.go        Run: every scenario against every controller, each on its own control plane
//	scale.go         scale: 10,000 Applications on one controller (issues 15 and 35)
//	shards.go        shards: the same fleet over three replicas
//	soak.go          soak: heap over time while apps re-sync
//	steady.go        steady: requests and CPU while nothing changes
package scenario
