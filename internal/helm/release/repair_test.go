package release

import (
	"context"
	"testing"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
)

// A release record deleted by hand, or edited so that it no longer
// decodes, or whose Helm labels were taken off, is found by Check and
// written again by Record, so that `helm status` (Helm's own SDK) shows
// the release deployed again, as KubeVela installs again a release whose
// record is gone or corrupted.
func TestRecord_RecordDeletedOrCorruptedIsWrittenAgain(t *testing.T) {
	ctx := context.Background()
	c := controllertest.Client(t)
	ns := controllertest.NewNamespace(t)
	helm := charttest.NewHelm(t, controllertest.Config(t), ns)
	shop := owner("shop", ns)
	in := func(fp string) Input {
		return Input{Name: "web", Namespace: ns, Chart: &chartv2.Metadata{Name: "demo", Version: "1.0.0", APIVersion: "v2"},
			Values: map[string]any{"greeting": fp}, Fingerprint: fp, MaxHistory: 10, Labels: shop}
	}
	deliver := func(fp string, want int) {
		t.Helper()
		rev, err := Record(ctx, c, in(fp))
		if err != nil {
			t.Fatalf("Record %s: %v", fp, err)
		}
		if rev != want {
			t.Errorf("Record %s: revision %d, want %d", fp, rev, want)
		}
		if err := Deployed(ctx, c, "web", ns, rev, shop); err != nil {
			t.Fatal(err)
		}
		if got := helm.Deployed("web"); got != want {
			t.Errorf("helm status: revision %d deployed, want %d", got, want)
		}
	}
	check := func(rev int, want RecordState) {
		t.Helper()
		got, err := Check(ctx, c, "web", ns, rev, shop)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Check of revision %d: %s, want %s", rev, got, want)
		}
	}
	record := func(rev int) *corev1.Secret {
		t.Helper()
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName("web", rev)}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}

	deliver("f1", 1)
	deliver("f2", 2)
	check(2, RecordIntact)

	// Deleted by hand: the same revision is written again.
	if err := c.Delete(ctx, record(2)); err != nil {
		t.Fatal(err)
	}
	check(2, RecordMissing)
	deliver("f2", 2)
	check(2, RecordIntact)

	// Its body edited so that it no longer decodes.
	broken := record(2)
	broken.Data["release"] = []byte("not a release")
	if err := c.Update(ctx, broken); err != nil {
		t.Fatal(err)
	}
	check(2, RecordBroken)
	deliver("f2", 2)
	check(2, RecordIntact)

	// Helm's labels taken off: `helm list` no longer finds it.
	unlabelled := record(2)
	delete(unlabelled.Labels, "owner")
	if err := c.Update(ctx, unlabelled); err != nil {
		t.Fatal(err)
	}
	check(2, RecordBroken)
	deliver("f2", 2)
	check(2, RecordIntact)

	// Every record deleted: the release starts again at revision 1.
	for _, rev := range []int{1, 2} {
		if err := c.Delete(ctx, record(rev)); err != nil {
			t.Fatal(err)
		}
	}
	check(2, RecordMissing)
	deliver("f2", 1)

	// Another Application does not mend the Application's record.
	if got, _ := Check(ctx, c, "web", ns, 1, owner("blog", ns)); got != RecordForeign {
		t.Errorf("Check by another Application: %s, want foreign", got)
	}
}

// A release namespace deleted by hand (createNamespace) is created again
// once it is gone; while it is still being deleted, EnsureNamespace says
// so and creates nothing.
func TestEnsureNamespace_CreatedAgainAfterDeletion(t *testing.T) {
	ctx := context.Background()
	c := controllertest.Client(t)
	name := controllertest.NewNamespace(t) + "-release"
	t.Cleanup(func() { _ = c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}) })
	created, err := EnsureNamespace(ctx, c, name)
	if err != nil || !created {
		t.Fatalf("EnsureNamespace of a missing namespace: %v, %v", created, err)
	}
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels["name"] != name {
		t.Errorf("labels %v, want name=%s as Helm's --create-namespace", ns.Labels, name)
	}
	if created, err := EnsureNamespace(ctx, c, name); err != nil || created {
		t.Fatalf("EnsureNamespace of a namespace that exists: %v, %v", created, err)
	}

	// Deleted by hand. envtest runs no namespace controller: the namespace
	// stays terminating until its finalizer is removed, as that
	// controller does once the namespace is empty.
	if err := c.Delete(ctx, &ns); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureNamespace(ctx, c, name); err == nil {
		t.Fatal("EnsureNamespace of a terminating namespace: no error")
	}
	cs, err := kubernetes.NewForConfig(controllertest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 10*time.Second, "namespace finalized", func() error {
		var live corev1.Namespace
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &live); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		live.Spec.Finalizers = nil
		_, err := cs.CoreV1().Namespaces().Finalize(ctx, &live, metav1.UpdateOptions{})
		if err == nil {
			err = controllertest.ErrNotYet
		}
		return err
	})
	if created, err := EnsureNamespace(ctx, c, name); err != nil || !created {
		t.Fatalf("EnsureNamespace after the deletion: %v, %v; want it created again", created, err)
	}
}
