package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
	"github.com/steward-oam/steward/internal/tracker"
)

// Helm chart stories: KubeVela's helmchart component, its chart from a
// loopback Helm repository, delivered, repaired, upgraded, pruned and
// deleted through Steward's own path, with Helm's release records kept
// so that `helm list` shows the release.

// installHelmchart installs the built-in helmchart definition into ns.
func installHelmchart(t *testing.T, ns string) {
	t.Helper()
	controllertest.InstallBuiltinDefinitions(t, ns, "helmchart")
}

// helmApp is an Application of one helmchart component "web".
func helmApp(chartYAML, values string) string {
	return "metadata: {name: web}\nspec:\n  components:\n    - name: web\n      type: helmchart\n      properties:\n        chart: " + chartYAML + "\n        values: " + values + "\n"
}

// helmList is what `helm list` shows in ns: the deployed releases, read
// by Helm's own storage driver.
func helmList(t *testing.T, ns string) map[string]int {
	t.Helper()
	cs, err := kubernetes.NewForConfig(testCfg)
	if err != nil {
		t.Fatal(err)
	}
	st := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns)))
	rels, err := st.ListDeployed()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range rels {
		rel, ok := r.(*releasev1.Release)
		if !ok {
			t.Fatalf("release of type %T", r)
		}
		out[rel.Name+"@"+rel.Chart.Metadata.Name+"-"+rel.Chart.Metadata.Version] = rel.Version
	}
	return out
}

func setHelmValues(t *testing.T, ns, values string) {
	t.Helper()
	eventually(t, 10*time.Second, "values updated", func() error {
		app := getApp(t, ns, "web")
		props := string(app.Spec.Components[0].Properties.Raw)
		i := strings.Index(props, `"values":`)
		if i < 0 {
			return fmt.Errorf("no values in %s", props)
		}
		app.Spec.Components[0].Properties = &runtime.RawExtension{Raw: []byte(props[:i] + `"values":` + values + "}")}
		return testClient.Update(context.Background(), app)
	})
}

func waitConfigMap(t *testing.T, ns, name, key, want string) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%s %s=%q", name, key, want), func() error {
		cm, err := getConfigMap(t, ns, name)
		if err != nil {
			return err
		}
		if cm.Data[key] != want {
			return fmt.Errorf("%s = %q", key, cm.Data[key])
		}
		return nil
	})
}

