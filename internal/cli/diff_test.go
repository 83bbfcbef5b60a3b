package cli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/tracker"
)

const shopV1 = `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop, namespace: default}
spec:
  components:
    - {name: web, type: webservice, properties: {image: "nginx:1.25", ports: [{port: 80, expose: true}]}}
    - {name: jobs, type: worker, properties: {image: "busybox:1"}}
`

// shopV2 changes web's image, drops jobs and adds cron.
const shopV2 = `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop, namespace: default}
spec:
  components:
    - {name: web, type: webservice, properties: {image: "nginx:1.27", ports: [{port: 80, expose: true}]}}
    - {name: cron, type: worker, properties: {image: "busybox:2"}}
`

func TestDiff_ShowsWhatApplyingWouldCreatePatchAndDelete(t *testing.T) {
	ctx := context.Background()
	hub := startDeliveryHub(t, true)
	hub.apply(t, shopV1)
	hub.waitRevision(t, "shop", "shop-v1")
	pollUntil(t, 30*time.Second, "Deployment jobs", func() error {
		return hub.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "jobs"}, &appsv1.Deployment{})
	})

	diff := func(t *testing.T, app string) (cli.DiffReport, string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "app.yaml")
		writeFile(t, path, app)
		var out bytes.Buffer
		report, err := cli.Diff(ctx, hub.cfg, hub.client, cli.DiffOptions{AppFile: path, Out: &out})
		if err != nil {
			t.Fatal(err)
		}
		if len(report.Failures) > 0 {
			t.Fatalf("failures: %v", report.Failures)
		}
		return report, out.String()
	}

	t.Run("the applied file shows no differences", func(t *testing.T) {
		report, out := diff(t, shopV1)
		if report.Differs() || out != "" {
			t.Errorf("want no differences, got %s:\n%s", report.Summary(), out)
		}
	})

	t.Run("a changed file shows each object's change", func(t *testing.T) {
		report, out := diff(t, shopV2)
		if got := keys(report.Created); !slices.Equal(got, []string{"Deployment.apps default/cron"}) {
			t.Errorf("created = %v", got)
		}
		// Every object of the new version carries its revision label, so
		// the Service is patched too.
		if got := keys(report.Patched); !slices.Equal(got, []string{"Deployment.apps default/web", "Service default/web"}) {
			t.Errorf("patched = %v", got)
		}
		if got := keys(report.Deleted); !slices.Equal(got, []string{"Deployment.apps default/jobs"}) {
			t.Errorf("deleted = %v", got)
		}
		for _, want := range []string{
			"diff -u -N live/local/apps.v1.Deployment.default.web merged/local/apps.v1.Deployment.default.web\n",
			"--- live/local/apps.v1.Deployment.default.web\n+++ merged/local/apps.v1.Deployment.default.web\n",
			"-      - image: nginx:1.25\n", "+      - image: nginx:1.27\n",
			"-    app.oam.dev/appRevision: shop-v1\n", "+    app.oam.dev/appRevision: shop-v2\n",
			"+++ merged/local/apps.v1.Deployment.default.cron\n", "@@ -0,0 +1,25 @@\n", "+      - image: busybox:2\n",
			"--- live/local/apps.v1.Deployment.default.jobs\n", "-      - image: busybox:1\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("diff lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "last-applied-configuration") || strings.Contains(out, "managedFields") {
			t.Errorf("diff shows bookkeeping fields:\n%s", out)
		}

		// Nothing was written.
		web := &appsv1.Deployment{}
		if err := hub.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, web); err != nil {
			t.Fatal(err)
		}
		if img := web.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.25" {
			t.Errorf("diff changed the live Deployment: image %s", img)
		}
		err := hub.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cron"}, &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("diff created Deployment cron: %v", err)
		}
	})

	t.Run("a garbage-collect policy that keeps an object deletes nothing", func(t *testing.T) {
		report, _ := diff(t, shopV2+`  policies:
    - {name: keep-jobs, type: garbage-collect, properties: {rules: [{selector: {componentNames: [jobs]}, strategy: never}]}}
`)
		if len(report.Deleted) > 0 {
			t.Errorf("deleted = %v, want none", keys(report.Deleted))
		}
	})

	t.Run("a publishVersion seen before delivers its recorded objects", func(t *testing.T) {
		// The spec changed but the publishVersion did not: the
		// controller delivers nothing new.
		hub.apply(t, strings.Replace(shopV1, "metadata: {name: shop, namespace: default}",
			"metadata: {name: shop, namespace: default, annotations: {app.oam.dev/publishVersion: stable}}", 1))
		hub.waitRevision(t, "shop", "shop-stable")
		report, out := diff(t, strings.Replace(shopV2, "metadata: {name: shop, namespace: default}",
			"metadata: {name: shop, namespace: default, annotations: {app.oam.dev/publishVersion: stable}}", 1))
		if report.Differs() {
			t.Errorf("want no differences under the same publishVersion, got %s:\n%s", report.Summary(), out)
		}
	})
}

func TestRenderAndDiff_PlaceOnTheRegisteredClusters(t *testing.T) {
	ctx := context.Background()
	hub := startDeliveryHub(t, false, "spoke")
	if _, err := cli.Join(ctx, hub.client, cli.JoinOptions{KubeconfigPath: hub.planes[1].KubeconfigPath, Name: "eu-1",
		Labels: map[string]string{"region": "eu"}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "app.yaml")
	writeFile(t, path, `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: fleet}
spec:
  components:
    - {name: web, type: worker, properties: {image: "web:1"}}
  policies:
    - {name: eu, type: topology, properties: {clusterLabelSelector: {region: eu}, namespace: edge}}
`)
	var out bytes.Buffer
	err := cli.RenderLive(ctx, hub.cfg, hub.client, cli.RenderOptions{AppFile: path, Namespace: "prod", Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"# cluster: eu-1\n", "kind: Deployment\n", "namespace: edge\n",
		"app.oam.dev/namespace: prod\n", "app.oam.dev/appRevision: fleet-v1\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "# cluster:") != 1 {
		t.Errorf("want one object, on eu-1 only:\n%s", got)
	}

	// diff reaches the spoke through its cluster Secret.
	out.Reset()
	report, err := cli.Diff(ctx, hub.cfg, hub.client, cli.DiffOptions{AppFile: path, Namespace: "prod", Out: &out})
	if err != nil || len(report.Failures) > 0 {
		t.Fatalf("diff: %v %v", err, report.Failures)
	}
	if got := keys(report.Created); !slices.Equal(got, []string{"Deployment.apps edge/web (cluster eu-1)"}) || !report.Differs() {
		t.Errorf("created = %v, want the Deployment in eu-1", got)
	}
	if !strings.Contains(out.String(), "+++ merged/eu-1/apps.v1.Deployment.edge.web\n") {
		t.Errorf("diff names the cluster:\n%s", out.String())
	}
}

func keys(ks []tracker.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.String()
	}
	slices.Sort(out)
	return out
}
