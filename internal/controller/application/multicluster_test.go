package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/testcp"
)

// spokeDeployment reads Deployment default/<name> in a spoke.
func spokeDeployment(t *testing.T, c client.Client, name string) (*appsv1.Deployment, error) {
	t.Helper()
	dep := &appsv1.Deployment{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, dep)
	return dep, err
}

func multiclusterApp(clusters string) string {
	return fmt.Sprintf(`
metadata: {name: fleet}
spec:
  components:
    - {name: fleet, type: test-worker, properties: {image: "nginx:1.27"}}
  policies:
    - {name: where, type: topology, properties: {clusters: [%s], namespace: default}}
`, clusters)
}

func TestMulticluster_DeliversKeepsAndIsolatesClusters(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	planes := testcp.StartT(t, testcp.Options{}, "mc-a", "mc-b")
	a, b := planes[0], planes[1]
	ca, err := a.Client(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.Client(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range planes {
		if _, err := cli.Join(ctx, testClient, cli.JoinOptions{KubeconfigPath: p.KubeconfigPath, Name: p.Name, Force: true}); err != nil {
			t.Fatalf("joining %s: %v", p.Name, err)
		}
		t.Cleanup(func() { _, _ = cli.Detach(ctx, testClient, cli.DetachOptions{Name: p.Name, Force: true}) })
	}
	ns := newNamespace(t)
	opts := testOptions()
	opts.DeletionTimeout = 3 * time.Second
	startManager(t, testCfg, opts)
	createApp(t, ns, multiclusterApp("mc-a, mc-b"))
	app := waitReady(t, ns, "fleet")

	// One app, two spokes, nothing on the hub.
	for _, c := range []client.Client{ca, cb} {
		if _, err := spokeDeployment(t, c, "fleet"); err != nil {
			t.Fatalf("deployment in a spoke: %v", err)
		}
	}
	if _, err := getDeployment(t, ns, "fleet"); !apierrors.IsNotFound(err) {
		t.Errorf("the hub got the Deployment: %v", err)
	}
	clusters := map[string]bool{}
	for _, svc := range app.Status.Services {
		clusters[svc.Cluster] = true
	}
	if !clusters["mc-a"] || !clusters["mc-b"] {
		t.Errorf("services = %+v, want one per cluster", app.Status.Services)
	}

	// Drift in spoke 2 is repaired.
	dep, _ := spokeDeployment(t, cb, "fleet")
	if err := cb.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the Deployment back in mc-b", func() error {
		_, err := spokeDeployment(t, cb, "fleet")
		return err
	})

	// A cluster removed from the topology has its objects collected.
	setSpec(t, ns, "fleet", strings.SplitN(multiclusterApp("mc-a"), "spec:\n", 2)[1], nil)
	eventually(t, 20*time.Second, "mc-b's Deployment collected", func() error {
		if _, err := spokeDeployment(t, cb, "fleet"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	if _, err := spokeDeployment(t, ca, "fleet"); err != nil {
		t.Fatalf("mc-a's Deployment went too: %v", err)
	}

	// Back on both, then mc-b stops: status names it, mc-a is still kept.
	setSpec(t, ns, "fleet", strings.SplitN(multiclusterApp("mc-a, mc-b"), "spec:\n", 2)[1], nil)
	waitReady(t, ns, "fleet")
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	msg := waitNotReady(t, ns, "fleet", v1beta1.ReasonClusterUnreachable)
	if !strings.Contains(msg, `"mc-b"`) {
		t.Errorf("message %q does not name the stopped cluster", msg)
	}
	dep, _ = spokeDeployment(t, ca, "fleet")
	if err := ca.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "mc-a kept while mc-b is down", func() error {
		_, err := spokeDeployment(t, ca, "fleet")
		return err
	})

	// Deleting the app finishes although mc-b is gone, and says what was
	// left behind.
	deleteApp(t, ns, "fleet")
	if _, err := spokeDeployment(t, ca, "fleet"); !apierrors.IsNotFound(err) {
		t.Errorf("mc-a's Deployment survived the app's deletion: %v", err)
	}
	found := false
	for _, e := range appEvents(t, ns, "fleet") {
		if e.Reason == v1beta1.ReasonDeleteFailed && strings.Contains(e.Note, "mc-b") {
			found = true
		}
	}
	if !found {
		t.Error("no event names what was left behind in mc-b")
	}
}

func TestMulticluster_DetachAndRejoin(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	planes := testcp.StartT(t, testcp.Options{}, "mc-c")
	c := planes[0]
	join := func() {
		if _, err := cli.Join(ctx, testClient, cli.JoinOptions{KubeconfigPath: c.KubeconfigPath, Name: c.Name, Force: true}); err != nil {
			t.Fatalf("joining: %v", err)
		}
	}
	join()
	t.Cleanup(func() { _, _ = cli.Detach(ctx, testClient, cli.DetachOptions{Name: c.Name, Force: true}) })
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, multiclusterApp("mc-c"))
	waitReady(t, ns, "fleet")

	if _, err := cli.Detach(ctx, testClient, cli.DetachOptions{Name: "mc-c", Force: true}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the detached cluster reported", func() error {
		c := v1beta1.FindCondition(getApp(t, ns, "fleet").Status.Conditions, v1beta1.ConditionReady)
		if c == nil || c.Status != "False" || !strings.Contains(c.Message, "mc-c") {
			return fmt.Errorf("ready = %+v", c)
		}
		return nil
	})
	join()
	waitReady(t, ns, "fleet")
}

