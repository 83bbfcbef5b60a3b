package main

import (
	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/readmodel"
)

// newStatusCommand shows one Application in a readable layout, like
// `vela status`.
func newStatusCommand() *cobra.Command {
	kube := cli.NewKube(true)
	var opts cli.StatusOptions
	cmd := &cobra.Command{
		Use:   "status APP",
		Short: "Show an Application's phase, components per cluster, trackers, drift and events",
		Long: `Shows the phase and conditions of an Application; each component with its
traits, health and message in every cluster it was delivered to; its resource
trackers (root, versioned with their publishVersion or generation, component
revisions; * marks the version being kept); drift, the recorded objects that
are missing or differ on their cluster the way the controller's StateKeep
would see them; and the latest events. Target clusters are read with the
cluster Secrets on the hub, as the controller reads them.`,
		Example: `  steward status shop
  steward status shop -n prod -o yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeAppNames(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, hub, ns, err := kube.Target()
			if err != nil {
				return err
			}
			opts.Namespace = ns
			opts.Name, opts.Out = args[0], cmd.OutOrStdout()
			return cli.Status(cmd.Context(), cfg, hub, opts)
		},
	}
	kube.AddFlags(cmd.Flags())
	cmd.Flags().IntVar(&opts.Events, "events", readmodel.DefaultStatusEvents, "How many of the latest events to show.")
	addClusterNamespaceFlag(cmd, &opts.ClusterNamespace)
	addOutputFlag(cmd, &opts.Output, "", cli.StructuredFormats)
	return cmd
}

// addClusterNamespaceFlag adds --cluster-secret-namespace, named as the
// controller's flag.
func addClusterNamespaceFlag(cmd *cobra.Command, ns *string) {
	cmd.Flags().StringVar(ns, "cluster-secret-namespace", "vela-system", "Namespace of the cluster Secrets on the hub.")
}
