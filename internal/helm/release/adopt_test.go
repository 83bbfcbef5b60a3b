package release

import (
	"context"
	"errors"
	"maps"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
)

// owner is the labels Steward writes for Application app of ns's
// component web.
func owner(app, ns string) map[string]string {
	return map[string]string{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: ns, v1beta1.LabelAppComponent: "web"}
}

// configMap is the chart's ConfigMap as the render gives it.
func configMap(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func recordLabels(t *testing.T, c client.Client, ns, name string) map[string]map[string]string {
	t.Helper()
	history, err := History(context.Background(), c, name, ns)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, s := range history {
		out[s.Name] = s.Labels
	}
	return out
}

// A release `helm install` and `helm upgrade` made (Helm's own SDK, as
// the CLI runs it) is taken over in place by the Application that
// renders a release of its name and namespace, from another chart: its
// records get the Application's labels and its history continues (the
// next revision is 3, Helm's 2 is superseded), its objects are applied
// by Steward from then on, and deleting the Application's release
// deletes Helm's records too, as KubeVela does.
func TestRecord_TakesOverAReleaseHelmInstalled(t *testing.T) {
	ctx := context.Background()
	ns := controllertest.NewNamespace(t)
	c := controllertest.Client(t)
	helm := charttest.NewHelm(t, controllertest.Config(t), ns)
	helm.Install("web", charttest.ConfigMapChart("theirs", "1.0.0"), map[string]any{"greeting": "hi"})
	helm.Upgrade("web", charttest.ConfigMapChart("theirs", "1.1.0"), map[string]any{"greeting": "hey"})

	// An object Helm did not make for this release.
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: objectMeta(ns, "by-hand")}); err != nil {
		t.Fatal(err)
	}
	manifest := ""
	for _, name := range []string{"web-config", "web-extra", "by-hand", "not-there"} {
		manifest += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\n"
	}

	shop := owner("shop", ns)
	rev, err := Record(ctx, c, Input{
		Name: "web", Namespace: ns, Chart: &chartv2.Metadata{Name: "demo", Version: "2.0.0", APIVersion: "v2"},
		Values: map[string]any{"greeting": "bonjour"}, Manifest: manifest, Fingerprint: "f1", MaxHistory: 10, Labels: shop,
		Boundary: boundary.Boundary{Namespace: ns, Confined: true},
	})
	if err != nil {
		t.Fatalf("Record over a helm install: %v", err)
	}
	if rev != 3 {
		t.Errorf("revision %d, want 3: the history Helm began continues", rev)
	}
	for name, labels := range recordLabels(t, c, ns, "web") {
		if labels[v1beta1.LabelAppName] != "shop" || labels[v1beta1.LabelAppNamespace] != ns {
			t.Errorf("record %s is not the Application's after the take-over: %v", name, labels)
		}
	}

	// The chart's objects Helm created are the Application's from now on
	// (and taking them over again finds nothing to do); an object Helm did
	// not make for this release is not touched.
	adopted, err := AdoptObjects(ctx, c, boundary.Boundary{Namespace: ns, Confined: true}, "web", ns,
		[]*unstructured.Unstructured{configMap(ns, "web-config"), configMap(ns, "web-extra"), configMap(ns, "by-hand"), configMap(ns, "not-there")}, shop)
	if err != nil || len(adopted) != 0 {
		t.Errorf("taking over again: %v, %v; want nothing left to take", adopted, err)
	}
	for name, want := range map[string]string{"web-config": "shop", "web-extra": "shop", "by-hand": ""} {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
			t.Fatal(err)
		}
		if got := cm.Labels[v1beta1.LabelAppName]; got != want {
			t.Errorf("ConfigMap %s owned by %q, want %q", name, got, want)
		}
	}

	if err := Deployed(ctx, c, "web", ns, rev, shop); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{1: "superseded theirs-1.0.0", 2: "superseded theirs-1.1.0", 3: "deployed demo-2.0.0"}
	if got := helm.History("web"); !maps.Equal(got, want) {
		t.Errorf("helm history %v, want %v", got, want)
	}
	if got := helm.Deployed("web"); got != 3 {
		t.Errorf("helm status: revision %d deployed, want 3", got)
	}

	// The release is the Application's now: another Application of the
	// same release name is refused, and the Application's uninstall
	// deletes every record, Helm's first two included.
	blog := owner("blog", ns)
	if _, err := Record(ctx, c, Input{Name: "web", Namespace: ns, Chart: &chartv2.Metadata{Name: "demo", Version: "2.0.0"}, Fingerprint: "b1", Labels: blog}); !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("another Application's Record: %v, want ErrForeignRelease", err)
	}
	if err := Uninstall(ctx, c, "web", ns, shop); err != nil {
		t.Fatal(err)
	}
	if left := recordLabels(t, c, ns, "web"); len(left) != 0 {
		t.Errorf("records left after the uninstall: %v", left)
	}
}

