package testcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options say where the planes find their binaries and what they install.
type Options struct {
	// BinDir holds kube-apiserver and etcd; default $KUBEBUILDER_ASSETS.
	BinDir string
	// CRDDirectoryPaths are installed on every plane.
	CRDDirectoryPaths []string
	// Dir receives the kubeconfig files. StartT defaults it to t.TempDir();
	// Start to a new temporary directory that it leaves to the caller.
	Dir string
	// StartTimeout bounds the start of each etcd and kube-apiserver
	// (default one minute: several planes start at once on few cores).
	StartTimeout time.Duration
}

// Plane is one running control plane.
type Plane struct {
	// Name names the plane; its kubeconfigs use it for the cluster and
	// context, so `steward cluster join` defaults to it.
	Name string
	// Config talks to the plane as a member of system:masters with a
	// client certificate.
	Config *rest.Config
	// KubeconfigPath holds the credentials of Config: a client certificate.
	KubeconfigPath string
	// TokenKubeconfigPath holds a service account token bound to
	// cluster-admin instead.
	TokenKubeconfigPath string

	mu  sync.Mutex
	env *envtest.Environment
}

// StartT starts one plane per name, concurrently, and stops them when the
// test ends. It fails the test when KUBEBUILDER_ASSETS is not set.
func StartT(t testing.TB, opts Options, names ...string) []*Plane {
	t.Helper()
	if opts.BinDir == "" && os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run with KUBEBUILDER_ASSETS=$PWD/bin/k8s (make test does)")
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	planes, err := Start(ctx, opts, names...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range planes {
			if err := p.Stop(); err != nil {
				t.Error(err)
			}
		}
	})
	return planes
}

// Start starts one plane per name, concurrently. On error nothing is left
// running. Call Stop on each plane when done.
func Start(ctx context.Context, opts Options, names ...string) ([]*Plane, error) {
	if opts.StartTimeout == 0 {
		opts.StartTimeout = time.Minute
	}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "testcp-")
		if err != nil {
			return nil, fmt.Errorf("creating kubeconfig dir: %w", err)
		}
		opts.Dir = dir
	}
	planes := make([]*Plane, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			planes[i], errs[i] = startPlane(ctx, opts, name)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, p := range planes {
			if p != nil {
				err = errors.Join(err, p.Stop())
			}
		}
		return nil, err
	}
	return planes, nil
}

func startPlane(ctx context.Context, opts Options, name string) (*Plane, error) {
	env := &envtest.Environment{
		BinaryAssetsDirectory:    opts.BinDir,
		CRDDirectoryPaths:        opts.CRDDirectoryPaths,
		ErrorIfCRDPathMissing:    len(opts.CRDDirectoryPaths) > 0,
		ControlPlaneStartTimeout: opts.StartTimeout,
	}
	if _, err := env.Start(); err != nil {
		return nil, fmt.Errorf("starting plane %s: %w", name, err)
	}
	p := &Plane{Name: name, env: env}
	if err := p.provision(ctx, opts.Dir); err != nil {
		return nil, errors.Join(fmt.Errorf("plane %s: %w", name, err), p.Stop())
	}
	return p, nil
}

// provision adds the admin user and writes both kubeconfigs.
func (p *Plane) provision(ctx context.Context, dir string) error {
	user, err := p.env.AddUser(envtest.User{Name: "steward-admin", Groups: []string{"system:masters"}}, &rest.Config{QPS: 100, Burst: 200})
	if err != nil {
		return fmt.Errorf("adding admin user: %w", err)
	}
	p.Config = user.Config()
	p.KubeconfigPath = filepath.Join(dir, p.Name+".kubeconfig")
	certUser := &clientcmdapi.AuthInfo{ClientCertificateData: p.Config.CertData, ClientKeyData: p.Config.KeyData}
	if err := writeKubeconfig(p.KubeconfigPath, p.Name, p.Config, certUser); err != nil {
		return err
	}
	token, err := serviceAccountToken(ctx, p.Config)
	if err != nil {
		return err
	}
	p.TokenKubeconfigPath = filepath.Join(dir, p.Name+"-token.kubeconfig")
	return writeKubeconfig(p.TokenKubeconfigPath, p.Name, p.Config, &clientcmdapi.AuthInfo{Token: token})
}

// Stop terminates the plane's kube-apiserver and etcd; requests to it then
// fail with connection refused. It is safe to call more than once.
func (p *Plane) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.env == nil {
		return nil
	}
	err := p.env.Stop()
	p.env = nil
	if err != nil {
		return fmt.Errorf("stopping plane %s: %w", p.Name, err)
	}
	return nil
}

// Client returns a client of the plane as its admin user.
func (p *Plane) Client(opts client.Options) (client.Client, error) {
	return client.New(p.Config, opts)
}

// serviceAccountToken creates a service account bound to cluster-admin and
// returns a day-long token for it.
func serviceAccountToken(ctx context.Context, cfg *rest.Config) (string, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return "", fmt.Errorf("creating client: %w", err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "steward-hub", Namespace: metav1.NamespaceDefault}}
	if err := c.Create(ctx, sa); err != nil {
		return "", fmt.Errorf("creating service account: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "steward-hub"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
	}
	if err := c.Create(ctx, binding); err != nil {
		return "", fmt.Errorf("binding service account: %w", err)
	}
	seconds := int64(24 * 3600)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	if err := c.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("requesting token: %w", err)
	}
	return req.Status.Token, nil
}

func writeKubeconfig(path, name string, cfg *rest.Config, user *clientcmdapi.AuthInfo) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = user
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: metav1.NamespaceDefault}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// Main runs a package's tests (m) with one plane named name started for
// them all, and exits. Without KUBEBUILDER_ASSETS the tests run with no
// plane (nil): those that need one skip.
func Main(m *testing.M, name string, plane **Plane) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("KUBEBUILDER_ASSETS is not set: the tests against an API server are skipped (make test sets it)")
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	planes, err := Start(ctx, Options{}, name)
	cancel()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	*plane = planes[0]
	code := m.Run()
	_ = planes[0].Stop()
	os.Exit(code)
}

// ClientT is a client of plane for a test, which it skips when there is no
// plane (Main without KUBEBUILDER_ASSETS).
func ClientT(t testing.TB, plane *Plane) client.Client {
	t.Helper()
	if plane == nil {
		t.Skip("needs an API server (KUBEBUILDER_ASSETS)")
	}
	c, err := plane.Client(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
