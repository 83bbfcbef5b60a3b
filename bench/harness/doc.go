// Package harness measures OAM controllers side by side: it starts a local
// control plane per scenario, runs the controller under test as a separate
// process, drives identical Applications at it, and reads the controller's
// and the apiserver's Prometheus metrics. bench/cmd/stewardbench is its
// command line; `make bench` and `make bench-quick` run it.
//
// # Usage
//
//	res, err := harness.Run(ctx, harness.Options{
//		Controllers: []harness.Controller{{Name: "steward",
//			Command: "bin/steward controller --metrics-addr={metrics-addr} --kube-api-qps={qps}"}},
//		Profile: harness.QuickProfile(),
//		BinDir:  "bin/k8s", CRDDir: "config/crd",
//		DefinitionDirs: []string{"config/definitions", "bench/definitions"},
//		QPS: 100, Burst: 200, LogDir: "bench/results/logs/now",
//	})
//	_ = res.WriteJSON("bench/results/now.json")
//	_ = harness.WriteReport(res, "docs/benchmarks.md", "docs/img", "bench/results/now.json")
//
// # Implementation notes
//
//   - Isolation: every (scenario, controller) pair gets its own etcd and
//     kube-apiserver (controlplane.go, envtest with priority and fairness
//     off and high in-flight limits), so no measurement sees another's
//     objects, caches or request counters. The controller gets its own
//     system:masters user through KUBECONFIG.
//   - Request counts (requests.go) are deltas of the apiserver's
//     apiserver_request_total. The harness's own client counts what it
//     sends with the same keys (RequestKeyOf mirrors the apiserver's verb
//     naming) and that is subtracted; events are counted apart, and the
//     apiserver's own background writes are left out.
//   - Memory (scenario_memory.go, scenario_soak.go) is heap in use just
//     after a collection: plain heap in use swings with the GC cycle by up
//     to the size of the live heap, far more than the 5% the targets
//     allow. A controller started with --pprof-addr={pprof-addr} is made
//     to collect through /debug/pprof/heap?gc=1&debug=1, whose text ends
//     with runtime.MemStats read after the collection (Process.HeapAfterGC);
//     one without is sampled on /metrics every 100 ms and each GC cycle's
//     lowest sample taken. The apps re-sync while sampled: memory that
//     grows with passes must show.
//   - CPU (proctree.go, cost.go) is that of the controller's whole process
//     tree, read from /proc: Steward evaluates CUE in child processes
//     (issue 27), so a figure of the controller alone would leave the
//     renders out. Descendants are found by their ppid chains; each
//     process counts its utime and stime plus the cutime and cstime of the
//     children it reaped. The fleet divides it by the Application
//     reconciles from the process start until every app is Ready, the
//     soak over the whole soak, which also reads the RSS of the child
//     processes each minute next to the controller's.
//   - Watch mode: the report checks the targets of issue 12 on the first
//     controller whose command line has --drift-detection=watch
//     (Controller.IsWatchMode), those of issues 7 and 10 on the first one
//     without. The managed scenario reads heap per managed object as the
//     growth per object added between levels: the first app's fixed costs
//     (compiled definitions, informers) would swamp the first level.
//   - The soak's webservice apps need rolled-out Deployments to be
//     healthy; the control plane runs no Deployment controller, so the
//     harness writes their status (waitHealthy).
//   - Prometheus text is parsed with prometheus/common's expfmt
//     (promtext.go) and flattened into name, labels and value per line, as
//     a scraper sees it: the scenarios only sum samples.
//   - Nothing asserts timings; tests cover parsing, counting, report
//     rendering, and (with STEWARD_BENCH_SMOKE=1) every scenario at tiny
//     sizes.
package harness
