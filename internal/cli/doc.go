// Package cli holds the logic of Steward's command-line tool, so that the
// cobra commands in cmd/steward stay thin (flags -> options -> a function
// here) and the logic is testable without a process: the connection
// flags, the output formats, the read-only commands' layouts (over what
// internal/readmodel reads), the previews (render, diff), and the few
// writes a user asks for (cluster join and detach, rollback, workflow
// operations).
//
// Usage:
//
//	err := cli.Render(cli.RenderOptions{DefinitionPaths: []string{"config/definitions"},
//		AppFile: "app.yaml", Out: os.Stdout})
//	cfg, hub, err := cli.NewKube(true).Client()  // kubectl's flags; steward cluster join/list/detach
//	res, err := cli.Join(ctx, hub, cli.JoinOptions{KubeconfigPath: "eu-1.kubeconfig", Name: "eu-1"})
//	err = cli.Ls(ctx, hub, cli.LsOptions{Namespace: "default", Output: "wide", Out: os.Stdout})
//	err = cli.Status(ctx, cfg, hub, cli.StatusOptions{Namespace: "default", Name: "shop", Out: os.Stdout})
//	err = cli.Tree(ctx, cfg, hub, cli.TreeOptions{Namespace: "default", Name: "shop", Output: "json", Out: os.Stdout})
//	err = cli.RenderLive(ctx, cfg, hub, cli.RenderOptions{AppFile: "app.yaml", Out: os.Stdout})
//	report, err := cli.Diff(ctx, cfg, hub, cli.DiffOptions{AppFile: "app.yaml", Out: os.Stdout}) // report.Differs()
//	err = cli.History(ctx, hub, cli.HistoryOptions{Namespace: "default", Name: "shop", Out: os.Stdout})
//	res, err := cli.Rollback(ctx, hub, cli.RollbackOptions{Namespace: "default", Name: "shop", To: "v1"})
//
// Implementation notes: definitions and Applications are read from
// multi-document YAML files; rendering goes through internal/render, the
// same code path as the controller. The cluster commands read and write
// cluster Secrets through internal/cluster, so the CLI and the controller
// agree on the format.
//
// The read-only commands (ls, status, tree, history, workflow status,
// cluster list) never write: status, tree, history and cluster list print
// what internal/readmodel reads, the model the dashboard shows too, so the
// two never disagree about drift or versions.
//
// render and diff preview a delivery with the controller's packages:
// internal/placement resolves deploy steps and internal/delivery renders
// each placement, the same code as the controller's render phase;
// diff runs internal/apply through controller-runtime's dry-run client, so
// the API server computes what a patch would leave and nothing is
// written. rollback only sets app.oam.dev/publishVersion: the controller
// does the rest.
//
// Files:
//
//	charts.go           the vela/helm #Render actions of CLI renders (local chart paths; fetched when connected)
//	cluster.go          steward cluster join, list and detach: cluster Secrets, probes, AppsOnCluster
//	complete.go         AppNames and ClusterNames, for shell completion
//	definitions.go      LoadDefinitions, DecodeDefinitions and LoadApplication: YAML files in
//	diff.go             Diff and DiffReport: what applying a file would create, patch and delete
//	diff_output.go      the unified diffs, in kubectl diff's layout
//	history.go          steward history: the versions as a table, yaml or json
//	kube.go             Kube: kubectl's connection flags, the REST config, the namespace, NewClient
//	kubeconfig.go       a kubeconfig's current context read into cluster credentials (join)
//	ls.go               steward ls: the Applications as a table or objects
//	print.go            the output formats (-o) and their printers
//	render.go           Render (offline) and RenderLive (with the hub's definitions and clusters); YAML out
//	render_placed.go    rendering as the controller's render phase does: placement, delivery, the file's Application
//	rollback.go         Rollback: publishVersion set back to a version whose tracker exists
//	status.go           steward status: the readable layout of readmodel.Status
//	tree.go             steward tree: the table of readmodel.Tree
//	version.go          PrintVersion: steward version
//	workflow.go         WorkflowOp: suspend, resume, terminate, restart a workflow run
//	workflow_status.go  steward workflow status: the steps and the outputs of a run
package cli
