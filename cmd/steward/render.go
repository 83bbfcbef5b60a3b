package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/sandbox"
)

// newRenderCommand renders an Application the way the controller would:
// offline with definitions from files (-d), or with the definitions and
// clusters of the cluster the connection flags select.
func newRenderCommand() *cobra.Command {
	kube := cli.NewKube(true)
	opts := cli.RenderOptions{Budget: sandbox.DefaultBudget()}
	cmd := &cobra.Command{
		Use:   "render -f APP [-d DEFINITIONS]",
		Short: "Render an Application to the objects Steward would apply",
		Long: `Evaluates the Application's components and traits with the CUE templates of
their definitions and prints the objects Steward would apply, as YAML
documents. Override policies shape the components and topology policies
place them on clusters, as the controller does; when any object goes to a
cluster other than the hub, each document starts with "# cluster: NAME".

With -d, nothing is contacted: definitions come from the files, and topology
policies choose from the clusters given with --assume-cluster NAME[=KEY=VALUE,...]
(local is always registered); definitions that branch on
context.clusterVersion see --cluster-version (unknown by default).

Without -d, render reads from the cluster the connection flags select: the
definitions the controller would resolve (the Application's namespace, then
--definition-namespace), the registered clusters, the generation the file
would get, and the hub's version.`,
		Example: `  steward render -d config/definitions -f app.yaml
  steward render -d defs/ -f app.yaml --assume-cluster eu-1=region=eu --assume-cluster us-1=region=us
  steward render -f app.yaml --context prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			if err := opts.Budget.Validate(); err != nil {
				return err
			}
			if len(opts.DefinitionPaths) > 0 {
				return cli.Render(opts)
			}
			cfg, hub, err := kube.Client()
			if err != nil {
				return fmt.Errorf("%w (without -d, render reads definitions and clusters from the cluster; pass -d DEFINITIONS to render offline)", err)
			}
			if opts.Namespace, _, err = kube.Namespace(); err != nil {
				return err
			}
			return cli.RenderLive(cmd.Context(), cfg, hub, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.DefinitionPaths, "definitions", "d", nil, "Definition file or directory (repeatable); renders offline.")
	f.StringVarP(&opts.AppFile, "file", "f", "", "Application manifest.")
	f.StringVar(&opts.ClusterVersion, "cluster-version", "", "Kubernetes version seen as context.clusterVersion, like v1.30 (default: unknown offline, the hub's when connected).")
	f.StringArrayVar(&opts.Clusters, "assume-cluster", nil, "Offline: a cluster topology policies may select, NAME or NAME=KEY=VALUE,... (repeatable).")
	f.StringVar(&opts.DefinitionNamespace, "definition-namespace", "vela-system", "Connected: the system namespace definitions are looked up in after the Application's.")
	f.StringVar(&opts.ClusterNamespace, "cluster-namespace", "vela-system", "Connected: the namespace of the cluster Secrets.")
	opts.Budget.BindFlags(f)
	kube.AddFlags(f)
	_ = cmd.MarkFlagRequired("file")
	return cmd
}
