package cli_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/steward-oam/steward/internal/cli"
)

var builtinDefinitions = filepath.Join("..", "..", "config", "definitions")

// renderFile renders app offline with the built-in definitions.
func renderFile(t *testing.T, app string, clusters ...string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.yaml")
	writeFile(t, path, app)
	var out bytes.Buffer
	err := cli.Render(cli.RenderOptions{DefinitionPaths: []string{builtinDefinitions}, AppFile: path, Clusters: clusters, Out: &out})
	return out.String(), err
}

func TestRender_AppliesOverridePolicies(t *testing.T) {
	out, err := renderFile(t, `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop}
spec:
  components:
    - {name: web, type: webservice, properties: {image: "nginx:1.25"}}
    - {name: jobs, type: worker, properties: {image: "busybox:1"}}
  policies:
    - name: pin
      type: override
      properties:
        components:
          - {name: web, properties: {image: "nginx:1.27"}, traits: [{type: scaler, properties: {replicas: 3}}]}
`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "# cluster:") {
		t.Errorf("everything goes to the hub, want plain output, got\n%s", out)
	}
	docs := strings.Split(out, "---\n")
	if len(docs) != 2 {
		t.Fatalf("want the two Deployments, got\n%s", out)
	}
	if !strings.Contains(docs[0], "image: nginx:1.27") || !strings.Contains(docs[0], "replicas: 3") {
		t.Errorf("web: want the override's image and added scaler trait, got\n%s", docs[0])
	}
	if !strings.Contains(docs[1], "image: busybox:1") {
		t.Errorf("jobs: the override must leave it alone, got\n%s", docs[1])
	}
}

func TestRender_PlacesEachDeployStepOnItsClusters(t *testing.T) {
	app := `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop, namespace: prod}
spec:
  components:
    - {name: web, type: worker, properties: {image: "web:1"}}
  policies:
    - {name: eu, type: topology, properties: {clusterLabelSelector: {region: eu}, namespace: shop-eu}}
    - {name: us, type: topology, properties: {clusters: [us-1]}}
    - {name: eu-image, type: override, properties: {components: [{name: web, properties: {image: "web:2"}}]}}
  workflow:
    steps:
      - {name: eu, type: deploy, properties: {policies: [eu, eu-image]}}
      - {name: us, type: deploy, properties: {policies: [us]}}
`
	out, err := renderFile(t, app, "eu-1=region=eu,tier=gold", "eu-2=region=eu", "us-1=region=us")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := strings.Cut(out, "\n")
	if header != "# clusters assumed registered (--assume-cluster): local, eu-1 {region=eu,tier=gold}, eu-2 {region=eu}, us-1 {region=us}" {
		t.Errorf("header = %q", header)
	}
	docs := strings.Split(rest, "---\n")
	want := []struct{ cluster, namespace, image string }{
		{"eu-1", "shop-eu", "web:2"}, {"eu-2", "shop-eu", "web:2"}, {"us-1", "prod", "web:1"},
	}
	if len(docs) != len(want) {
		t.Fatalf("want one Deployment per cluster, got\n%s", out)
	}
	for i, w := range want {
		d := docs[i]
		if !strings.HasPrefix(d, "# cluster: "+w.cluster+"\n") || !strings.Contains(d, "namespace: "+w.namespace+"\n") ||
			!strings.Contains(d, "image: "+w.image+"\n") {
			t.Errorf("document %d: want cluster %s, namespace %s, image %s, got\n%s", i, w.cluster, w.namespace, w.image, d)
		}
		if !strings.Contains(d, "app.oam.dev/namespace: prod\n") {
			t.Errorf("document %d: the ownership label must name the Application's namespace, got\n%s", i, d)
		}
	}
}

func TestRender_TopologyNeedsTheClustersItNames(t *testing.T) {
	_, err := renderFile(t, `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop}
spec:
  components:
    - {name: web, type: worker, properties: {image: "web:1"}}
  policies:
    - {name: where, type: topology, properties: {clusters: [eu-1]}}
`)
	want := `render application default/shop: topology policy "where": cluster "eu-1" is not registered (registered: local)` +
		` (offline, the registered clusters are local and those of --assume-cluster)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestParseClusters(t *testing.T) {
	got, err := cli.ParseClusters([]string{"eu-1", "us-1=region=us,env=prod"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "eu-1" || len(got[0].Labels) != 0 ||
		got[1].Name != "us-1" || got[1].Labels["region"] != "us" || got[1].Labels["env"] != "prod" {
		t.Errorf("ParseClusters = %+v", got)
	}
	for _, bad := range []string{"=x=y", "eu-1=region"} {
		if _, err := cli.ParseClusters([]string{bad}); err == nil {
			t.Errorf("ParseClusters(%q): want an error", bad)
		}
	}
}
