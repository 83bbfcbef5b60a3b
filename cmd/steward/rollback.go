package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
)

// newRollbackCommand sets an Application's publishVersion back to an
// earlier version whose tracker still exists.
func newRollbackCommand() *cobra.Command {
	kube := cli.NewKube(true)
	var opts cli.RollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback APP --to VERSION",
		Short: "Roll an Application back to an earlier published version",
		Long: `Sets the Application's app.oam.dev/publishVersion annotation back to VERSION,
an earlier publishVersion whose versioned ResourceTracker still exists (see
steward history). The controller then applies exactly the manifests that
version recorded, without rendering the current spec, and deletes what only
newer versions created. A version with no tracker is refused, with the list
of versions that can be rolled back to.`,
		Example: `  steward rollback hello-web --to v1
  steward rollback hello-web -n prod --to hello-web-v1`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAppNames(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, hub, ns, err := kube.Target()
			if err != nil {
				return err
			}
			opts.Namespace = ns
			opts.Name = args[0]
			res, err := cli.Rollback(cmd.Context(), hub, opts)
			if err != nil {
				return err
			}
			from := res.From
			if from == "" {
				from = "<none>"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Application %s/%s: publishVersion %s -> %s; the controller applies revision %s.\n",
				opts.Namespace, opts.Name, from, res.To, res.Revision)
			return nil
		},
	}
	kube.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&opts.To, "to", "", "The publishVersion (or revision name) to roll back to.")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}
