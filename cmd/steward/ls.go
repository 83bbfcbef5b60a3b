package main

import (
	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// newLsCommand lists Applications, as `vela ls` and `kubectl get app` do.
func newLsCommand() *cobra.Command {
	kube := cli.NewKube(true)
	var opts cli.LsOptions
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List Applications with their phase, health and components",
		Long: `Lists the Applications of the namespace (-n, else the context's) or of every
namespace (-A). HEALTHY counts healthy components over all, per cluster.
-o wide adds the version (publishVersion or generation), the clusters, the
number of resource trackers and the reason Ready is not True.`,
		Example: `  steward ls
  steward ls -A -o wide
  steward ls -n prod -o name`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, hub, ns, err := kube.Target()
			if err != nil {
				return err
			}
			opts.Namespace = ns
			opts.Out = cmd.OutOrStdout()
			return cli.Ls(cmd.Context(), hub, opts)
		},
	}
	kube.AddFlags(cmd.Flags())
	cmd.Flags().BoolVarP(&opts.AllNamespaces, "all-namespaces", "A", false, "List the Applications of every namespace.")
	addOutputFlag(cmd, &opts.Output, cli.OutputTable, cli.ListFormats)
	return cmd
}