// A release is never taken over across the Application's boundary:
// confined to its namespace, an Application naming a release `helm
// install` made in another namespace is refused (CrossNamespaceObject)
// and the records stay Helm's; acting as a ServiceAccount that may read
// but not patch Secrets, it is refused by RBAC and nothing is labelled;
// and a release another Application owns stays refused
// (ErrForeignRelease), its records and objects untouched.
func TestRecord_TakeOverOnlyInsideTheBoundaryAndAsTheIdentity(t *testing.T) {
	ctx := context.Background()
	admin := controllertest.Client(t)
	appNS := controllertest.NewNamespace(t)
	otherNS := controllertest.NewNamespace(t)
	charttest.NewHelm(t, controllertest.Config(t), otherNS).Install("web", charttest.ConfigMapChart("theirs", "1.0.0"), nil)
	charttest.NewHelm(t, controllertest.Config(t), appNS).Install("web", charttest.ConfigMapChart("theirs", "1.0.0"), nil)
	shop := owner("shop", appNS)
	in := func(ns string) Input {
		return Input{Name: "web", Namespace: ns, Chart: &chartv2.Metadata{Name: "demo", Version: "2.0.0"}, Fingerprint: "f1", Labels: shop,
			Boundary: boundary.Boundary{Namespace: appNS, Confined: true}}
	}
	unlabelled := func(ns string) {
		t.Helper()
		for name, labels := range recordLabels(t, admin, ns, "web") {
			if labels[v1beta1.LabelAppName] != "" {
				t.Errorf("record %s/%s was labelled %v", ns, name, labels)
			}
		}
	}

	_, err := Record(ctx, admin, in(otherNS))
	if be := boundary.As(err); be == nil || be.Reason != v1beta1.ReasonCrossNamespaceObject {
		t.Fatalf("taking over a release in another namespace while confined: %v, want CrossNamespaceObject", err)
	}
	unlabelled(otherNS)
	if _, err := AdoptObjects(ctx, admin, boundary.Boundary{Namespace: appNS, Confined: true}, "web", otherNS, []*unstructured.Unstructured{configMap(otherNS, "web-config")}, shop); boundary.As(err) == nil {
		t.Errorf("taking over an object in another namespace while confined: %v, want a boundary error", err)
	}

	// As a ServiceAccount that may read Secrets but not patch them.
	controllertest.Tenant(t, admin, appNS, "reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list"}})
	as := rest.CopyConfig(controllertest.Config(t))
	as.Impersonate.UserName = "system:serviceaccount:" + appNS + ":reader"
	reader, err := client.New(as, client.Options{Scheme: controllertest.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Record(ctx, reader, in(appNS)); !apierrors.IsForbidden(err) {
		t.Fatalf("taking over as a ServiceAccount that may not patch Secrets: %v, want Forbidden", err)
	}
	unlabelled(appNS)
	if _, err := AdoptObjects(ctx, reader, boundary.Boundary{Namespace: appNS, Confined: true, Impersonating: true}, "web", appNS, []*unstructured.Unstructured{configMap(appNS, "web-config")}, shop); !apierrors.IsForbidden(err) {
		t.Errorf("taking over an object as a ServiceAccount that may not patch it: %v, want Forbidden", err)
	}

	// Another Application's release.
	if _, err := Record(ctx, admin, in(appNS)); err != nil {
		t.Fatal(err)
	}
	blog := owner("blog", appNS)
	_, err = Record(ctx, admin, Input{Name: "web", Namespace: appNS, Chart: &chartv2.Metadata{Name: "demo", Version: "2.0.0"}, Fingerprint: "b1", Labels: blog})
	if !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("Record over another Application's release: %v, want ErrForeignRelease", err)
	}
	for name, labels := range recordLabels(t, admin, appNS, "web") {
		if labels[v1beta1.LabelAppName] != "shop" {
			t.Errorf("record %s changed hands: %v", name, labels)
		}
	}
	if _, err := AdoptObjects(ctx, admin, boundary.Boundary{Namespace: appNS}, "web", appNS, []*unstructured.Unstructured{configMap(appNS, "web-config")}, shop); err != nil {
		t.Fatal(err)
	}
	adopted, err := AdoptObjects(ctx, admin, boundary.Boundary{Namespace: appNS}, "web", appNS, []*unstructured.Unstructured{configMap(appNS, "web-config")}, blog)
	if err != nil || len(adopted) != 0 {
		t.Errorf("another Application took over shop's object: %v, %v", adopted, err)
	}
}

func objectMeta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

// The manifest a record holds reads back into its objects, comments and
// empty documents skipped.
func TestManifestObjects_ReadsTheRecordsManifest(t *testing.T) {
	objs, err := ManifestObjects("---\n# Source: helm-resource-0\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: team}\n---\n# Source: empty\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b, namespace: team}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || describe(objs[0]) != "ConfigMap team/a" || describe(objs[1]) != "Secret team/b" {
		for _, o := range objs {
			t.Errorf("object %s", describe(o))
		}
	}
	if _, err := ManifestObjects("---\nkind: [\n"); err == nil {
		t.Error("a manifest that does not parse was read")
	}
}