func waitConfigMapGone(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, 30*time.Second, name+" deleted", func() error {
		if _, err := getConfigMap(t, ns, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// helmSource is where a story's chart comes from: the chart property at
// a version, and how many times the chart was downloaded.
type helmSource struct {
	chart     func(version string) string
	downloads func() int64
}

// The same story from a Helm repository, an OCI registry and a URL: the
// chart with values is delivered and recorded like any component's
// objects, repaired after a hand delete, upgraded on new values, pruned
// when a new version of the chart drops a template, deleted with the
// Application; `helm list` shows each revision, and the chart is
// downloaded once per version.
func TestHelm_ChartDeliveredRepairedUpgradedPrunedAndDeleted(t *testing.T) {
	sources := map[string]func(t *testing.T, ns string) helmSource{
		"repository": func(t *testing.T, ns string) helmSource {
			repo := charttest.NewRepo()
			t.Cleanup(repo.Close)
			repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
			repo.Add(charttest.ConfigMapChartWithoutExtra("demo", "1.1.0"))
			return helmSource{
				chart: func(v string) string {
					return fmt.Sprintf(`{"source":"demo","repoURL":%q,"version":%q}`, repo.URL(), v)
				},
				downloads: repo.Downloads.Load,
			}
		},
		"oci": func(t *testing.T, ns string) helmSource {
			reg := charttest.NewRegistry()
			t.Cleanup(reg.Close)
			ref := reg.Push("charts", charttest.ConfigMapChart("demo", "1.0.0"))
			reg.Push("charts", charttest.ConfigMapChartWithoutExtra("demo", "1.1.0"))
			// The registry is plain HTTP, which a Secret must allow.
			createFromYAML(t, ns, "metadata: {name: plain-http}\ntype: Opaque\nstringData: {insecurePlainHTTP: \"true\"}\n", &corev1.Secret{})
			return helmSource{
				chart: func(v string) string {
					return fmt.Sprintf(`{"source":%q,"version":%q,"auth":{"secretRef":{"name":"plain-http"}}}`, ref, v)
				},
				downloads: reg.Blobs.Load,
			}
		},
		"url": func(t *testing.T, ns string) helmSource {
			repo := charttest.NewRepo()
			t.Cleanup(repo.Close)
			urls := map[string]string{
				"1.0.0": repo.Add(charttest.ConfigMapChart("demo", "1.0.0")),
				"1.1.0": repo.Add(charttest.ConfigMapChartWithoutExtra("demo", "1.1.0")),
			}
			return helmSource{
				chart:     func(v string) string { return fmt.Sprintf(`{"source":%q}`, urls[v]) },
				downloads: repo.Downloads.Load,
			}
		},
	}
	ctx := context.Background()
	for name, newSource := range sources {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			installHelmchart(t, ns)
			src := newSource(t, ns)
			startManager(t, testCfg, testOptions())
			createApp(t, ns, helmApp(src.chart("1.0.0"), `{"greeting":"bonjour"}`))
			waitReady(t, ns, "web")
			waitConfigMap(t, ns, "web-config", "greeting", "bonjour")
			waitConfigMap(t, ns, "web-extra", "revision", "1")
			cm, _ := getConfigMap(t, ns, "web-config")
			if cm.Labels[v1beta1.LabelAppName] != "web" || cm.Labels[v1beta1.LabelAppComponent] != "web" {
				t.Errorf("the chart's object lacks Steward's ownership labels: %v", cm.Labels)
			}
			// Recorded in the version's tracker like any component's objects.
			app := getApp(t, ns, "web")
			rt := &v1beta1.ResourceTracker{}
			if err := testClient.Get(ctx, client.ObjectKey{Name: tracker.Name("web", ns, tracker.Versioned(app.Generation))}, rt); err != nil {
				t.Fatalf("tracker: %v", err)
			}
			entries, _ := tracker.Entries(rt)
			recorded := map[string]bool{}
			for _, e := range entries {
				recorded[e.Kind+"/"+e.Name] = true
			}
			if !recorded["ConfigMap/web-config"] || !recorded["ConfigMap/web-extra"] || !recorded["ConfigMap/web-helm-release"] {
				t.Fatalf("the version's tracker records %v", recorded)
			}
			waitHelmList(t, ns, "web@demo-1.0.0", 1)

			// Repaired after a hand delete.
			if err := testClient.Delete(ctx, cm); err != nil {
				t.Fatal(err)
			}
			waitConfigMap(t, ns, "web-config", "greeting", "bonjour")

			// Upgraded on new values.
			setHelmProperties(t, ns, src.chart("1.0.0"), `{"greeting":"hola"}`)
			waitConfigMap(t, ns, "web-config", "greeting", "hola")
			waitHelmList(t, ns, "web@demo-1.0.0", 2)
			// Pruned when a new version of the chart drops a template.
			setHelmProperties(t, ns, src.chart("1.1.0"), `{"greeting":"hola"}`)
			waitConfigMapGone(t, ns, "web-extra")
			waitConfigMap(t, ns, "web-config", "chart", "demo-1.1.0")
			waitHelmList(t, ns, "web@demo-1.1.0", 3)
			if d := src.downloads(); d != 2 {
				t.Errorf("%d chart downloads, want 2 (one per version: cached by digest)", d)
			}

			// Deleted with the Application, release records included.
			deleteApp(t, ns, "web")
			waitConfigMapGone(t, ns, "web-config")
			eventually(t, 15*time.Second, "release records deleted", func() error {
				var list corev1.SecretList
				if err := testClient.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
					return err
				}
				if len(list.Items) > 0 {
					return fmt.Errorf("%d records left", len(list.Items))
				}
				return nil
			})
		})
	}
}

