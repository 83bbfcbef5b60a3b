package main

import (
	"fmt"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/dashboard"
)

// newDashboardCommand serves the read-only web UI with the user's own
// kubeconfig.
func newDashboardCommand() *cobra.Command {
	kube := cli.NewKube(true)
	opts := dashboard.RunOptions{Address: "127.0.0.1:8090"}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a read-only web UI of the Applications, their objects, drift and workflows",
		Long: `Serves a read-only dashboard on a loopback address: the Applications with
their phase and health; an Application's conditions, components per cluster,
every tracked object with its live state (present, missing, drifted with the
fields, conflict, deleting), its workflow steps, versions and events; and the
clusters. Open pages update as the cluster changes.

Every read is made with your kubeconfig's identity, so RBAC decides what you
see; nothing is ever written. Without -n it shows every namespace you may
list (else your context's namespace). It refuses a non-loopback --address
unless --allow-remote is given: it has no authentication of its own.`,
		Example: `  steward dashboard
  steward dashboard -n prod --address 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, hub, ns, err := kube.Target()
			if err != nil {
				return err
			}
			_, explicit, err := kube.Namespace()
			if err != nil {
				return err
			}
			opts.Namespace, opts.AllNamespaces = ns, !explicit
			opts.Identity = kube.User()
			opts.Log = ctrl.Log.WithName("dashboard")
			opts.Ready = func(url string) { fmt.Fprintf(cmd.OutOrStdout(), "Steward dashboard: %s (Ctrl-C stops it)\n", url) }
			return dashboard.Run(cmd.Context(), cfg, hub, opts)
		},
	}
	kube.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&opts.Address, "address", opts.Address, "Address to serve on; port 0 picks a free one.")
	cmd.Flags().BoolVar(&opts.AllowRemote, "allow-remote", false, "Allow an --address that is not loopback. The dashboard has no authentication: whoever reaches it reads what your identity reads.")
	addClusterNamespaceFlag(cmd, &opts.ClusterNamespace)
	return cmd
}
