package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/cluster"
)

// newClusterCommand manages the clusters registered on the hub: Secrets in
// KubeVela's format, so `vela cluster` and `steward cluster` interoperate.
func newClusterCommand() *cobra.Command {
	var hubKubeconfig, namespace string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Register, list and detach the clusters Applications are delivered to",
		Long: `Clusters are registered on the hub as Secrets in the system namespace, in
KubeVela's format. The hub itself is always registered as "local".
Topology policies place components on clusters by name or by label.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&hubKubeconfig, "kubeconfig", "", "Kubeconfig of the hub (default $KUBECONFIG, else ~/.kube/config).")
	pf.StringVarP(&namespace, "namespace", "n", cluster.DefaultNamespace, "Namespace of the cluster Secrets on the hub.")
	cmd.AddCommand(
		newClusterJoinCommand(&hubKubeconfig, &namespace),
		newClusterListCommand(&hubKubeconfig, &namespace),
		newClusterDetachCommand(&hubKubeconfig, &namespace),
	)
	return cmd
}

func newClusterJoinCommand(hubKubeconfig, namespace *string) *cobra.Command {
	var opts cli.JoinOptions
	cmd := &cobra.Command{
		Use:   "join KUBECONFIG",
		Short: "Register the cluster of a kubeconfig's current context",
		Long: `Writes a cluster Secret on the hub from the current context of KUBECONFIG:
X509Certificate when its user has a client certificate, ServiceAccountToken
when it has a token. The cluster is then checked for connectivity from here.`,
		Example: `  steward cluster join eu-1.kubeconfig --name eu-1 --labels region=eu,env=prod
  steward cluster join eu-1.kubeconfig --name eu-1 --force   # replace the credentials`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, hub, err := cli.HubClient(*hubKubeconfig)
			if err != nil {
				return err
			}
			opts.KubeconfigPath, opts.Namespace = args[0], *namespace
			res, err := cli.Join(cmd.Context(), hub, opts)
			if err != nil {
				return err
			}
			verb := "joined"
			if res.Replaced {
				verb = "replaced"
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Cluster %s %s (%s, %s).\n", res.Cluster.Name, verb, res.Cluster.Endpoint, res.Cluster.CredentialType)
			if res.ProbeErr != nil {
				fmt.Fprintf(out, "Warning: the cluster does not answer from here: %v\n", res.ProbeErr)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", "", "Cluster name (default the current context's cluster name).")
	f.StringToStringVar(&opts.Labels, "labels", nil, "Cluster labels, as k=v,k2=v2.")
	f.StringVar(&opts.Alias, "alias", "", "Display name of the cluster.")
	f.BoolVar(&opts.Force, "force", false, "Replace a cluster already registered under the name.")
	return cmd
}

func newClusterListCommand(hubKubeconfig, namespace *string) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the registered clusters and whether they answer",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, hub, err := cli.HubClient(*hubKubeconfig)
			if err != nil {
				return err
			}
			return cli.List(cmd.Context(), cfg, hub, cli.ListOptions{Namespace: *namespace, Out: cmd.OutOrStdout()})
		},
	}
}

func newClusterDetachCommand(hubKubeconfig, namespace *string) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "detach NAME",
		Short: "Remove a cluster's registration",
		Long: `Deletes the cluster's Secret on the hub. Refused while any Application still
has resources recorded on the cluster, unless --force, which leaves those
resources behind on the cluster. Nothing on the cluster itself is touched.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, hub, err := cli.HubClient(*hubKubeconfig)
			if err != nil {
				return err
			}
			apps, err := cli.Detach(cmd.Context(), hub, cli.DetachOptions{Name: args[0], Namespace: *namespace, Force: force})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Cluster %s detached.\n", args[0])
			if len(apps) > 0 {
				fmt.Fprintf(out, "Warning: resources of %s were left on the cluster.\n", strings.Join(apps, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "Detach although applications still have resources on the cluster.")
	return cmd
}
