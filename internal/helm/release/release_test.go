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
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/steward-oam/steward/api/v1beta1"
)

func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func ownerOf(app string) map[string]string {
	return map[string]string{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: "team"}
}

// helmRecord is a record as `helm install`/`helm upgrade` writes it: no
// Application labels.
func helmRecord(t *testing.T, name, namespace string, version int, status rcommon.Status) *corev1.Secret {
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
	return sec
}

func input(app, fingerprint string, maxHistory int) Input {
	labels := ownerOf(app)
	labels[v1beta1.LabelAppComponent] = "web"
	return Input{
		Name: "web", Namespace: "apps", Chart: &chartv2.Metadata{Name: "web", Version: "1.0.0"},
		Fingerprint: fingerprint, MaxHistory: maxHistory, Labels: labels,
	}
}

func versions(t *testing.T, c client.Client) []string {
	t.Helper()
	history, err := History(context.Background(), c, "web", "apps")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range history {
		who := s.Labels[v1beta1.LabelAppName]
		if who == "" {
			who = "helm"
		}
		out = append(out, fmt.Sprintf("v%d:%s", version(s), who))
	}
	return out
}

// A `helm install` of the same name keeps its history: Record refuses to
// write over it, prunes nothing, and Uninstall leaves it.
func TestRecord_ForeignReleaseIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t,
		helmRecord(t, "web", "apps", 1, rcommon.StatusSuperseded),
		helmRecord(t, "web", "apps", 2, rcommon.StatusDeployed))

	_, err := Record(ctx, c, input("shop", "f1", 1))
	if !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("Record over a helm install: %v; want ErrForeignRelease", err)
	}
	for _, want := range []string{`"web"`, `"apps"`, "installed by someone else"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
	if got, want := versions(t, c), []string{"v1:helm", "v2:helm"}; !slices.Equal(got, want) {
		t.Errorf("records after Record %v; want %v untouched", got, want)
	}

	if err := Deployed(ctx, c, "web", "apps", 2, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	if err := Deployed(ctx, c, "web", "apps", 1, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	history, _ := History(ctx, c, "web", "apps")
	if history[0].Labels["status"] != string(rcommon.StatusSuperseded) || history[1].Labels["status"] != string(rcommon.StatusDeployed) {
		t.Errorf("Deployed changed a foreign record's status: %s, %s", history[0].Labels["status"], history[1].Labels["status"])
	}

	if err := Uninstall(ctx, c, "web", "apps", ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(t, c), []string{"v1:helm", "v2:helm"}; !slices.Equal(got, want) {
		t.Errorf("records after Uninstall %v; want %v untouched", got, want)
	}
}

// Another Application's release of the same name is foreign too.
func TestRecord_OtherApplicationsReleaseIsForeign(t *testing.T) {
	ctx := context.Background()
	c := fakeClient(t)
	if _, err := Record(ctx, c, input("shop", "f1", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := Record(ctx, c, input("blog", "f2", 1)); !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("Record of blog over shop's release: %v; want ErrForeignRelease", err)
	}
	if err := Uninstall(ctx, c, "web", "apps", ownerOf("blog")); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(t, c), []string{"v1:shop"}; !slices.Equal(got, want) {
		t.Errorf("records %v; want %v", got, want)
	}
}

// The Application's own records are pruned to MaxHistory, marked
// deployed, and all deleted by Uninstall, while an older foreign record
// (a helm install since uninstalled in part) is never pruned.
func TestRecord_OwnRecordsPrunedAndUninstalled(t *testing.T) {
	ctx := context.Background()
	// An old foreign record, below the Application's own revisions.
	c := fakeClient(t, helmRecord(t, "web", "apps", 1, rcommon.StatusSuperseded))
	// Adopting the name over it is refused while it is the newest.
	if _, err := Record(ctx, c, input("shop", "f0", 2)); !errors.Is(err, ErrForeignRelease) {
		t.Fatalf("want ErrForeignRelease, got %v", err)
	}
	// Ours written after it (e.g. the newest was ours all along).
	own := func(v int) *corev1.Secret {
		s := helmRecord(t, "web", "apps", v, rcommon.StatusDeployed)
		for k, val := range input("shop", "seed", 0).Labels {
			s.Labels[k] = val
		}
		s.Labels[labelFingerprint] = "seed"
		return s
	}
	if err := c.Create(ctx, own(2)); err != nil {
		t.Fatal(err)
	}

	for i, fp := range []string{"f1", "f2", "f3"} {
		rev, err := Record(ctx, c, input("shop", fp, 2))
		if err != nil {
			t.Fatalf("Record %s: %v", fp, err)
		}
		if rev != 3+i {
			t.Errorf("Record %s: revision %d; want %d", fp, rev, 3+i)
		}
	}
	if rev, err := Record(ctx, c, input("shop", "f3", 2)); err != nil || rev != 5 {
		t.Errorf("Record of the same fingerprint: %d, %v; want 5, nil", rev, err)
	}
	if got, want := versions(t, c), []string{"v1:helm", "v4:shop", "v5:shop"}; !slices.Equal(got, want) {
		t.Errorf("records after pruning %v; want %v", got, want)
	}

	if err := Deployed(ctx, c, "web", "apps", 5, ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	history, _ := History(ctx, c, "web", "apps")
	statuses := map[int]string{}
	for _, s := range history {
		statuses[version(s)] = s.Labels["status"]
	}
	if statuses[5] != string(rcommon.StatusDeployed) || statuses[1] != string(rcommon.StatusSuperseded) {
		t.Errorf("statuses %v; want v5 deployed and the foreign v1 untouched", statuses)
	}

	if err := Uninstall(ctx, c, "web", "apps", ownerOf("shop")); err != nil {
		t.Fatal(err)
	}
	if got, want := versions(t, c), []string{"v1:helm"}; !slices.Equal(got, want) {
		t.Errorf("records after Uninstall %v; want only %v", got, want)
	}
}
