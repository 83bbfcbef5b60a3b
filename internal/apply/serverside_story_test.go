package apply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// Server-side apply stories: objects over the annotation limit, objects an
// earlier client-side Steward (or KubeVela) applied, and fields other
// field managers set.

// bigApp is web with a greeting of size bytes in its ConfigMap.
func bigApp(size int) string {
	return fmt.Sprintf("metadata: {name: big}\nspec:\n  components:\n    - {name: big, type: test-worker, properties: {image: nginx, greeting: %s}}\n", strings.Repeat("x", size))
}

func TestServerSideApply_DeliversAndRepairsA900KiBConfigMap(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	opts := managertest.Options()
	opts.TrackerCompression = "zstd"
	managertest.Start(t, nil, opts)
	controllertest.CreateApp(t, ns, bigApp(900<<10))
	controllertest.WaitReady(t, ns, "big")
	cm, err := controllertest.GetConfigMap(t, ns, "big-config")
	if err != nil {
		t.Fatal(err)
	}
	if len(cm.Data["greeting"]) != 900<<10 {
		t.Fatalf("greeting is %d bytes", len(cm.Data["greeting"]))
	}
	if _, ok := cm.Annotations[v1beta1.AnnotationLastApplied]; ok {
		t.Error("a server-side applied object carries the last-applied annotation")
	}
	cm.Data["greeting"] = "edited"
	if err := controllertest.Client(t).Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 15*time.Second, "the greeting repaired", func() error {
		cm, err := controllertest.GetConfigMap(t, ns, "big-config")
		if err != nil || len(cm.Data["greeting"]) != 900<<10 {
			return fmt.Errorf("greeting %d bytes (%v)", len(cm.Data["greeting"]), err)
		}
		return nil
	})
	controllertest.WaitEvent(t, ns, "big", v1beta1.EventDriftRepaired)
}

// An object an earlier Steward applied client-side is upgraded in place:
// same UID, the fields the manifest dropped removed, the annotation gone,
// and later drift repaired server-side.
func TestServerSideApply_UpgradesClientSideObjectsInPlace(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	old := managertest.Options()
	old.ApplyMethod = string(apply.ClientSide)
	stop := managertest.Start(t, nil, old)
	controllertest.CreateApp(t, ns, "metadata: {name: web}\nspec:"+controllertest.Indent(`
components:
  - name: web
    type: test-worker
    properties: {image: "nginx:1.26"}
    traits:
      - {type: test-replicas, properties: {count: 3}}
`))
	controllertest.WaitReady(t, ns, "web")
	before, err := controllertest.GetDeployment(t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if before.Annotations[v1beta1.AnnotationLastApplied] == "" {
		t.Fatal("the client-side controller left no last-applied annotation")
	}
	stop()

	managertest.Start(t, nil, managertest.Options())
	// The same version: the next pass upgrades the objects, annotation
	// gone, nothing else changed.
	controllertest.Eventually(t, 15*time.Second, "the annotation gone", func() error {
		dep, err := controllertest.GetDeployment(t, ns, "web")
		if err != nil || dep.Annotations[v1beta1.AnnotationLastApplied] != "" {
			return fmt.Errorf("annotation still there (%v)", err)
		}
		if dep.UID != before.UID || *dep.Spec.Replicas != 3 {
			return fmt.Errorf("uid %s (was %s), replicas %d", dep.UID, before.UID, *dep.Spec.Replicas)
		}
		return nil
	})
	// A new version without the replicas trait: the field Steward applied
	// client-side is removed (the API server defaults it to 1).
	controllertest.SetSpec(t, ns, "web", controllertest.V2Spec, nil)
	controllertest.Eventually(t, 15*time.Second, "replicas removed", func() error {
		dep, err := controllertest.GetDeployment(t, ns, "web")
		if err != nil || *dep.Spec.Replicas != 1 || dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
			return fmt.Errorf("replicas %v, image %v (%v)", dep.Spec.Replicas, dep.Spec.Template.Spec.Containers, err)
		}
		if dep.UID != before.UID {
			return fmt.Errorf("re-created: uid %s, was %s", dep.UID, before.UID)
		}
		return nil
	})
	controllertest.WaitReady(t, ns, "web")
	dep, _ := controllertest.GetDeployment(t, ns, "web")
	dep.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
	if err := controllertest.Client(t).Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 15*time.Second, "the image repaired", func() error {
		dep, err := controllertest.GetDeployment(t, ns, "web")
		if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
			return fmt.Errorf("image %v (%v)", dep.Spec.Template.Spec.Containers, err)
		}
		return nil
	})
}

