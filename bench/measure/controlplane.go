package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/record"
	"github.com/steward-oam/steward/internal/localcp"
)

// ControlPlane is one throwaway etcd and kube-apiserver on loopback with
// the OAM CRDs and the definitions installed. Every scenario runs each
// controller on a fresh one, so no measurement sees another's objects.
type ControlPlane struct {
	// Config talks to the apiserver as a system:masters user.
	Config *rest.Config
	// Client is the harness's client; its requests are counted so that
	// they can be told apart from the controller's.
	Client client.WithWatch
	// Own counts the requests Client sends.
	Own *RequestCounter
	// Kubeconfig is the path of a kubeconfig for the controller under
	// test, with its own system:masters user.
	Kubeconfig string

	env *envtest.Environment
	dir string
}

// apiServerFlags let one loopback apiserver take a 1,000-app fleet from a
// controller with a high client QPS without throttling it server-side
// (the benchmark measures the controller, not the apiserver's fairness),
// and give it room for a ClusterIP per Service (envtest's default range
// is a /24).
var apiServerFlags = map[string]string{
	"enable-priority-and-fairness":   "false",
	"max-requests-inflight":          "2000",
	"max-mutating-requests-inflight": "1000",
	"service-cluster-ip-range":       "10.96.0.0/16",
}

// StartControlPlane starts etcd and kube-apiserver from binDir, installs
// the CRDs of crdDir and applies every definition directory to
// vela-system.
func StartControlPlane(ctx context.Context, binDir, crdDir string, definitionDirs []string) (*ControlPlane, error) {
	dir, err := os.MkdirTemp("", "stewardbench-")
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    binDir,
		CRDDirectoryPaths:        []string{crdDir},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	env.ControlPlane.GetAPIServer().Path = filepath.Join(binDir, "kube-apiserver")
	env.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(binDir, "etcd")}
	args := env.ControlPlane.GetAPIServer().Configure()
	for k, v := range apiServerFlags {
		args.Set(k, v)
	}
	cp := &ControlPlane{env: env, dir: dir}
	if err := cp.start(ctx, crdDir, definitionDirs); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context, crdDir string, definitionDirs []string) error {
	if _, err := cp.env.Start(); err != nil {
		return fmt.Errorf("starting control plane: %w", err)
	}
	admin, err := cp.env.AddUser(envtest.User{Name: "bench-harness", Groups: []string{"system:masters"}}, &rest.Config{})
	if err != nil {
		return fmt.Errorf("adding harness user: %w", err)
	}
	cp.Config = admin.Config()
	cp.Config.QPS, cp.Config.Burst = 2000, 4000
	cp.Own = &RequestCounter{}
	counted := rest.CopyConfig(cp.Config)
	counted.Wrap(cp.Own.Wrap)
	cp.Client, err = client.NewWithWatch(counted, client.Options{Scheme: newScheme()})
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}

	user, err := cp.env.AddUser(envtest.User{Name: "controller-under-test", Groups: []string{"system:masters"}}, &rest.Config{})
	if err != nil {
		return fmt.Errorf("adding controller user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("building kubeconfig: %w", err)
	}
	cp.Kubeconfig = filepath.Join(cp.dir, "kubeconfig")
	if err := os.WriteFile(cp.Kubeconfig, kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	for _, d := range definitionDirs {
		if _, err := localcp.ApplyDefinitions(ctx, cp.Client, d, localcp.DefaultDefinitionNamespace); err != nil {
			return fmt.Errorf("applying definitions of %s: %w", d, err)
		}
	}
	return nil
}

// APIServerMetrics scrapes the apiserver's /metrics as the admin user
// (uncounted: /metrics is not a resource request anyway).
func (cp *ControlPlane) APIServerMetrics(ctx context.Context) (Samples, error) {
	hc, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		return nil, fmt.Errorf("creating HTTP client: %w", err)
	}
	return scrape(ctx, hc, strings.TrimSuffix(cp.Config.Host, "/")+"/metrics")
}

// Requests reads apiserver_request_total as counts by verb and resource.
func (cp *ControlPlane) Requests(ctx context.Context) (record.RequestCounts, error) {
	s, err := cp.APIServerMetrics(ctx)
	if err != nil {
		return nil, err
	}
	return RequestCountsFrom(s), nil
}

// Stop stops kube-apiserver and etcd and deletes their data.
func (cp *ControlPlane) Stop() error {
	var err error
	if cp.env != nil {
		err = cp.env.Stop()
		cp.env = nil
	}
	return errors.Join(err, os.RemoveAll(cp.dir))
}

// newScheme knows client-go's kinds and OAM's.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}
