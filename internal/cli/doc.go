// Package cli holds the logic of Steward's command-line tools, so that the
// cobra commands in cmd/steward stay thin (flags -> options -> a function
// here) and the logic is testable without a process.
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
// The read-only commands (ls, status, tree) never write: status and tree
// decide drift with internal/apply's report-only mode through a client
// that refuses writes, with the options StateKeep would use, and reach
// target clusters through a cluster.Manager as the controller does.
//
// render and diff preview a delivery with the controller's packages:
// internal/placement resolves deploy steps and internal/delivery renders
// each placement, the same code as the controller's render phase;
// diff runs internal/apply through controller-runtime's dry-run client, so
// the API server computes what a patch would leave and nothing is
// written. rollback only sets app.oam.dev/publishVersion: the controller
// does the rest.
package cli
