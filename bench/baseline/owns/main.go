package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

// options are the baseline's flags.
type options struct {
	metricsAddr          string
	healthAddr           string
	pprofAddr            string
	qps                  float64
	burst                int
	concurrentReconciles int
	definitionNamespace  string
}

func main() {
	o := options{}
	fs := pflag.NewFlagSet("owns", pflag.ExitOnError)
	fs.StringVar(&o.metricsAddr, "metrics-addr", ":8080", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	fs.StringVar(&o.healthAddr, "health-addr", ":9440", "Address the health probes bind to; \"0\" disables them.")
	fs.StringVar(&o.pprofAddr, "pprof-addr", "", "Address Go's profiling endpoints (/debug/pprof/) bind to; empty does not serve them.")
	fs.Float64Var(&o.qps, "kube-api-qps", 50, "Client-side rate limit of requests to the API server.")
	fs.IntVar(&o.burst, "kube-api-burst", 100, "Client-side burst of requests to the API server.")
	fs.IntVar(&o.concurrentReconciles, "concurrent-reconciles", 4, "Applications reconciled in parallel.")
	fs.StringVar(&o.definitionNamespace, "system-definition-namespace", "vela-system", "Namespace searched for definitions after the Application's own namespace.")
	zapOpts := zap.Options{}
	gofs := flag.NewFlagSet("zap", flag.ExitOnError)
	zapOpts.BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
	_ = fs.Parse(os.Args[1:])
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(o options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress: o.healthAddr,
		PprofBindAddress:       o.pprofAddr,
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	r := &reconciler{
		client:              mgr.GetClient(),
		cache:               mgr.GetCache(),
		scheme:              scheme,
		mapper:              mgr.GetRESTMapper(),
		renderer:            render.NewRenderer(),
		definitionNamespace: o.definitionNamespace,
	}
	if err := r.setup(mgr, o.concurrentReconciles); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
