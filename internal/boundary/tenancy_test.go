package boundary_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// The tenancy stories run against envtest's kube-apiserver, which
// authorises with RBAC: the controller's own credentials are
// system:masters, so every refusal below comes from impersonating the
// Application's ServiceAccount.

func clusterAdminBinding(name, ns, sa string) string {
	return fmt.Sprintf("{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: %s}, "+
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}, "+
		"subjects: [{kind: ServiceAccount, name: %s, namespace: %s}]}", name, sa, ns)
}

func TestTenancy_ImpersonatedAppDeliversWhatItsServiceAccountMayAndIsRefusedTheRest(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	other := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	controllertest.Tenant(t, admin, ns, "deployer", controllertest.ConfigMapRule(append(controllertest.WriteVerbs(), "delete")...))
	managertest.Start(t, nil, managertest.Options())
	crb := shortName("escalate")
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("tenant", "deployer",
		controllertest.ConfigMapIn(ns, "mine"),
		clusterAdminBinding(crb, ns, "deployer"),
		controllertest.ConfigMapIn(other, "theirs")))
	user := fmt.Sprintf("system:serviceaccount:%s:deployer", ns)

	msg := controllertest.WaitNotReady(t, ns, "tenant", v1beta1.ReasonForbidden)
	for _, want := range []string{user, "clusterrolebindings", crb, "configmaps", other} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready message %q does not name %q", msg, want)
		}
	}
	if note := controllertest.WaitEvent(t, ns, "tenant", v1beta1.ReasonForbidden); !strings.Contains(note, user) {
		t.Errorf("event %q does not name the identity", note)
	}
	if controllertest.Exists(t, &rbacv1.ClusterRoleBinding{}, "", crb) {
		t.Fatal("the ClusterRoleBinding was created although the ServiceAccount may not create it")
	}
	if controllertest.Exists(t, &corev1.ConfigMap{}, other, "theirs") {
		t.Fatal("an object in another namespace was created although the ServiceAccount may not write there")
	}
	// The rest of the app works: delivered, and its drift repaired.
	if !controllertest.Exists(t, &corev1.ConfigMap{}, ns, "mine") {
		t.Fatal("the allowed ConfigMap was not created")
	}
	if err := admin.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}}); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 30*time.Second, "the deleted ConfigMap re-created as the ServiceAccount", func() error {
		if !controllertest.Exists(t, &corev1.ConfigMap{}, ns, "mine") {
			return controllertest.ErrNotYet
		}
		return nil
	})

	// Deleting the app deletes what it created, and is not held up by the
	// objects it was never allowed to create.
	if err := admin.Delete(context.Background(), controllertest.GetApp(t, ns, "tenant")); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 30*time.Second, "the application gone", func() error {
		if controllertest.Exists(t, &v1beta1.Application{}, ns, "tenant") {
			return controllertest.ErrNotYet
		}
		return nil
	})
	if controllertest.Exists(t, &corev1.ConfigMap{}, ns, "mine") {
		t.Error("the app's ConfigMap outlived the app")
	}
}

