/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/steward-oam/steward/internal/controller"
	"github.com/steward-oam/steward/internal/localcp"
)

// newUpCommand runs the controller on a throwaway local control plane, so
// trying Steward needs no cluster: `make run` calls it.
func newUpCommand() *cobra.Command {
	var cpOpts localcp.Options
	ctrlOpts := controller.NewOptions()
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run Steward on an embedded local control plane (etcd and kube-apiserver)",
		Long: `Starts etcd and kube-apiserver on loopback from bin/k8s (make tools builds them),
installs the CRDs and definitions, writes a kubeconfig, and runs the controller
in the foreground until Ctrl-C, which stops everything and discards all state.
The plane has no nodes or built-in controllers: objects Steward applies are
stored and kept, but Deployments get no Pods.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ctrlOpts.Validate(); err != nil {
				return err
			}
			setupLogging(&zapOpts)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()

			cpOpts.DefinitionNamespace = ctrlOpts.SystemDefinitionNS
			cp, err := localcp.Start(ctx, cpOpts)
			if err != nil {
				return err
			}
			printUpUsage(cmd.OutOrStdout(), cp, ctrlOpts.SystemDefinitionNS)
			runErr := controller.Run(ctx, cp.Config, ctrlOpts)
			return errors.Join(runErr, cp.Stop())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cpOpts.BinDir, "bin-dir", "", "Directory holding kube-apiserver and etcd (default $KUBEBUILDER_ASSETS, else bin/k8s).")
	fs.StringVar(&cpOpts.CRDDir, "crd-dir", "config/crd", "Directory of the CRDs to install.")
	fs.StringVar(&cpOpts.DefinitionsDir, "definitions-dir", "config/definitions", "Directory of definition manifests to apply; may be missing.")
	fs.StringVar(&cpOpts.KubeconfigPath, "kubeconfig-out", ".local/kubeconfig", "Where to write the admin kubeconfig; removed on exit.")
	fs.BoolVar(&cpOpts.AttachOutput, "control-plane-output", false, "Show the logs of etcd and kube-apiserver.")
	ctrlOpts.BindFlags(fs)
	gofs := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
	return cmd
}

// printUpUsage tells the user how to reach the plane they just started.
func printUpUsage(w io.Writer, cp *localcp.ControlPlane, defNamespace string) {
	examples, _ := filepath.Glob(filepath.Join("examples", "*.yaml"))
	if len(examples) == 0 {
		examples = []string{"examples/<file>.yaml"}
	}
	examples = examples[:min(len(examples), 3)]
	fmt.Fprintf(w, "\nSteward is running on a local control plane at %s\n", cp.Config.Host)
	fmt.Fprintf(w, "CRDs installed, %d definitions applied in %s. Try, in another terminal:\n\n", cp.Definitions, defNamespace)
	fmt.Fprintf(w, "  export KUBECONFIG=%s\n", cp.KubeconfigPath)
	for _, e := range examples {
		fmt.Fprintf(w, "  kubectl apply -f %s\n", e)
	}
	fmt.Fprintf(w, "  kubectl get app,rt\n\n")
	fmt.Fprintf(w, "Any kubectl works. The plane has no nodes, so Deployments get no Pods and\n")
	fmt.Fprintf(w, "apps whose definitions check readiness (webservice, worker) report Unhealthy.\n")
	fmt.Fprintf(w, "Press Ctrl-C to stop; all state is discarded.\n\n")
}