// An autoscaler's replicas on a manifest without replicas are never
// touched; a manager that changes a field the manifest sets loses it, with
// a warning event naming the field and the manager.
func TestServerSideApply_OtherManagersKeepTheirFieldsAndLoseOurs(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateApp(t, ns, "metadata: {name: web}\nspec:"+controllertest.Indent(controllertest.V2Spec))
	controllertest.WaitReady(t, ns, "web")
	checkFieldOwnership(t, controllertest.Client(t), ns, ns)
}

// checkFieldOwnership runs the field-ownership story on the Deployment
// web of an Application web without replicas in cluster c.
func checkFieldOwnership(t *testing.T, c client.Client, ns, depNS string) {
	t.Helper()
	ctx := context.Background()
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: depNS, Name: "web"}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Replicas = ptr.To[int32](5)
	if err := c.Update(ctx, dep, client.FieldOwner("hpa-controller")); err != nil {
		t.Fatal(err)
	}
	rv := ""
	for i := range 3 {
		controllertest.PokeAndWaitPass(t, ns, "web", i)
		_ = c.Get(ctx, client.ObjectKey{Namespace: depNS, Name: "web"}, dep)
		if *dep.Spec.Replicas != 5 {
			t.Fatalf("replicas = %d, want the autoscaler's 5", *dep.Spec.Replicas)
		}
		if rv != "" && dep.ResourceVersion != rv {
			t.Fatalf("a steady pass wrote the Deployment: %s -> %s", rv, dep.ResourceVersion)
		}
		rv = dep.ResourceVersion
	}
	dep.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
	if err := c.Update(ctx, dep, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 15*time.Second, "the image taken back", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: depNS, Name: "web"}, dep); err != nil {
			return err
		}
		if dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" || *dep.Spec.Replicas != 5 {
			return fmt.Errorf("image %s, replicas %d", dep.Spec.Template.Spec.Containers[0].Image, *dep.Spec.Replicas)
		}
		return nil
	})
	note := controllertest.WaitEvent(t, ns, "web", v1beta1.EventFieldsTaken)
	if !strings.Contains(note, `"kubectl-edit"`) || !strings.Contains(note, "image") {
		t.Errorf("FieldsTaken event %q does not name the field and kubectl-edit", note)
	}
}

// A spoke cluster gets the same: large objects, other managers' fields.
func TestServerSideApply_Spoke(t *testing.T) {
	_, spoke := managertest.JoinedSpoke(t, "ssa-spoke")
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateApp(t, ns, `
metadata: {name: web}
spec:
  components:
    - {name: web, type: test-worker, properties: {image: "nginx:1.27", greeting: `+strings.Repeat("y", 600<<10)+`}}
  policies:
    - {name: where, type: topology, properties: {clusters: [ssa-spoke], namespace: default}}
`)
	controllertest.WaitReady(t, ns, "web")
	cm, err := controllertest.ConfigMapOf(t, spoke, "default", "web-config")
	if err != nil || len(cm.Data["greeting"]) != 600<<10 {
		t.Fatalf("the spoke's ConfigMap: %v", err)
	}
	checkFieldOwnership(t, spoke, ns, "default")
}
