package application

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// With sharding, every object a replica applies carries its shard label,
// and its watch selects that label: drift is still repaired at once, an
// object relabelled into another shard is taken back by its Application's
// shard, and an object orphaned on the Application's deletion keeps no
// shard label.
func TestSharding_ObjectsCarryTheirShardAndItsWatchSeesThem(t *testing.T) {
	ns := newNamespace(t)
	opts := watchOptions()
	opts.Sharding.Enabled = true
	opts.Sharding.ShardID = "shard-a"
	opts.Sharding.LeaseNamespace = ns
	w, _ := startWatching(t, opts)
	createApp(t, ns, "metadata: {name: web, labels: {"+v1beta1.LabelScheduledShardID+": shard-a}, finalizers: ["+
		v1beta1.FinalizerOrphanResource+"]}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	waitInformer(t, w, "Deployment.apps@local", true)
	dep, err := getDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Labels[v1beta1.LabelScheduledShardID]; got != "shard-a" {
		t.Fatalf("the Deployment carries shard %q, want shard-a", got)
	}

	// Deleted: the shard's watch sees it.
	deleteAndWaitRecreated(t, testClient, "the deleted Deployment", func() (*appsv1.Deployment, error) { return getDeployment(t, ns, "web") })

	// Relabelled into another shard by hand: it leaves this shard's
	// watch, which wakes the Application; its pass takes it back.
	ctx := context.Background()
	dep, err = getDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"shard-b"}}}`, v1beta1.LabelScheduledShardID)
	if err := testClient.Patch(ctx, dep, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	waitRepaired(t, "the Deployment relabelled back into shard-a", func() error {
		d, err := getDeployment(t, ns, "web")
		if err != nil {
			return err
		}
		if got := d.Labels[v1beta1.LabelScheduledShardID]; got != "shard-a" {
			return fmt.Errorf("shard label %q", got)
		}
		return nil
	})

	// Deleted with the orphan finalizer: the Service is left to no one,
	// shard label included.
	svc := serviceOf(t, ns, "web")
	if got := svc.Labels[v1beta1.LabelScheduledShardID]; got != "shard-a" {
		t.Fatalf("the Service carries shard %q, want shard-a", got)
	}
	deleteApp(t, ns, "web")
	svc = serviceOf(t, ns, "web")
	for _, l := range []string{v1beta1.LabelAppName, v1beta1.LabelScheduledShardID} {
		if v, ok := svc.Labels[l]; ok {
			t.Errorf("the released Service still carries %s=%s", l, v)
		}
	}
}

func serviceOf(t *testing.T, ns, name string) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{}
	if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	return svc
}
