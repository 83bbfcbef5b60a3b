package cli

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/steward-oam/steward/internal/cluster"
)

// kubeconfigCluster is what the current context of a kubeconfig says about
// the cluster to join.
type kubeconfigCluster struct {
	// Name is the context's cluster name, the default cluster name.
	Name        string
	Credentials cluster.Credentials
}

// readKubeconfig reads the current context of a kubeconfig into cluster
// credentials: a client certificate when the user has one, else a token.
// Files the kubeconfig refers to are read, relative to the kubeconfig.
func readKubeconfig(path string) (kubeconfigCluster, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	raw, err := rules.Load()
	if err != nil {
		return kubeconfigCluster{}, fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	kctx, ok := raw.Contexts[raw.CurrentContext]
	if raw.CurrentContext == "" || !ok {
		return kubeconfigCluster{}, fmt.Errorf("kubeconfig %s has no current context: set one with kubectl config use-context", path)
	}
	where := fmt.Sprintf("kubeconfig %s, context %q", path, raw.CurrentContext)
	if u := raw.AuthInfos[kctx.AuthInfo]; u != nil && (u.Exec != nil || u.AuthProvider != nil) {
		return kubeconfigCluster{}, fmt.Errorf("%s: the user authenticates with a plugin; a cluster secret needs a client certificate or a token", where)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, raw.CurrentContext, &clientcmd.ConfigOverrides{}, rules).ClientConfig()
	if err != nil {
		return kubeconfigCluster{}, fmt.Errorf("%s: %w", where, err)
	}
	if cfg.Insecure {
		return kubeconfigCluster{}, fmt.Errorf("%s: insecure-skip-tls-verify is set; give the cluster's CA (certificate-authority-data) instead", where)
	}
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return kubeconfigCluster{}, fmt.Errorf("%s: %w", where, err)
	}
	cred := cluster.Credentials{Endpoint: cfg.Host, CAData: cfg.CAData}
	if c := raw.Clusters[kctx.Cluster]; c != nil {
		cred.ProxyURL = c.ProxyURL
	}
	switch {
	case len(cfg.CertData) > 0 && len(cfg.KeyData) > 0:
		cred.CertData, cred.KeyData = cfg.CertData, cfg.KeyData
	case strings.TrimSpace(cfg.BearerToken) != "":
		cred.Token = strings.TrimSpace(cfg.BearerToken)
	case cfg.BearerTokenFile != "":
		token, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return kubeconfigCluster{}, fmt.Errorf("%s: reading token file: %w", where, err)
		}
		cred.Token = strings.TrimSpace(string(token))
	}
	if len(cred.CertData) == 0 && cred.Token == "" {
		return kubeconfigCluster{}, fmt.Errorf("%s: the user has neither a client certificate nor a token", where)
	}
	return kubeconfigCluster{Name: kctx.Cluster, Credentials: cred}, nil
}
