package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
)

// kubeconfig writes a one-context kubeconfig whose user is given as YAML.
func kubeconfig(t *testing.T, user string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("file-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := `apiVersion: v1
kind: Config
clusters:
- name: eu-1
  cluster:
    server: https://127.0.0.1:1
    certificate-authority-data: Q0E=
contexts:
- name: ctx
  context: {cluster: eu-1, user: u}
current-context: ctx
users:
- name: u
  user:
` + user
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadKubeconfig(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		want    cluster.Credentials
		wantErr string
	}{{
		name: "client certificate wins over token",
		user: "    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ\n    token: ignored\n",
		want: cluster.Credentials{Endpoint: "https://127.0.0.1:1", CAData: []byte("CA"), CertData: []byte("CERT"), KeyData: []byte("KEY")},
	}, {
		name: "token",
		user: "    token: abc\n",
		want: cluster.Credentials{Endpoint: "https://127.0.0.1:1", CAData: []byte("CA"), Token: "abc"},
	}, {
		name: "token file relative to the kubeconfig",
		user: "    tokenFile: token\n",
		want: cluster.Credentials{Endpoint: "https://127.0.0.1:1", CAData: []byte("CA"), Token: "file-token"},
	}, {
		name:    "exec plugin",
		user:    "    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}\n",
		wantErr: "authenticates with a plugin",
	}, {
		name:    "no credentials",
		user:    "    username: admin\n",
		wantErr: "neither a client certificate nor a token",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readKubeconfig(kubeconfig(t, tt.user))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "eu-1" {
				t.Fatalf("name = %q, want the context's cluster eu-1", got.Name)
			}
			if g, w := got.Credentials, tt.want; g.Endpoint != w.Endpoint || string(g.CAData) != string(w.CAData) ||
				string(g.CertData) != string(w.CertData) || string(g.KeyData) != string(w.KeyData) || g.Token != w.Token {
				t.Fatalf("credentials = %+v, want %+v", g, w)
			}
		})
	}
}

func fakeHub(objs ...client.Object) client.Client {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func TestJoin_WritesSecretAndRefusesMistakes(t *testing.T) {
	ctx := context.Background()
	path := kubeconfig(t, "    token: abc\n")
	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: cluster.DefaultNamespace}}
	hub := fakeHub(plain)
	fast := 200 * time.Millisecond

	res, err := Join(ctx, hub, JoinOptions{KubeconfigPath: path, Labels: map[string]string{"env": "prod"}, ProbeTimeout: fast})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cluster.Name != "eu-1" || res.Cluster.CredentialType != cluster.CredentialServiceAccountToken || res.ProbeErr == nil {
		t.Fatalf("join = %+v, want eu-1 by token, unreachable", res)
	}
	got, err := cluster.Registry{Reader: hub}.Get(ctx, "eu-1")
	if err != nil || got.Labels["env"] != "prod" {
		t.Fatalf("registered %+v, %v", got, err)
	}

	for _, tc := range []struct {
		opts JoinOptions
		want string
	}{
		{JoinOptions{Name: "eu-1"}, `cluster "eu-1" is already registered (endpoint https://127.0.0.1:1): pass --force`},
		{JoinOptions{Name: "local"}, `the name "local" is reserved`},
		{JoinOptions{Name: "db"}, "secret vela-system/db exists and is not a cluster secret"},
		{JoinOptions{Name: "Bad_Name"}, `cluster name "Bad_Name"`},
		{JoinOptions{Name: "x", Labels: map[string]string{"cluster.core.oam.dev/x": "y"}}, "prefix is reserved"},
	} {
		tc.opts.KubeconfigPath, tc.opts.ProbeTimeout = path, fast
		if _, err := Join(ctx, hub, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Join(%+v): err = %v, want %q", tc.opts, err, tc.want)
		}
	}
	if res, err := Join(ctx, hub, JoinOptions{KubeconfigPath: path, Force: true, ProbeTimeout: fast}); err != nil || !res.Replaced {
		t.Fatalf("forced join: %+v, %v", res, err)
	}
}

func TestDetach_RefusesWhileTrackersNameTheCluster(t *testing.T) {
	ctx := context.Background()
	s := cluster.NewSecret(cluster.DefaultNamespace, "eu-1", nil, "", cluster.Credentials{Endpoint: "https://a", Token: "t"})
	rt := func(app, c string) *v1beta1.ResourceTracker {
		return &v1beta1.ResourceTracker{
			ObjectMeta: metav1.ObjectMeta{Name: app, Labels: map[string]string{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: "prod"}},
			Spec: v1beta1.ResourceTrackerSpec{ManagedResources: []v1beta1.ManagedResource{{
				ClusterObjectReference: v1beta1.ClusterObjectReference{Cluster: c, APIVersion: "v1", Kind: "ConfigMap", Name: "x"},
			}}},
		}
	}
	hub := fakeHub(s, rt("shop", "eu-1"), rt("blog", "eu-1"), rt("wiki", "us-1"))

	if _, err := Detach(ctx, hub, DetachOptions{Name: "local"}); err == nil {
		t.Fatal("detached local")
	}
	if _, err := Detach(ctx, hub, DetachOptions{Name: "nowhere"}); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("detach of an unknown cluster: %v", err)
	}
	_, err := Detach(ctx, hub, DetachOptions{Name: "eu-1"})
	if err == nil || !strings.Contains(err.Error(), "2 application(s): prod/blog, prod/shop") {
		t.Fatalf("detach of a used cluster: err = %v", err)
	}
	apps, err := Detach(ctx, hub, DetachOptions{Name: "eu-1", Force: true})
	if err != nil || len(apps) != 2 {
		t.Fatalf("forced detach: %v, %v", apps, err)
	}
	if _, err := (cluster.Registry{Reader: hub}).Get(ctx, "eu-1"); err == nil {
		t.Fatal("cluster still registered after detach")
	}
}
