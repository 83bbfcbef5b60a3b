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
//
// Implementation notes: definitions and Applications are read from
// multi-document YAML files; rendering goes through internal/render, the
// same code path as the controller. The cluster commands read and write
// cluster Secrets through internal/cluster, so the CLI and the controller
// agree on the format.
package cli
