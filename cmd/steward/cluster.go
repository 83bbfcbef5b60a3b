package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/cluster"
)

// newClusterCommand manages the clusters registered on the hub: Secrets in
// KubeVela's format, so `vela cluster` and `steward cluster` interoperate.
func newClusterCommand() *cobra.Command {
	kube := cli.NewKube(true)
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Register, list and detach the clusters Applications are delivered to",
		Long: `Clusters are registered on the hub as Secrets in the system namespace, in
KubeVela's format. The hub itself is always registered as "local".
Topology policies place components on clusters by name or by label.`,
	}
	kube.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().Lookup("namespace").Usage = "Namespace of the cluster Secrets on the hub (default " + cluster.DefaultNamespace + ")."
	cmd.AddCommand(
		newClusterJoinCommand(kube),
		newClusterListCommand(kube),
		newClusterDetachCommand(kube),
	)
	return cmd
}

// clusterHub connects to the hub and resolves the namespace of the cluster
// Secrets: -n when given, else KubeVela's system namespace (not the
// context's namespace, which names where apps live, not clusters).
func clusterHub(kube *cli.Kube) (*rest.Config, client.Client, string, error) {
	cfg, hub, err := kube.Client()
	if err != nil {
		return nil, nil, "", err
	}
	ns, explicit, err := kube.Namespace()
	if err != nil {
		return nil, nil, "", err
	}
	if !explicit {
		ns = cluster.DefaultNamespace
	}
	return cfg, hub, ns, nil
}

func newClusterJoinCommand(kube *cli.Kube) *cobra.Command {
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
			_, hub, ns, err := clusterHub(kube)
			if err != nil {
				return err
			}
			opts.KubeconfigPath, opts.Namespace = args[0], ns
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

func newClusterListCommand(kube *cli.Kube) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the registered clusters and whether they answer",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, hub, ns, err := clusterHub(kube)
			if err != nil {
				return err
			}
			return cli.List(cmd.Context(), cfg, hub, cli.ListOptions{Namespace: ns, Out: cmd.OutOrStdout()})
		},
	}
}

func newClusterDetachCommand(kube *cli.Kube) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "detach NAME",
		Short: "Remove a cluster's registration",
		Long: `Deletes the cluster's Secret on the hub. Refused while any Application still
has resources recorded on the cluster, unless --force, which leaves those
resources behind on the cluster. Nothing on the cluster itself is touched.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeClusterNames(kube),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, hub, ns, err := clusterHub(kube)
			if err != nil {
				return err
			}
			apps, err := cli.Detach(cmd.Context(), hub, cli.DetachOptions{Name: args[0], Namespace: ns, Force: force})
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
