// Package measure is the benchmark's plumbing: a throwaway control plane,
// the controller under test as a separate process, and what is read from
// them (Prometheus text, API request counts, heap after GC, the CPU of the
// controller's process tree, CPU profiles). It knows no scenario; the
// scenarios (bench/scenario) decide what to measure when, and the figures
// go into bench/record's types.
//
// # Usage
//
//	cp, err := measure.StartControlPlane(ctx, "bin/k8s", "config/crd", definitionDirs)
//	defer cp.Stop()
//	p, err := measure.StartController(ctx, controller, cp.Kubeconfig, "steady-steward.log", 100, 200)
//	defer p.Stop()
//	base, _ := cp.Requests(ctx)
//	own := cp.Own.Snapshot()
//	used, _ := p.Usage(ctx)
//	// ... the scenario's work ...
//	now, _ := cp.Requests(ctx)
//	work := now.Sub(base).Sub(cp.Own.Snapshot().Sub(own)).Filter(measure.IsWork)
//	later, _ := p.Usage(ctx)
//	cost := later.CostSince(used) // CPU per reconcile of the window
//	heap, _ := measure.SampleMemory(ctx, p, cfg)
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
//     naming) and that is subtracted; events are counted apart
//     (IsEventWrite), and the apiserver's own background writes are left
//     out (IsWork).
//   - Memory (memory.go) is heap in use just after a collection: plain
//     heap in use swings with the GC cycle by up to the size of the live
//     heap, far more than the 5% the targets allow. A controller started
//     with --pprof-addr={pprof-addr} is made to collect through
//     /debug/pprof/heap?gc=1&debug=1, whose text ends with
//     runtime.MemStats read after the collection (Process.HeapAfterGC,
//     process.go); one without is sampled on /metrics every 100 ms and
//     each GC cycle's lowest sample taken.
//   - CPU (proctree.go, cost.go) is that of the controller's whole process
//     tree, read from /proc: Steward evaluates CUE in child processes
//     (issue 27), so a figure of the controller alone would leave the
//     renders out. Descendants are found by their ppid chains; each
//     process counts its utime and stime plus the cutime and cstime of the
//     children it reaped. Usage pairs that CPU with the Application
//     reconciles and renders /metrics counted at the same moment, so that
//     the difference of two is the cost of a window.
//   - Prometheus text is parsed with prometheus/common's expfmt
//     (promtext.go) and flattened into name, labels and value per line, as
//     a scraper sees it: the scenarios only sum samples.
//   - A steady window's CPU profile (window.go) is split into the
//     controller's parts by the functions on each sample's stack, the
//     first part of a fixed list that matches (cpuprofile.go); FillProfiles
//     splits profiles still on disk again, so that a change to the parts
//     shows in a regenerated report.
//   - The soak's heap profile (heapprofile.go, /debug/pprof/heap?gc=1
//     after the same forced collection) is summed by the Go package of
//     the allocating function: the innermost frame outside the runtime,
//     reflect, sync and the standard library's internal packages, since
//     makeslice, reflect.New or a sync.Map allocate for their caller.
//
// # Files
//
//	controlplane.go  ControlPlane: an etcd and kube-apiserver per (scenario, controller), and its request counts
//	cost.go          Usage and CostSince: CPU per reconcile and per render, from the process tree and the stage histogram
//	cpuprofile.go    a CPU profile split into the controller's parts; FillProfiles
//	heapprofile.go   HeapProfile: a heap profile after a forced GC, its in-use space by package
//	memory.go        SampleMemory: heap after GC and RSS at one moment, forced through pprof or sampled on /metrics
//	process.go       Process and StartController: the controller under test, started with its placeholders filled
//	proctree.go      CPUTime and ChildMemory: the controller's whole process tree, read from /proc
//	promtext.go      Sample and Samples: Prometheus text flattened to name, labels and value
//	requests.go      RequestCountsFrom, RequestCounter and RequestKeyOf: API requests as the apiserver counts them
//	window.go        SteadyWindow: a controller's CPU over a window in which nothing changes, with its CPU profile
package measure
