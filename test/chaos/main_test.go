package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/localcp"
)

// stewardBin is the controller binary built once for the package.
var stewardBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run with `make test` or `make chaos`, which use bin/k8s")
		return 1
	}
	dir, err := os.MkdirTemp("", "chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	stewardBin = filepath.Join(dir, "steward")
	build := exec.Command("go", "build", "-o", stewardBin, "../../cmd/steward")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building steward:", err)
		return 1
	}
	return m.Run()
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1beta1.AddToScheme(s)
	return s
}

// plane is one etcd and kube-apiserver whose API server can be restarted
// while etcd keeps the data: the serving certificates live in a directory
// the plane owns and the port stays the same, so clients and the
// controller's kubeconfig keep working across restarts.
type plane struct {
	env        *envtest.Environment
	cfg        *rest.Config
	kubeconfig string
	restarts   int
}

func startPlane(t *testing.T, dir string) *plane {
	t.Helper()
	certDir := filepath.Join(dir, "apiserver")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:        []string{filepath.Join("..", "..", "config", "crd")},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
	}
	env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir}
	if _, err := env.Start(); err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	p := &plane{env: env}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "chaos-admin", Groups: []string{"system:masters"}}, &rest.Config{QPS: 200, Burst: 400})
	if err != nil {
		t.Fatalf("adding admin user: %v", err)
	}
	p.cfg = user.Config()
	p.kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["chaos"] = &clientcmdapi.Cluster{Server: p.cfg.Host, CertificateAuthorityData: p.cfg.CAData}
	kc.AuthInfos["chaos"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.cfg.CertData, ClientKeyData: p.cfg.KeyData}
	kc.Contexts["chaos"] = &clientcmdapi.Context{Cluster: "chaos", AuthInfo: "chaos"}
	kc.CurrentContext = "chaos"
	if err := clientcmd.WriteToFile(*kc, p.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return p
}

// startInstalledPlane starts a plane in dir with the definitions and the
// test namespace installed, and returns it with a client of it.
func startInstalledPlane(ctx context.Context, t *testing.T, dir string) (*plane, client.Client) {
	t.Helper()
	p := startPlane(t, dir)
	c, err := client.New(p.cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := install(ctx, c); err != nil {
		t.Fatal(err)
	}
	return p, c
}

// restartAPIServer stops kube-apiserver and starts it again on the same
// port with the same certificates; etcd keeps running.
func (p *plane) restartAPIServer(ctx context.Context, c client.Client) error {
	api := p.env.ControlPlane.APIServer
	// A graceful stop with open watches can take long on a loaded
	// machine; after StopTimeout envtest sends SIGKILL, which is a fine
	// fault too.
	api.StopTimeout = 3 * time.Second
	if err := api.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	// Wait for the port to be free, then start on it again.
	hostPort := net.JoinHostPort(api.SecureServing.Address, api.SecureServing.Port)
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.DialTimeout("tcp", hostPort, time.Second)
		if err != nil {
			break
		}
		_ = conn.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver still answers on %s a minute after it was stopped", hostPort)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = api.Start(); err == nil {
			break
		}
		_ = api.Stop()
		time.Sleep(time.Second)
	}
	if err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	p.restarts++
	// Started means healthy; wait until our kinds are served again too.
	deadline = time.Now().Add(time.Minute)
	for {
		var apps v1beta1.ApplicationList
		err := c.List(ctx, &apps, client.InNamespace(chaosNS))
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver restarted but Applications are not served after a minute: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// install creates the namespaces and the built-in definitions.
func install(ctx context.Context, c client.Client) error {
	if _, err := localcp.ApplyDefinitions(ctx, c, filepath.Join("..", "..", "config", "definitions"), localcp.DefaultDefinitionNamespace); err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chaosNS}}); err != nil {
		return err
	}
	if err := installFlowStep(ctx, c); err != nil {
		return err
	}
	return installBuster(ctx, c)
}