// waitHelmList waits until `helm list` shows release@chart at revision,
// alone.
func waitHelmList(t *testing.T, ns, release string, revision int) {
	t.Helper()
	eventually(t, 15*time.Second, fmt.Sprintf("helm list shows %s revision %d", release, revision), func() error {
		if got := helmList(t, ns); got[release] != revision || len(got) != 1 {
			return fmt.Errorf("helm list = %v", got)
		}
		return nil
	})
}

// setHelmProperties sets the helmchart component's chart and values.
func setHelmProperties(t *testing.T, ns, chartJSON, values string) {
	t.Helper()
	eventually(t, 10*time.Second, "properties updated", func() error {
		app := getApp(t, ns, "web")
		app.Spec.Components[0].Properties = &runtime.RawExtension{Raw: []byte(`{"chart":` + chartJSON + `,"values":` + values + `}`)}
		return testClient.Update(context.Background(), app)
	})
}

// A chart given by URL, and charts from private repositories with basic
// auth and with a bearer token (over HTTPS, its CA in the Secret), read
// from Secrets of the shapes KubeVela documents; wrong credentials are
// reported naming the source.
func TestHelm_URLAndPrivateRepositories(t *testing.T) {
	ns := newNamespace(t)
	installHelmchart(t, ns)
	startManager(t, testCfg, testOptions())

	public := charttest.NewRepo()
	defer public.Close()
	url := public.Add(charttest.ConfigMapChart("bytgz", "0.3.0"))
	createApp(t, ns, strings.Replace(helmApp(fmt.Sprintf("{source: %q}", url), "{greeting: from-url}"), "name: web}", "name: byurl}", 1))
	waitReady(t, ns, "byurl")
	waitConfigMap(t, ns, "web-config", "chart", "bytgz-0.3.0")

	basic := charttest.NewRepo()
	defer basic.Close()
	basic.Username, basic.Password = "alice", "s3cret"
	basic.Add(charttest.ConfigMapChart("private", "1.0.0"))
	createFromYAML(t, ns, "metadata: {name: basic-creds}\ntype: kubernetes.io/basic-auth\nstringData: {username: alice, password: s3cret}\n", &corev1.Secret{})
	token := charttest.NewTLSRepo()
	defer token.Close()
	token.Token = "t0ken"
	token.Add(charttest.ConfigMapChart("tokened", "2.0.0"))
	tokenSecret := &corev1.Secret{Type: corev1.SecretTypeOpaque, StringData: map[string]string{"token": "t0ken", "caFile": string(token.CAPEM())}}
	tokenSecret.Name, tokenSecret.Namespace = "token-creds", ns
	if err := testClient.Create(context.Background(), tokenSecret); err != nil {
		t.Fatal(err)
	}
	createFromYAML(t, ns, "metadata: {name: wrong-creds}\ntype: kubernetes.io/basic-auth\nstringData: {username: alice, password: nope}\n", &corev1.Secret{})

	app := func(name, release, chartName, repoURL, secret string) string {
		return fmt.Sprintf(`metadata: {name: %s}
spec:
  components:
    - name: %s
      type: helmchart
      properties:
        chart: {source: %s, repoURL: %q, version: "^1.0.0 || ^2.0.0", auth: {secretRef: {name: %s}}}
`, name, release, chartName, repoURL, secret)
	}
	createApp(t, ns, app("basic", "b", "private", basic.URL(), "basic-creds"))
	createApp(t, ns, app("token", "tk", "tokened", token.URL(), "token-creds"))
	createApp(t, ns, app("wrong", "w", "private", basic.URL(), "wrong-creds"))
	waitReady(t, ns, "basic")
	waitReady(t, ns, "token")
	waitConfigMap(t, ns, "b-config", "chart", "private-1.0.0")
	waitConfigMap(t, ns, "tk-config", "chart", "tokened-2.0.0")
	msg := waitNotReady(t, ns, "wrong", "ChartFetchFailed")
	if !strings.Contains(msg, basic.URL()) || !strings.Contains(msg, "401") {
		t.Errorf("message %q does not name the repository and the refusal", msg)
	}
	waitEvent(t, ns, "wrong", "ChartFetchFailed")
}