func TestTenancy_DeniedDeleteKeepsTheObjectAndItsEntryUntilTheRoleAllowsIt(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	setRules := controllertest.Tenant(t, admin, ns, "deployer", controllertest.ConfigMapRule(controllertest.WriteVerbs()...))
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("gc", "deployer", controllertest.ConfigMapIn(ns, "keep"), controllertest.ConfigMapIn(ns, "drop")))
	controllertest.WaitReady(t, ns, "gc")

	live := controllertest.GetApp(t, ns, "gc")
	live.Spec.Components = live.Spec.Components[:1]
	if err := admin.Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("system:serviceaccount:%s:deployer", ns)
	controllertest.Eventually(t, 30*time.Second, "GarbageCollected=False naming the refused delete", func() error {
		c, err := controllertest.Condition(t, ns, "gc", v1beta1.ConditionGarbageCollected)
		if err != nil {
			return err
		}
		if c.Status != metav1.ConditionFalse || c.Reason != v1beta1.ReasonDeleteFailed ||
			!strings.Contains(c.Message, user) || !strings.Contains(c.Message, "delete") || !strings.Contains(c.Message, "drop") {
			return fmt.Errorf("GarbageCollected = %+v", c)
		}
		return nil
	})
	controllertest.WaitEvent(t, ns, "gc", v1beta1.ReasonDeleteFailed)
	if !controllertest.Exists(t, &corev1.ConfigMap{}, ns, "drop") {
		t.Fatal("the ConfigMap was deleted although the ServiceAccount may not delete it")
	}
	if !controllertest.AnyEntry(t, ns, "gc", func(e v1beta1.ManagedResource) bool { return e.Name == "drop" && e.Kind == "ConfigMap" }) {
		t.Fatal("the refused object's entry was dropped: it would be orphaned")
	}

	setRules(controllertest.ConfigMapRule(append(controllertest.WriteVerbs(), "delete")...))
	controllertest.Eventually(t, 60*time.Second, "the ConfigMap deleted once the Role allows it", func() error {
		if controllertest.Exists(t, &corev1.ConfigMap{}, ns, "drop") {
			return controllertest.ErrNotYet
		}
		c, err := controllertest.Condition(t, ns, "gc", v1beta1.ConditionGarbageCollected)
		if err != nil {
			return err
		}
		if c.Status != metav1.ConditionTrue {
			return fmt.Errorf("GarbageCollected = %+v", c)
		}
		return nil
	})
	if !controllertest.Exists(t, &corev1.ConfigMap{}, ns, "keep") {
		t.Fatal("the ConfigMap still in the spec is gone")
	}

	// Deleting the Application while the Role refuses deletes: the object
	// stays, a warning says why, and the deletion completes once allowed.
	setRules(controllertest.ConfigMapRule(controllertest.WriteVerbs()...))
	if err := admin.Delete(context.Background(), controllertest.GetApp(t, ns, "gc")); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 30*time.Second, "a DeleteFailed event naming the refused delete of keep", func() error {
		for _, e := range controllertest.AppEvents(t, ns, "gc") {
			if e.Reason == v1beta1.ReasonDeleteFailed && strings.Contains(e.Note, "keep") && strings.Contains(e.Note, user) {
				return nil
			}
		}
		return controllertest.ErrNotYet
	})
	if !controllertest.Exists(t, &corev1.ConfigMap{}, ns, "keep") || !controllertest.Exists(t, &v1beta1.Application{}, ns, "gc") {
		t.Fatal("the refused deletion went ahead")
	}
	setRules(controllertest.ConfigMapRule(append(controllertest.WriteVerbs(), "delete")...))
	controllertest.Eventually(t, 60*time.Second, "the application and its ConfigMap gone once the Role allows deletes", func() error {
		if controllertest.Exists(t, &v1beta1.Application{}, ns, "gc") || controllertest.Exists(t, &corev1.ConfigMap{}, ns, "keep") {
			return controllertest.ErrNotYet
		}
		return nil
	})
}

func TestTenancy_DefaultServiceAccountLocksDownAppsWithoutTheAnnotation(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	controllertest.Tenant(t, controllertest.Client(t), ns, "tenant", controllertest.ConfigMapRule(append(controllertest.WriteVerbs(), "delete")...))
	opts := managertest.Options()
	opts.DefaultServiceAccount = "tenant"
	managertest.Start(t, nil, opts)
	namespace := shortName("locked")
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("plain", "",
		controllertest.ConfigMapIn(ns, "allowed"),
		fmt.Sprintf("{apiVersion: v1, kind: Namespace, metadata: {name: %s}}", namespace)))

	msg := controllertest.WaitNotReady(t, ns, "plain", v1beta1.ReasonForbidden)
	if !strings.Contains(msg, fmt.Sprintf("system:serviceaccount:%s:tenant", ns)) || !strings.Contains(msg, "namespaces") {
		t.Errorf("Ready message %q does not name the default ServiceAccount and the refused Namespace", msg)
	}
	if controllertest.Exists(t, &corev1.Namespace{}, "", namespace) {
		t.Fatal("an Application without the annotation created a Namespace with Steward's permissions")
	}
	if !controllertest.Exists(t, &corev1.ConfigMap{}, ns, "allowed") {
		t.Fatal("the ConfigMap the default ServiceAccount may create is missing")
	}
}