func TestMulticluster_LabelledClusterIsPickedUpOnResync(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	planes := testcp.StartT(t, testcp.Options{}, "mc-d")
	d := planes[0]
	cd, err := d.Client(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	join := func(labels map[string]string) {
		if _, err := cli.Join(ctx, testClient, cli.JoinOptions{KubeconfigPath: d.KubeconfigPath, Name: d.Name, Labels: labels, Force: true}); err != nil {
			t.Fatalf("joining: %v", err)
		}
	}
	join(nil)
	t.Cleanup(func() { _, _ = cli.Detach(ctx, testClient, cli.DetachOptions{Name: d.Name, Force: true}) })
	ns := newNamespace(t)
	opts := testOptions()
	opts.clusterListTTL = time.Second
	startManager(t, testCfg, opts)
	createApp(t, ns, `
metadata: {name: edge}
spec:
  components:
    - {name: edge, type: test-worker, properties: {image: nginx}}
  policies:
    - {name: where, type: topology, properties: {clusterLabelSelector: {tier: edge}, allowEmpty: true, namespace: default}}
`)
	waitReady(t, ns, "edge")
	if _, err := spokeDeployment(t, cd, "edge"); !apierrors.IsNotFound(err) {
		t.Fatalf("an unlabelled cluster got the Deployment: %v", err)
	}
	// Labelling the cluster moves the placement without a spec change.
	join(map[string]string{"tier": "edge"})
	eventually(t, 20*time.Second, "the Deployment in the newly labelled cluster", func() error {
		_, err := spokeDeployment(t, cd, "edge")
		return err
	})
	// And unlabelling it takes the objects away again.
	join(nil)
	eventually(t, 20*time.Second, "the Deployment gone from the unlabelled cluster", func() error {
		if _, err := spokeDeployment(t, cd, "edge"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}

// joinedSpoke starts one spoke control plane, joins it under its name and
// detaches it when the test ends; it returns the plane and a client of it.
func joinedSpoke(t *testing.T, name string) (*testcp.Plane, client.Client) {
	t.Helper()
	ctx := context.Background()
	spoke := testcp.StartT(t, testcp.Options{}, name)[0]
	c, err := spoke.Client(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Join(ctx, testClient, cli.JoinOptions{KubeconfigPath: spoke.KubeconfigPath, Name: spoke.Name, Force: true}); err != nil {
		t.Fatalf("joining %s: %v", spoke.Name, err)
	}
	t.Cleanup(func() { _, _ = cli.Detach(ctx, testClient, cli.DetachOptions{Name: spoke.Name, Force: true}) })
	return spoke, c
}