// An edit of a valuesFrom ConfigMap upgrades the release on the next
// re-sync, with no change to the Application.
func TestHelm_ValuesFromChangeUpgrades(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	ns := newNamespace(t)
	installHelmchart(t, ns)
	startManager(t, testCfg, testOptions())
	createFromYAML(t, ns, "metadata: {name: web-values}\ndata:\n  values.yaml: |\n    greeting: from-configmap\n    extra: false\n", &corev1.ConfigMap{})
	createApp(t, ns, fmt.Sprintf(`metadata: {name: web}
spec:
  components:
    - name: web
      type: helmchart
      properties:
        chart: {source: demo, repoURL: %q, version: 1.0.0}
        valuesFrom: [{kind: ConfigMap, name: web-values}]
`, repo.URL()))
	waitReady(t, ns, "web")
	waitConfigMap(t, ns, "web-config", "greeting", "from-configmap")
	gen := getApp(t, ns, "web").Generation

	cm, err := getConfigMap(t, ns, "web-values")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["values.yaml"] = "greeting: edited\nextra: true\n"
	if err := testClient.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	waitConfigMap(t, ns, "web-config", "greeting", "edited")
	waitConfigMap(t, ns, "web-extra", "revision", "1")
	if g := getApp(t, ns, "web").Generation; g != gen {
		t.Errorf("the Application changed (generation %d → %d)", gen, g)
	}
	eventually(t, 15*time.Second, "helm list shows revision 2", func() error {
		if got := helmList(t, ns); got["web@demo-1.0.0"] != 2 {
			return fmt.Errorf("helm list = %v", got)
		}
		return nil
	})
}

// With its repository out of reach, a new version of the Application
// cannot render: the condition and event name the repository, and the
// objects delivered before stay applied and kept.
func TestHelm_UnreachableRepositoryKeepsWhatWasDelivered(t *testing.T) {
	repo := charttest.NewRepo()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	ns := newNamespace(t)
	installHelmchart(t, ns)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, helmApp(fmt.Sprintf("{source: demo, repoURL: %q, version: \"latest\"}", repo.URL()), "{greeting: one}")+
		"        options: {cache: {ttl: \"0\"}}\n")
	waitReady(t, ns, "web")
	waitConfigMap(t, ns, "web-config", "greeting", "one")
	repo.Close()

	setHelmValues(t, ns, `{"greeting":"two"}`)
	msg := waitNotReady(t, ns, "web", "ChartFetchFailed")
	if !strings.Contains(msg, repo.URL()) {
		t.Errorf("message %q does not name the repository", msg)
	}
	waitEvent(t, ns, "web", "ChartFetchFailed")
	cm, err := getConfigMap(t, ns, "web-config")
	if err != nil || cm.Data["greeting"] != "one" {
		t.Fatalf("the delivered ConfigMap is gone or changed: %v %v", cm.Data, err)
	}
	// Still kept: a hand delete is repaired from the version delivered.
	if err := testClient.Delete(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	waitConfigMap(t, ns, "web-config", "greeting", "one")
}

