package main

import (
	"flag"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/dashboard"
	"github.com/steward-oam/steward/internal/version"
)

// newControllerCommand runs the controller manager against the cluster
// kubectl's flags select (--kubeconfig, --context, ...; in a Pod, its
// in-cluster config).
func newControllerCommand() *cobra.Command {
	opts := manager.NewOptions()
	zapOpts := zap.Options{}
	kube := cli.NewKube(false)
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the Application controller manager",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setupLogging(&zapOpts)
			v := version.Get()
			ctrl.Log.WithName("setup").Info("Starting Steward", "version", v.Version, "commit", v.Commit, "goVersion", v.GoVersion)
			cfg, err := kube.Config()
			if err != nil {
				return err
			}
			mgr, err := manager.NewManager(cfg, opts)
			if err != nil {
				return err
			}
			if opts.DashboardAddr != "" && opts.DashboardAddr != "0" {
				if err := dashboard.AddToManager(mgr, cfg, opts.DashboardAddr, opts.DashboardAllowRemote, opts.ClusterSecretNS); err != nil {
					return err
				}
			}
			return mgr.Start(ctrl.SetupSignalHandler())
		},
	}
	opts.BindFlags(cmd.Flags())
	kube.AddFlags(cmd.Flags())
	gofs := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(gofs)
	cmd.Flags().AddGoFlagSet(gofs)
	return cmd
}