func TestTenancy_NoCrossNamespaceObjectsRefusesOtherNamespacesAndClusterScope(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	other := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	opts := managertest.Options()
	opts.NoCrossNamespaceObjects = true
	managertest.Start(t, nil, opts)
	namespace := shortName("made")
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("neighbour", "", controllertest.ConfigMapIn(other, "theirs")))
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("cluster-wide", "", fmt.Sprintf("{apiVersion: v1, kind: Namespace, metadata: {name: %s}}", namespace)))
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("bad-identity", "Not_A_Name", controllertest.ConfigMapIn(ns, "never")))
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("at-home", "", controllertest.ConfigMapIn(ns, "mine")))

	if msg := controllertest.WaitNotReady(t, ns, "neighbour", v1beta1.ReasonCrossNamespaceObject); !strings.Contains(msg, other) {
		t.Errorf("message %q does not name the namespace", msg)
	}
	if msg := controllertest.WaitNotReady(t, ns, "cluster-wide", v1beta1.ReasonClusterScopedObject); !strings.Contains(msg, namespace) {
		t.Errorf("message %q does not name the object", msg)
	}
	if msg := controllertest.WaitNotReady(t, ns, "bad-identity", v1beta1.ReasonInvalidServiceAccount); !strings.Contains(msg, "Not_A_Name") {
		t.Errorf("message %q does not name the service account", msg)
	}
	controllertest.WaitReady(t, ns, "at-home")
	if controllertest.Exists(t, &corev1.ConfigMap{}, other, "theirs") || controllertest.Exists(t, &corev1.Namespace{}, "", namespace) ||
		controllertest.Exists(t, &corev1.ConfigMap{}, ns, "never") {
		t.Fatal("a refused object was created")
	}
	for _, app := range []string{"neighbour", "cluster-wide", "bad-identity"} {
		if n := len(controllertest.TrackersOf(t, ns, app)); n != 0 {
			t.Errorf("%s: %d trackers: a refused version must record nothing", app, n)
		}
	}
}

// shortName returns a cluster-wide name unique to this run.
func shortName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1000000)
}

func TestTenancy_TargetClustersAuthoriseTheServiceAccountToo(t *testing.T) {
	ctx := context.Background()
	spoke, sc := managertest.JoinedSpoke(t, "tenant-spoke")
	ns := controllertest.NewNamespace(t)
	controllertest.InstallBuiltinDefinitions(t, ns, "k8s-objects")
	// The ServiceAccount exists in the spoke, with its own Role there; on
	// the hub it may do nothing at all.
	if err := sc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	controllertest.Tenant(t, sc, ns, "deployer", controllertest.ConfigMapRule(append(controllertest.WriteVerbs(), "delete")...))
	managertest.Start(t, nil, managertest.Options())
	crb := shortName("spoke-escalate")
	controllertest.CreateApp(t, ns, controllertest.ObjectsApp("remote", "deployer", controllertest.ConfigMapIn(ns, "mine"), clusterAdminBinding(crb, ns, "deployer"))+
		fmt.Sprintf("  policies:\n    - {name: where, type: topology, properties: {clusters: [%s]}}\n", spoke.Name))

	msg := controllertest.WaitNotReady(t, ns, "remote", v1beta1.ReasonForbidden)
	for _, want := range []string{fmt.Sprintf("system:serviceaccount:%s:deployer", ns), "clusterrolebindings", fmt.Sprintf("%q", spoke.Name)} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready message %q does not name %s", msg, want)
		}
	}
	if controllertest.Exists(t, &corev1.ConfigMap{}, ns, "mine") {
		t.Error("the hub got the ConfigMap")
	}
	if err := sc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mine"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the ConfigMap the ServiceAccount may create in the spoke: %v", err)
	}
	if err := sc.Get(ctx, client.ObjectKey{Name: crb}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the spoke's ClusterRoleBinding: %v, want it refused", err)
	}
}