// A chart's crds/ are created before its objects, whose kinds they
// serve, and, as Helm does, never deleted: the Application's objects
// go with it, the CRD stays.
func TestHelm_ChartCRDsCreatedAndNeverDeleted(t *testing.T) {
	group := fmt.Sprintf("g%d.example.com", time.Now().UnixNano()%1000000)
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group)
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.Archive("gadgets", "1.0.0", map[string]string{
		"crds/gadget.yaml": crd,
		"templates/gadget.yaml": fmt.Sprintf(`apiVersion: %s/v1
kind: Gadget
metadata:
  name: {{ .Release.Name }}
spec:
  size: 3
`, group),
	}))
	ns := newNamespace(t)
	installHelmchart(t, ns)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, helmApp(fmt.Sprintf(`{"source":"gadgets","repoURL":%q,"version":"1.0.0"}`, repo.URL()), "{}"))
	waitReady(t, ns, "web")
	ctx := context.Background()
	gadget := &unstructured.Unstructured{}
	gadget.SetAPIVersion(group + "/v1")
	gadget.SetKind("Gadget")
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, gadget); err != nil {
		t.Fatalf("the chart's Gadget: %v", err)
	}
	definition := &unstructured.Unstructured{}
	definition.SetAPIVersion("apiextensions.k8s.io/v1")
	definition.SetKind("CustomResourceDefinition")
	if err := testClient.Get(ctx, client.ObjectKey{Name: "gadgets." + group}, definition); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testClient.Delete(context.Background(), definition) })
	app := getApp(t, ns, "web")
	rt := &v1beta1.ResourceTracker{}
	if err := testClient.Get(ctx, client.ObjectKey{Name: tracker.Name("web", ns, tracker.Versioned(app.Generation))}, rt); err != nil {
		t.Fatal(err)
	}
	entries, _ := tracker.Entries(rt)
	for _, e := range entries {
		if e.Kind == "CustomResourceDefinition" {
			t.Fatalf("the chart's CRD is recorded as the Application's: %+v", e)
		}
	}

	deleteApp(t, ns, "web")
	eventually(t, 15*time.Second, "the Gadget deleted", func() error {
		err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, gadget.DeepCopy())
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	if err := testClient.Get(ctx, client.ObjectKey{Name: "gadgets." + group}, definition.DeepCopy()); err != nil {
		t.Fatalf("the chart's CRD was deleted with the Application: %v", err)
	}
}

// A topology policy places a chart like any component: its objects, its
// CRDs and its release records go to the spoke; its values still come
// from the hub.
func TestHelm_Spoke(t *testing.T) {
	requireControlPlane(t)
	_, spoke := joinedSpoke(t, "helm-spoke")
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	ns := newNamespace(t)
	installHelmchart(t, ns)
	createFromYAML(t, ns, "metadata: {name: web-values}\ndata:\n  values.yaml: |\n    greeting: from-the-hub\n", &corev1.ConfigMap{})
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: web}
spec:
  components:
    - name: web
      type: helmchart
      properties:
        chart: {source: demo, repoURL: %q, version: 1.0.0}
        valuesFrom: [{kind: ConfigMap, name: web-values, namespace: %s}]
  policies:
    - {name: where, type: topology, properties: {clusters: [helm-spoke], namespace: default}}
