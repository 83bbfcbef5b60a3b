package main

import (
	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// newRenderCommand renders an Application offline with definitions from
// files, through the same render code path as the controller.
func newRenderCommand() *cobra.Command {
	var opts cli.RenderOptions
	cmd := &cobra.Command{
		Use:   "render -d DEFINITIONS -f APP",
		Short: "Render an Application to Kubernetes objects offline",
		Long: `Evaluates the Application's components and traits with the CUE templates of the
given ComponentDefinitions and TraitDefinitions and prints the objects Steward
would apply, as YAML documents. No cluster is contacted; definitions that
branch on context.clusterVersion see --cluster-version (unknown by default).`,
		Example: `  steward render -d config/definitions -f app.yaml
  steward render -d defs/ -d extra-trait.yaml -f app.yaml --cluster-version v1.30`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			return cli.Render(opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.DefinitionPaths, "definitions", "d", nil, "definition file or directory (repeatable)")
	f.StringVarP(&opts.AppFile, "file", "f", "", "Application manifest")
	f.StringVar(&opts.ClusterVersion, "cluster-version", "", "Kubernetes version seen as context.clusterVersion, like v1.30")
	_ = cmd.MarkFlagRequired("file")
	_ = cmd.MarkFlagRequired("definitions")
	return cmd
}
