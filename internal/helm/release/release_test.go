package release

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

func ownerOf(app string) map[string]string {
	return map[string]string{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: "team"}
}

// helmRecord is a record as `helm install`/`helm upgrade` writes it: no
// Application labels (ownedBy gives it another Application's).
func helmRecord(t *testing.T, name, namespace string, version int, status rcommon.Status, ownedBy ...string) *corev1.Secret {
	t.Helper()
	now := time.Now()
	sec, err := encode(&releasev1.Release{
		Name: name, Namespace: namespace, Version: version,
		Chart: &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "theirs", Version: "1.0.0"}},
		Info:  &releasev1.Info{FirstDeployed: now, LastDeployed: now, Status: status},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range ownedBy {
		for k, v := range ownerOf(app) {
			sec.Labels[k] = v
		}
	}
	return sec
}

// envtestWith is the suite's client, with objs created in a new
// namespace ("apps" in them is replaced by it); it returns both.
func envtestWith(t *testing.T, objs ...*corev1.Secret) (client.Client, string) {
	t.Helper()
	c := controllertest.Client(t)
	ns := controllertest.NewNamespace(t)
	for _, o := range objs {
		o.Namespace = ns
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	return c, ns
}

func input(ns, app, fingerprint string, maxHistory int) Input {
	labels := ownerOf(app)
	labels[v1beta1.LabelAppComponent] = "web"
	return Input{
		Name: "web", Namespace: ns, Chart: &chartv2.Metadata{Name: "web", Version: "1.0.0"},
		Fingerprint: fingerprint, MaxHistory: maxHistory, Labels: labels,
	}
}

func versions(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	history, err := History(context.Background(), c, "web", ns)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range history {
		who := s.Labels[v1beta1.LabelAppName]
		out = append(out, fmt.Sprintf("v%d:%s", version(s), who))
	}
	return out
}

// Another Application's release of the same name keeps its history:
// Record refuses to write over it, prunes nothing, and Deployed and
// Uninstall leave it.
func TestRecord_ForeignReleaseIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	c, ns := envtestWith(t,
		helmRecord(t, "web", "apps", 1, rcommon.StatusSuperseded, "blog"),
		helmRecord(t, "web", "apps", 2, rcommon.StatusDeployed, "blog"))

	_, err := Record(ctx, c, input(ns, "shop", "f1", 1))
	if !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("Record over another Application's release: %v; want ErrForeignRelease", err)
	}
	for _, want := range []string{`"web"`, ns, "another Application"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
	if got, want := versions(t, c, ns), []string{"v1:blog", "v2:blog"}; !slices.Equal(got, want) {
		t.Errorf("records after Record %v; want %v untouched", got, want)
	}

	if err := Deployed(ctx, c, "web", ns, 2, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	if err := Deployed(ctx, c, "web", ns, 1, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	history, _ := History(ctx, c, "web", ns)
	if history[0].Labels["status"] != string(rcommon.StatusSuperseded) || history[1].Labels["status"] != string(rcommon.StatusDeployed) {
		t.Errorf("Deployed changed a foreign record's status: %s, %s", history[0].Labels["status"], history[1].Labels["status"])
	}

	if err := Uninstall(ctx, c, "web", ns, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(t, c, ns), []string{"v1:blog", "v2:blog"}; !slices.Equal(got, want) {
		t.Errorf("records after Uninstall %v; want %v untouched", got, want)
	}
}

// Another Application's release of the same name is foreign too.
func TestRecord_OtherApplicationsReleaseIsForeign(t *testing.T) {
	ctx := context.Background()
	c, ns := envtestWith(t)
	if _, err := Record(ctx, c, input(ns, "shop", "f1", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := Record(ctx, c, input(ns, "blog", "f2", 1)); !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("Record of blog over shop's release: %v; want ErrForeignRelease", err)
	}
	if err := Uninstall(ctx, c, "web", ns, ownerOf("blog")); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(t, c, ns), []string{"v1:shop"}; !slices.Equal(got, want) {
		t.Errorf("records %v; want %v", got, want)
	}
}

// The Application's own records are pruned to MaxHistory, marked
// deployed, and all deleted by Uninstall, while an older record of
// another Application (a release it gave up in part) is never pruned.
func TestRecord_OwnRecordsPrunedAndUninstalled(t *testing.T) {
	ctx := context.Background()
	// An old foreign record, below the Application's own revisions.
	c, ns := envtestWith(t, helmRecord(t, "web", "apps", 1, rcommon.StatusSuperseded, "blog"))
	// Taking the name over is refused while it is the newest.
	if _, err := Record(ctx, c, input(ns, "shop", "f0", 2)); !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("want ErrForeignRelease, got %v", err)
	}
	// Ours written after it (e.g. the newest was ours all along).
	own := func(v int) *corev1.Secret {
		s := helmRecord(t, "web", ns, v, rcommon.StatusDeployed)
		for k, val := range input(ns, "shop", "seed", 0).Labels {
			s.Labels[k] = val
		}
		s.Labels[labelFingerprint] = "seed"
		return s
	}
	if err := c.Create(ctx, own(2)); err != nil {
		t.Fatal(err)
	}

	for i, fp := range []string{"f1", "f2", "f3"} {
		rev, err := Record(ctx, c, input(ns, "shop", fp, 2))
		if err != nil {
			t.Fatalf("Record %s: %v", fp, err)
		}
		if rev != 3+i {
			t.Errorf("Record %s: revision %d; want %d", fp, rev, 3+i)
		}
	}
	if rev, err := Record(ctx, c, input(ns, "shop", "f3", 2)); err != nil || rev != 5 {
		t.Errorf("Record of the same fingerprint: %d, %v; want 5, nil", rev, err)
	}
	if got, want := versions(t, c, ns), []string{"v1:blog", "v4:shop", "v5:shop"}; !slices.Equal(got, want) {
		t.Errorf("records after pruning %v; want %v", got, want)
	}

	if err := Deployed(ctx, c, "web", ns, 5, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	history, _ := History(ctx, c, "web", ns)
	statuses := map[int]string{}
	for _, s := range history {
		statuses[version(s)] = s.Labels["status"]
	}
	if statuses[5] != string(rcommon.StatusDeployed) || statuses[1] != string(rcommon.StatusSuperseded) {
		t.Errorf("statuses %v; want v5 deployed and the foreign v1 untouched", statuses)
	}

	if err := Uninstall(ctx, c, "web", ns, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(t, c, ns), []string{"v1:blog"}; !slices.Equal(got, want) {
		t.Errorf("records after Uninstall %v; want only %v", got, want)
	}
}