`, repo.URL(), ns))
	waitReady(t, ns, "web")
	cm, err := configMapOf(t, spoke, "default", "web-config")
	if err != nil || cm.Data["greeting"] != "from-the-hub" {
		t.Fatalf("the spoke's ConfigMap: %v %v", cm.Data, err)
	}
	if _, err := getConfigMap(t, ns, "web-config"); !apierrors.IsNotFound(err) {
		t.Errorf("the hub has the chart's ConfigMap too (%v)", err)
	}
	eventually(t, 15*time.Second, "the release recorded in the spoke", func() error {
		var list corev1.SecretList
		if err := spoke.List(context.Background(), &list, client.InNamespace("default"), client.MatchingLabels{"owner": "helm", "name": "web", "status": "deployed"}); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d deployed records", len(list.Items))
		}
		return nil
	})
}

// A release `helm install` made under the component's name and the
// Application's namespace (Helm's own SDK, as the CLI runs it), from
// another chart, is taken over in place, as KubeVela does: its objects
// become the Application's and carry its values, its records the
// Application's, and its history continues (`helm history`: Helm's
// revision 1 superseded, the Application's revision 2 deployed).
func TestHelm_TakesOverAReleaseHelmInstalled(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	ns := newNamespace(t)
	installHelmchart(t, ns)
	helm := charttest.NewHelm(t, testCfg, ns)
	helm.Install("web", charttest.ConfigMapChart("theirs", "1.0.0"), map[string]any{"greeting": "from-helm"})
	startManager(t, testCfg, testOptions())
	createApp(t, ns, helmApp(fmt.Sprintf("{source: demo, repoURL: %q, version: 1.0.0}", repo.URL()), "{greeting: bonjour}"))
	waitReady(t, ns, "web")
	waitConfigMap(t, ns, "web-config", "greeting", "bonjour")
	waitConfigMap(t, ns, "web-config", "chart", "demo-1.0.0")
	for _, name := range []string{"web-config", "web-extra"} {
		cm, err := getConfigMap(t, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels[v1beta1.LabelAppName] != "web" {
			t.Errorf("%s is not the Application's after the take-over: %v", name, cm.Labels)
		}
	}
	eventually(t, 15*time.Second, "helm history continued", func() error {
		got := helm.History("web")
		if got[1] != "superseded theirs-1.0.0" || got[2] != "deployed demo-1.0.0" || len(got) != 2 {
			return fmt.Errorf("helm history = %v", got)
		}
		return nil
	})
}

// A release record deleted or corrupted by hand is written again, and a
// release namespace deleted by hand (createNamespace) is created again
// with the chart's objects in it, on the next re-sync, as KubeVela
// repairs both.
func TestHelm_RecordAndNamespaceRepaired(t *testing.T) {
	ctx := context.Background()
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	ns := newNamespace(t)
	relNS := ns + "-rel"
	installHelmchart(t, ns)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, helmApp(fmt.Sprintf("{source: demo, repoURL: %q, version: 1.0.0}", repo.URL()), "{greeting: hi}")+
		"        release: {namespace: "+relNS+"}\n")
	waitReady(t, ns, "web")
	waitConfigMap(t, relNS, "web-config", "greeting", "hi")
	waitHelmList(t, relNS, "web@demo-1.0.0", 1)
	record := func() *corev1.Secret {
		t.Helper()
		var s corev1.Secret
		if err := testClient.Get(ctx, client.ObjectKey{Namespace: relNS, Name: "sh.helm.release.v1.web.v1"}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}

	if err := testClient.Delete(ctx, record()); err != nil {
		t.Fatal(err)
	}
	waitHelmList(t, relNS, "web@demo-1.0.0", 1)

	broken := record()
	broken.Data["release"] = []byte("garbage")
	if err := testClient.Update(ctx, broken); err != nil {
		t.Fatal(err)
	}
	waitHelmList(t, relNS, "web@demo-1.0.0", 1)

	// The namespace deleted by hand. envtest runs no namespace
	// controller: the test empties it and removes its finalizer, as that
	// controller would.
	cs, err := kubernetes.NewForConfig(testCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, relNS, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		if err := testClient.DeleteAllOf(ctx, kind, client.InNamespace(relNS)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 15*time.Second, "namespace gone", func() error {
		live, err := cs.CoreV1().Namespaces().Get(ctx, relNS, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if live.DeletionTimestamp == nil {
			return nil // made again already
		}
		live.Spec.Finalizers = nil
		if _, err := cs.CoreV1().Namespaces().Finalize(ctx, live, metav1.UpdateOptions{}); err != nil {
			return err
		}
		return fmt.Errorf("finalizing")
	})
	waitConfigMap(t, relNS, "web-config", "greeting", "hi")
	waitHelmList(t, relNS, "web@demo-1.0.0", 1)
}

// A chart or version that does not exist, a required valuesFrom source
// that is missing, values that are not YAML and a valuesFrom in another
// namespace, and a chart that fails to render with its values (off its
// values.schema.json, a required value missing) fail for good: after KubeVela's retries (release.MaxRetries)
// the workflow ends, phase workflowFailed with the error in
// status.workflow. A repository out of reach is transient: it stays
// rendering and is retried.
func TestHelm_PermanentFailureEndsTheWorkflow(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	repo.Add(charttest.Archive("strict", "0.1.0", map[string]string{
		"values.schema.json":  `{"type":"object","properties":{"replicas":{"type":"integer"}}}`,
		"templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict}\ndata: {replicas: {{ .Values.replicas | quote }}}\n",
		"templates/need.yaml": "{{ required \"greeting is required\" .Values.greeting }}\n",
	}))
	gone := charttest.NewRepo()
	gone.Close()
	ns := newNamespace(t)
	other := newNamespace(t)
	installHelmchart(t, ns)
	createFromYAML(t, ns, "metadata: {name: not-yaml}\ndata:\n  values.yaml: \"greeting: [unclosed\"\n", &corev1.ConfigMap{})
	createFromYAML(t, other, "metadata: {name: theirs}\ndata:\n  values.yaml: \"greeting: hi\"\n", &corev1.ConfigMap{})
	startManager(t, testCfg, testOptions())
	app := func(name, chart, more string) string {
		return "metadata: {name: " + name + "}\nspec:\n  components:\n    - name: web\n      type: helmchart\n      properties:\n        chart: " + chart + "\n" + more
	}
	demo := fmt.Sprintf("{source: demo, repoURL: %q, version: 1.0.0}", repo.URL())
	strict := fmt.Sprintf("{source: strict, repoURL: %q, version: 0.1.0}", repo.URL())
	permanent := map[string]string{
		"no-version":     app("no-version", fmt.Sprintf("{source: demo, repoURL: %q, version: 9.9.9}", repo.URL()), ""),
		"no-chart":       app("no-chart", fmt.Sprintf("{source: nope, repoURL: %q}", repo.URL()), ""),
		"no-values":      app("no-values", demo, "        valuesFrom: [{kind: ConfigMap, name: nope}]\n"),
		"not-yaml":       app("not-yaml", demo, "        valuesFrom: [{kind: ConfigMap, name: not-yaml}]\n"),
		"other-ns-value": app("other-ns-value", demo, "        valuesFrom: [{kind: ConfigMap, name: theirs, namespace: "+other+"}]\n"),
		// The chart renders to an error with its values, every time.
		"off-schema":  app("off-schema", strict, "        values: {replicas: three, greeting: hi}\n"),
		"no-required": app("no-required", strict, "        values: {replicas: 3}\n"),
	}
	for _, doc := range permanent {
		createApp(t, ns, doc)
	}
	createApp(t, ns, app("unreachable", fmt.Sprintf("{source: demo, repoURL: %q}", gone.URL()), ""))
	for name := range permanent {
		eventually(t, 90*time.Second, name+" workflowFailed", func() error {
			a := getApp(t, ns, name)
			if a.Status.Phase != v1beta1.ApplicationWorkflowFailed {
				return fmt.Errorf("phase %q", a.Status.Phase)
			}
			w := a.Status.Workflow
			if w == nil || w.Phase != v1beta1.WorkflowPhaseFailed || !strings.Contains(w.Message, "the workflow ends") || !strings.Contains(w.Message, `component "web"`) {
				return fmt.Errorf("status.workflow %+v", w)
			}
			return nil
		})
	}
	a := getApp(t, ns, "unreachable")
	if a.Status.Phase != v1beta1.ApplicationRendering {
		t.Errorf("an unreachable repository: phase %q, want rendering (retried)", a.Status.Phase)
	}
	if c := v1beta1.FindCondition(a.Status.Conditions, v1beta1.ConditionRendered); c == nil || c.Reason != "ChartFetchFailed" {
		t.Errorf("an unreachable repository: Rendered %+v, want ChartFetchFailed", c)
	}
}
