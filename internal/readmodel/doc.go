// Package readmodel is what Steward shows about an Application, read from
// the cluster once and shared by the command-line tool (`steward status`,
// `tree`, `history`, `workflow status`, `cluster list`) and the dashboard:
// its status (conditions, components per cluster, trackers, events),
// every object its trackers record with its live state (present, missing,
// drifted, conflict, deleting, gone, unknown), its versions, its
// workflow's outputs, and the registered clusters. It never writes, and
// it never formats: printing is internal/cli's, pages are
// internal/dashboard's.
//
// Usage:
//
//	clusters, err := readmodel.NewClusterManager(hubConfig, hub, "vela-system")
//	detail, err := readmodel.Inspect(ctx, hub, clusters, "default", "shop", readmodel.DefaultStatusEvents)
//	// detail.Status, detail.Tree, detail.Versions; readmodel.IsAppNotFound(err)
//	st, err := readmodel.Status(ctx, hub, clusters, "default", "shop", 0)
//	tree, err := readmodel.Tree(ctx, hub, clusters, "default", "shop")
//	for _, c := range tree.Clusters { for _, o := range c.Objects { o.State == readmodel.StateDrifted ... } }
//	app, versions, err := readmodel.Versions(ctx, hub, "default", "shop")
//	rows, err := readmodel.Clusters(ctx, clusters)
//
// Implementation notes: an Application's trackers are read and split as
// the controller splits them (tracker.Current picks the version kept), so
// the read model shows the version the controller delivers. Drift is told
// by internal/apply's report-only mode, with the options StateKeep would
// use (policy.Rules: take-over, shared, apply-once), so "drifted" means
// StateKeep would patch and lists the fields; every cluster client goes
// through a client that refuses writes. Target clusters are reached
// through a cluster.Manager as the controller reaches them; after the
// first error saying a cluster is unreachable, its other objects are
// unknown without trying. The identity is the caller's: with the user's
// kubeconfig, RBAC decides what the CLI and the dashboard show.
//
// Files:
//
//	clusters.go  Clients, NewClusterManager, Clusters and ClusterRow; ClusterLess (local first)
//	detail.go    AppDetail and Inspect: status, tree and versions of one Application, read once
//	drift.go     ObjectState and its values: each recorded object compared with its live one
//	history.go   AppVersion and Versions: the versions the versioned trackers record
//	readonly.go  the client wrapper that refuses every write
//	record.go    an Application and its trackers, split into current, root and the rest
//	status.go    AppStatus and Status: conditions, components per cluster, trackers, drift, events
//	tree.go      AppTree, ClusterObjects, TrackedObject and Tree: every kept object per cluster
//	workflow.go  WorkflowOutputs: the values a workflow run's steps exported
package readmodel
