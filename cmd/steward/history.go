package main

import (
	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// historyFormats are the -o values of steward history.
var historyFormats = []string{cli.OutputTable, cli.OutputWide, cli.OutputYAML, cli.OutputJSON}

// newHistoryCommand lists the versions of an Application from its
// versioned resource trackers.
func newHistoryCommand() *cobra.Command {
	kube := cli.NewKube(true)
	var opts cli.HistoryOptions
	cmd := &cobra.Command{
		Use:   "history APP",
		Short: "List the versions of an Application recorded in its resource trackers",
		Long: `Lists the versions of an Application, oldest first, one per versioned
ResourceTracker: its revision, publishVersion, the generation it was last
recorded at, how many objects it rendered, whether it is the version the
controller keeps (CURRENT) and its age. -o wide adds the clusters and the
tracker's name. Versions published with app.oam.dev/publishVersion are what
steward rollback --to can return to.`,
		Example: `  steward history hello-web
  steward history hello-web -n prod -o yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAppNames(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, hub, ns, err := kube.Target()
			if err != nil {
				return err
			}
			opts.Namespace = ns
			opts.Name, opts.Out = args[0], cmd.OutOrStdout()
			return cli.History(cmd.Context(), hub, opts)
		},
	}
	kube.AddFlags(cmd.Flags())
	addOutputFlag(cmd, &opts.Output, cli.OutputTable, historyFormats)
	return cmd
}
