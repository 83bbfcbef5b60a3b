package main

import (
	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// newTreeCommand shows every object an Application's trackers record,
// per cluster, with its live state.
func newTreeCommand() *cobra.Command {
	kube := cli.NewKube(true)
	var opts cli.TreeOptions
	cmd := &cobra.Command{
		Use:   "tree APP",
		Short: "Show every tracked object of an Application per cluster, with its live state",
		Long: `Lists the objects the Application's kept resource trackers record (the current
version's and root), decoded whatever their compression, cluster by cluster,
each with its live state:

  present   exists, and StateKeep would not patch it
  missing   does not exist; StateKeep creates it
  drifted   differs from its manifest; the fields StateKeep would patch follow
  conflict  exists, owned by another Application or by none
  deleting  garbage-collected, still being deleted
  gone      garbage-collected and gone
  unknown   could not be read (cluster unreachable, kind not served, denied)`,
		Example: `  steward tree shop
  steward tree shop -n prod -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAppNames(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, hub, ns, err := kube.Target()
			if err != nil {
				return err
			}
			opts.Namespace = ns
			opts.Name, opts.Out = args[0], cmd.OutOrStdout()
			return cli.Tree(cmd.Context(), cfg, hub, opts)
		},
	}
	kube.AddFlags(cmd.Flags())
	addClusterNamespaceFlag(cmd, &opts.ClusterNamespace)
	addOutputFlag(cmd, &opts.Output, "", cli.StructuredFormats)
	return cmd
}
