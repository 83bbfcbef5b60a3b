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
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/localcp"
)

// newDevCommand runs the controller on a throwaway local control plane, so
// trying Steward needs no cluster: `make run` calls it.
func newDevCommand() *cobra.Command {
	return newLocalPlaneCommand("dev")
}

// newUpCommand is the old name of `steward dev`, kept so scripts keep
// working; `vela up` means something else (deploy an app), hence the rename.
func newUpCommand() *cobra.Command {
	cmd := newLocalPlaneCommand("up")
	cmd.Hidden = true
	cmd.Deprecated = "use `steward dev` instead"
	return cmd
}

func newLocalPlaneCommand(use string) *cobra.Command {
	var cpOpts localcp.Options
	ctrlOpts := manager.NewOptions()
	ctrlOpts.MetricsAddr, ctrlOpts.HealthAddr = devMetricsAddr, devHealthAddr
	// Admission on, as the chart runs it: the API server calls the webhook
	// on loopback (--webhook-url), with a certificate Steward issues.
	ctrlOpts.UseWebhook, ctrlOpts.WebhookHost, ctrlOpts.WebhookCertDir = true, "127.0.0.1", filepath.Join(".local", "webhook-certs")
	// Console logs with a short time for a person at a terminal; the flags
	// (--zap-encoder=json, --zap-time-encoding) still override them.
	zapOpts := zap.Options{NewEncoder: newConsoleEncoder, TimeEncoder: zapcore.TimeEncoderOfLayout("15:04:05.000")}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Run Steward on a local control plane where Deployments get Pods",
		Long: `Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a
simulated node (kwok) on loopback from bin/k8s (make tools builds them),
installs the CRDs and definitions with server-side apply, writes a kubeconfig,
and runs the controller in the foreground until Ctrl-C, which stops everything
and discards all state.

Deployments get ReplicaSets and Pods, which kwok marks Running and Ready
without pulling images or running containers, so webservice apps become
Healthy. The controller's metrics and health endpoints listen on loopback, on
the next free port from their default when it is taken (printed at start),
unless --metrics-addr or --health-addr say otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ctrlOpts.Validate(); err != nil {
				return err
			}
			setupLogging(&zapOpts)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()

			out := cmd.OutOrStdout()
			cpOpts.DefinitionNamespace = ctrlOpts.SystemDefinitionNS
			cpOpts.Progress = out
			fmt.Fprintln(out, "Starting a local control plane:")
			cp, err := localcp.Start(ctx, cpOpts)
			if err != nil {
				return err
			}
			// After the start, so the plane's own ports are taken.
			if err := pickFreeAddrs(cmd, &ctrlOpts); err != nil {
				return errors.Join(err, cp.Stop())
			}
			printDevUsage(out, cp, ctrlOpts)
			runErr := manager.Run(ctx, cp.Config, ctrlOpts)
			return errors.Join(runErr, cp.Stop())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cpOpts.BinDir, "bin-dir", "", "Directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (default $KUBEBUILDER_ASSETS, else bin/k8s).")
	fs.StringVar(&cpOpts.CRDDir, "crd-dir", "config/crd", "Directory of the CRDs to install.")
	fs.StringVar(&cpOpts.DefinitionsDir, "definitions-dir", "config/definitions", "Directory of definition manifests to apply; may be missing.")
	fs.StringVar(&cpOpts.KubeconfigPath, "kubeconfig-out", ".local/kubeconfig", "Where to write the admin kubeconfig; removed on exit.")
	fs.BoolVar(&cpOpts.AttachOutput, "control-plane-output", false, "Show the logs of etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.")
	ctrlOpts.BindFlags(fs)
	gofs := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
	return cmd
}

// newConsoleEncoder writes zap's development console lines (level, logger,
// message, then the key-values as JSON). controller-runtime's
// zap.ConsoleEncoder would also do, but it fixes the encoder so the flags
// could no longer change it.
func newConsoleEncoder(opts ...zap.EncoderConfigOption) zapcore.Encoder {
	cfg := uberzap.NewDevelopmentEncoderConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	return zapcore.NewConsoleEncoder(cfg)
}

// The controller's endpoints under `steward dev`: loopback, away from the
// 8080 that is often taken on a laptop.
const (
	devMetricsAddr = "127.0.0.1:28080"
	devHealthAddr  = "127.0.0.1:29440"
	devWebhookPort = 29443
)

// pickFreeAddrs moves the metrics and health endpoints the user did not
// place to the next free loopback port if their default one is taken.
func pickFreeAddrs(cmd *cobra.Command, opts *manager.Options) error {
	for _, f := range []struct {
		flag string
		addr *string
	}{{"metrics-addr", &opts.MetricsAddr}, {"health-addr", &opts.HealthAddr}} {
		if cmd.Flags().Changed(f.flag) {
			continue
		}
		_, port, err := net.SplitHostPort(*f.addr)
		if err != nil {
			return err
		}
		preferred, err := strconv.Atoi(port)
		if err != nil {
			return err
		}
		addr, err := localcp.FreeLoopbackAddr(preferred)
		if err != nil {
			return err
		}
		*f.addr = addr
	}
	if opts.UseWebhook && opts.WebhookURL == "" {
		// The webhook too, unless placed by hand.
		addr := net.JoinHostPort(opts.WebhookHost, strconv.Itoa(opts.WebhookPort))
		if !cmd.Flags().Changed("webhook-port") {
			free, err := localcp.FreeLoopbackAddr(devWebhookPort)
			if err != nil {
				return err
			}
			addr = free
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return err
		}
		if opts.WebhookPort, err = strconv.Atoi(port); err != nil {
			return err
		}
		opts.WebhookHost, opts.WebhookURL = host, "https://"+addr
	}
	return nil
}

// printDevUsage tells the user how to reach the plane they just started.
func printDevUsage(w io.Writer, cp *localcp.ControlPlane, opts manager.Options) {
	examples, _ := filepath.Glob(filepath.Join("examples", "*.yaml"))
	if len(examples) == 0 {
		examples = []string{"examples/<file>.yaml"}
	}
	examples = examples[:min(len(examples), 3)]
	fmt.Fprintf(w, "\nSteward is running on a local control plane at %s\n", cp.Config.Host)
	fmt.Fprintf(w, "  metrics:        %s\n", endpoint(opts.MetricsAddr, "/metrics"))
	fmt.Fprintf(w, "  health:         %s\n", endpoint(opts.HealthAddr, "/healthz"))
	if opts.UseWebhook {
		fmt.Fprintf(w, "  admission:      %s (ValidatingWebhookConfiguration %s)\n", opts.WebhookURL, opts.WebhookConfiguration)
	}
	fmt.Fprintf(w, "  component logs: %s\n", cp.LogDir)
	fmt.Fprintf(w, "\nTry, in another terminal:\n\n")
	fmt.Fprintf(w, "  export KUBECONFIG=%s\n", cp.KubeconfigPath)
	for _, e := range examples {
		fmt.Fprintf(w, "  kubectl apply -f %s\n", e)
	}
	fmt.Fprintf(w, "  kubectl get app,rt,deploy,pods\n")
	fmt.Fprintf(w, "  steward dashboard     # then open http://127.0.0.1:8090/\n\n")
	fmt.Fprintf(w, "Any kubectl works. Pods run on node %s, simulated by kwok: they become\n", localcp.NodeName)
	fmt.Fprintf(w, "Running and Ready without pulling images or running containers.\n")
	fmt.Fprintf(w, "Press Ctrl-C to stop; all state is discarded.\n\n")
}

// endpoint is the URL of path on addr, or "disabled" for addr "0".
func endpoint(addr, path string) string {
	if addr == "0" {
		return "disabled"
	}
	return "http://" + addr + path
}
