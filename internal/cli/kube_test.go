package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
)

// controllerConfig parses args as the controller's connection flags and
// loads the config they select.
func controllerConfig(t *testing.T, args ...string) (host string, disableCompression bool, err error) {
	t.Helper()
	k := NewControllerKube()
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	k.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := k.Config()
	if err != nil {
		return "", false, err
	}
	return cfg.Host, cfg.DisableCompression, nil
}

// The controller asks for no compression unless told otherwise, and that
// never changes which cluster it reaches: in a Pod without a kubeconfig,
// client-go takes the in-cluster config only when what the flags merged
// is its built-in default (localhost:8080), and any kubeconfig override,
// cli-runtime's own --disable-compression among them, makes it differ
// (kubernetes/kubectl#1605), so the controller would dial localhost.
func TestControllerKube_NoCompressionKeepsTheInClusterConfig(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	rules := clientcmd.ClientConfigLoadingRules{DefaultClientConfig: &clientcmd.DefaultClientConfig}
	for _, args := range [][]string{nil, {"--disable-compression=false"}, {"--disable-compression"}} {
		k := NewControllerKube()
		fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
		k.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		merged, err := k.Flags.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if !rules.IsDefaultConfig(merged) {
			t.Errorf("%v: the flags merged a config other than client-go's default (%+v): in a Pod, the in-cluster config would not be tried", args, merged)
		}
	}

	kubeconfig := filepath.Join(t.TempDir(), "config")
	doc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:7443'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--kubeconfig", kubeconfig}, true},
		{[]string{"--kubeconfig", kubeconfig, "--disable-compression=false"}, false},
	} {
		host, off, err := controllerConfig(t, c.args...)
		if err != nil || host != "https://127.0.0.1:7443" || off != c.want {
			t.Errorf("%v: host %q, compression disabled %v (%v); want the kubeconfig's server, disabled %v", c.args, host, off, err, c.want)
		}
	}
}
