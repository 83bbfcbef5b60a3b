package charttest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Helm is Helm's own SDK (v4) acting as the `helm` CLI does against a
// cluster, in one namespace: what a user ran before an Application took
// the release over. Its records and its objects' marks are Helm's own.
type Helm struct {
	t   testing.TB
	ns  string
	cfg *action.Configuration
}

// NewHelm is `helm --namespace ns` against the cluster behind cfg (a
// client certificate or a token, as envtest's admin has).
func NewHelm(t testing.TB, cfg *rest.Config, ns string) *Helm {
	t.Helper()
	path := writeKubeconfig(t, cfg)
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &path, &ns
	conf := action.NewConfiguration()
	if err := conf.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	return &Helm{t: t, ns: ns, cfg: conf}
}

// Install is `helm install name archive` with values.
func (h *Helm) Install(name string, archive []byte, values map[string]any) {
	h.t.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		h.t.Fatal(err)
	}
	in := action.NewInstall(h.cfg)
	in.ReleaseName, in.Namespace = name, h.ns
	in.WaitStrategy = kube.HookOnlyStrategy
	if _, err := in.Run(ch, values); err != nil {
		h.t.Fatalf("helm install %s: %v", name, err)
	}
}

// Upgrade is `helm upgrade name archive` with values.
func (h *Helm) Upgrade(name string, archive []byte, values map[string]any) {
	h.t.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		h.t.Fatal(err)
	}
	up := action.NewUpgrade(h.cfg)
	up.Namespace = h.ns
	up.WaitStrategy = kube.HookOnlyStrategy
	if _, err := up.Run(name, ch, values); err != nil {
		h.t.Fatalf("helm upgrade %s: %v", name, err)
	}
}

// History is `helm history name`: revision → "status chart-version".
func (h *Helm) History(name string) map[int]string {
	h.t.Helper()
	rels, err := action.NewHistory(h.cfg).Run(name)
	if err != nil {
		h.t.Fatalf("helm history %s: %v", name, err)
	}
	out := map[int]string{}
	for _, r := range rels {
		rel, ok := r.(*releasev1.Release)
		if !ok {
			h.t.Fatalf("release of type %T", r)
		}
		out[rel.Version] = string(rel.Info.Status) + " " + rel.Chart.Metadata.Name + "-" + rel.Chart.Metadata.Version
	}
	return out
}

// Deployed is the revision `helm status name` shows deployed.
func (h *Helm) Deployed(name string) int {
	h.t.Helper()
	r, err := action.NewStatus(h.cfg).Run(name)
	if err != nil {
		h.t.Fatalf("helm status %s: %v", name, err)
	}
	rel := r.(*releasev1.Release)
	if rel.Info.Status != rcommon.StatusDeployed {
		h.t.Fatalf("helm status %s: %s", name, rel.Info.Status)
	}
	return rel.Version
}

// writeKubeconfig writes cfg (a client certificate, as envtest's admin)
// as a kubeconfig file for Helm's SDK.
func writeKubeconfig(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}
