package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The tenancy stories run against envtest's kube-apiserver, which
// authorises with RBAC: the controller's own credentials are
// system:masters, so every refusal below comes from impersonating the
// Application's ServiceAccount.

// installK8sObjects installs the built-in k8s-objects definition into ns.
func installK8sObjects(t *testing.T, ns string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "definitions", "k8s-objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	def := &v1beta1.ComponentDefinition{}
	if err := yaml.Unmarshal(raw, def); err != nil {
		t.Fatal(err)
	}
	def.Namespace = ns
	if err := testClient.Create(context.Background(), def); err != nil {
		t.Fatal(err)
	}
}

// tenant creates ServiceAccount name in ns, bound to a Role of ns with
// rules; it returns a function that replaces the rules.
func tenant(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) func(...rbacv1.PolicyRule) {
	t.Helper()
	return tenantIn(t, testClient, ns, name, rules...)
}

// tenantIn is tenant in the cluster behind c.
func tenantIn(t *testing.T, c client.Client, ns, name string, rules ...rbacv1.PolicyRule) func(...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return func(rules ...rbacv1.PolicyRule) {
		t.Helper()
		role := &rbacv1.Role{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, role); err != nil {
			t.Fatal(err)
		}
		role.Rules = rules
		if err := c.Update(ctx, role); err != nil {
			t.Fatal(err)
		}
	}
}

func configMapRule(verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}
}

var writeVerbs = []string{"get", "list", "watch", "create", "update", "patch"}

// objectsApp is an Application of k8s-objects components, one per object.
func objectsApp(name, serviceAccount string, objects ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "metadata:\n  name: %s\n", name)
	if serviceAccount != "" {
		fmt.Fprintf(&b, "  annotations: {%s: %s}\n", v1beta1.AnnotationServiceAccountName, serviceAccount)
	}
	b.WriteString("spec:\n  components:\n")
	for i, obj := range objects {
		fmt.Fprintf(&b, "    - {name: c%d, type: k8s-objects, properties: {objects: [%s]}}\n", i, obj)
	}
	return b.String()
}

func configMapIn(ns, name string) string {
	return fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s}, data: {k: v}}", name, ns)
}

func clusterAdminBinding(name, ns, sa string) string {
	return fmt.Sprintf("{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: %s}, "+
		"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}, "+
		"subjects: [{kind: ServiceAccount, name: %s, namespace: %s}]}", name, sa, ns)
}

// exists reports whether an object exists, read with the admin client.
func exists(t *testing.T, obj client.Object, ns, name string) bool {
	t.Helper()
	err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// condition returns an Application's condition of type typ for its
// current generation, or an error.
func condition(t *testing.T, ns, name, typ string) (*v1beta1.Condition, error) {
	t.Helper()
	app := getApp(t, ns, name)
	c := v1beta1.FindCondition(app.Status.Conditions, typ)
	if c == nil || app.Status.ObservedGeneration != app.Generation {
		return nil, fmt.Errorf("%s = %+v at generation %d", typ, c, app.Status.ObservedGeneration)
	}
	return c, nil
}

func TestTenancy_ImpersonatedAppDeliversWhatItsServiceAccountMayAndIsRefusedTheRest(t *testing.T) {
	ns := newNamespace(t)
	other := newNamespace(t)
	installK8sObjects(t, ns)
	tenant(t, ns, "deployer", configMapRule(append(writeVerbs, "delete")...))
	startManager(t, testCfg, testOptions())
	crb := shortName("escalate")
	createApp(t, ns, objectsApp("tenant", "deployer",
		configMapIn(ns, "mine"),
		clusterAdminBinding(crb, ns, "deployer"),
		configMapIn(other, "theirs")))
	user := fmt.Sprintf("system:serviceaccount:%s:deployer", ns)

	msg := waitNotReady(t, ns, "tenant", v1beta1.ReasonForbidden)
	for _, want := range []string{user, "clusterrolebindings", crb, "configmaps", other} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready message %q does not name %q", msg, want)
		}
	}
	if note := waitEvent(t, ns, "tenant", v1beta1.ReasonForbidden); !strings.Contains(note, user) {
		t.Errorf("event %q does not name the identity", note)
	}
	if exists(t, &rbacv1.ClusterRoleBinding{}, "", crb) {
		t.Fatal("the ClusterRoleBinding was created although the ServiceAccount may not create it")
	}
	if exists(t, &corev1.ConfigMap{}, other, "theirs") {
		t.Fatal("an object in another namespace was created although the ServiceAccount may not write there")
	}
	// The rest of the app works: delivered, and its drift repaired.
	if !exists(t, &corev1.ConfigMap{}, ns, "mine") {
		t.Fatal("the allowed ConfigMap was not created")
	}
	if err := testClient.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the deleted ConfigMap re-created as the ServiceAccount", func() error {
		if !exists(t, &corev1.ConfigMap{}, ns, "mine") {
			return errNotYet
		}
		return nil
	})

	// Deleting the app deletes what it created, and is not held up by the
	// objects it was never allowed to create.
	if err := testClient.Delete(context.Background(), getApp(t, ns, "tenant")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the application gone", func() error {
		if exists(t, &v1beta1.Application{}, ns, "tenant") {
			return errNotYet
		}
		return nil
	})
	if exists(t, &corev1.ConfigMap{}, ns, "mine") {
		t.Error("the app's ConfigMap outlived the app")
	}
}

func TestTenancy_DeniedDeleteKeepsTheObjectAndItsEntryUntilTheRoleAllowsIt(t *testing.T) {
	ns := newNamespace(t)
	installK8sObjects(t, ns)
	setRules := tenant(t, ns, "deployer", configMapRule(writeVerbs...))
	startManager(t, testCfg, testOptions())
	createApp(t, ns, objectsApp("gc", "deployer", configMapIn(ns, "keep"), configMapIn(ns, "drop")))
	waitReady(t, ns, "gc")

	live := getApp(t, ns, "gc")
	live.Spec.Components = live.Spec.Components[:1]
	if err := testClient.Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("system:serviceaccount:%s:deployer", ns)
	eventually(t, 30*time.Second, "GarbageCollected=False naming the refused delete", func() error {
		c, err := condition(t, ns, "gc", v1beta1.ConditionGarbageCollected)
		if err != nil {
			return err
		}
		if c.Status != metav1.ConditionFalse || c.Reason != v1beta1.ReasonDeleteFailed ||
			!strings.Contains(c.Message, user) || !strings.Contains(c.Message, "delete") || !strings.Contains(c.Message, "drop") {
			return fmt.Errorf("GarbageCollected = %+v", c)
		}
		return nil
	})
	waitEvent(t, ns, "gc", v1beta1.ReasonDeleteFailed)
	if !exists(t, &corev1.ConfigMap{}, ns, "drop") {
		t.Fatal("the ConfigMap was deleted although the ServiceAccount may not delete it")
	}
	if !anyEntry(t, ns, "gc", func(e v1beta1.ManagedResource) bool { return e.Name == "drop" && e.Kind == "ConfigMap" }) {
		t.Fatal("the refused object's entry was dropped: it would be orphaned")
	}

	setRules(configMapRule(append(writeVerbs, "delete")...))
	eventually(t, 60*time.Second, "the ConfigMap deleted once the Role allows it", func() error {
		if exists(t, &corev1.ConfigMap{}, ns, "drop") {
			return errNotYet
		}
		c, err := condition(t, ns, "gc", v1beta1.ConditionGarbageCollected)
		if err != nil {
			return err
		}
		if c.Status != metav1.ConditionTrue {
			return fmt.Errorf("GarbageCollected = %+v", c)
		}
		return nil
	})
	if !exists(t, &corev1.ConfigMap{}, ns, "keep") {
		t.Fatal("the ConfigMap still in the spec is gone")
	}

	// Deleting the Application while the Role refuses deletes: the object
	// stays, a warning says why, and the deletion completes once allowed.
	setRules(configMapRule(writeVerbs...))
	if err := testClient.Delete(context.Background(), getApp(t, ns, "gc")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "a DeleteFailed event naming the refused delete of keep", func() error {
		for _, e := range appEvents(t, ns, "gc") {
			if e.Reason == v1beta1.ReasonDeleteFailed && strings.Contains(e.Note, "keep") && strings.Contains(e.Note, user) {
				return nil
			}
		}
		return errNotYet
	})
	if !exists(t, &corev1.ConfigMap{}, ns, "keep") || !exists(t, &v1beta1.Application{}, ns, "gc") {
		t.Fatal("the refused deletion went ahead")
	}
	setRules(configMapRule(append(writeVerbs, "delete")...))
	eventually(t, 60*time.Second, "the application and its ConfigMap gone once the Role allows deletes", func() error {
		if exists(t, &v1beta1.Application{}, ns, "gc") || exists(t, &corev1.ConfigMap{}, ns, "keep") {
			return errNotYet
		}
		return nil
	})
}

func TestTenancy_DefaultServiceAccountLocksDownAppsWithoutTheAnnotation(t *testing.T) {
	ns := newNamespace(t)
	installK8sObjects(t, ns)
	tenant(t, ns, "tenant", configMapRule(append(writeVerbs, "delete")...))
	opts := testOptions()
	opts.DefaultServiceAccount = "tenant"
	startManager(t, testCfg, opts)
	namespace := shortName("locked")
	createApp(t, ns, objectsApp("plain", "",
		configMapIn(ns, "allowed"),
		fmt.Sprintf("{apiVersion: v1, kind: Namespace, metadata: {name: %s}}", namespace)))

	msg := waitNotReady(t, ns, "plain", v1beta1.ReasonForbidden)
	if !strings.Contains(msg, fmt.Sprintf("system:serviceaccount:%s:tenant", ns)) || !strings.Contains(msg, "namespaces") {
		t.Errorf("Ready message %q does not name the default ServiceAccount and the refused Namespace", msg)
	}
	if exists(t, &corev1.Namespace{}, "", namespace) {
		t.Fatal("an Application without the annotation created a Namespace with Steward's permissions")
	}
	if !exists(t, &corev1.ConfigMap{}, ns, "allowed") {
		t.Fatal("the ConfigMap the default ServiceAccount may create is missing")
	}
}

func TestTenancy_NoCrossNamespaceObjectsRefusesOtherNamespacesAndClusterScope(t *testing.T) {
	ns := newNamespace(t)
	other := newNamespace(t)
	installK8sObjects(t, ns)
	opts := testOptions()
	opts.NoCrossNamespaceObjects = true
	startManager(t, testCfg, opts)
	namespace := shortName("made")
	createApp(t, ns, objectsApp("neighbour", "", configMapIn(other, "theirs")))
	createApp(t, ns, objectsApp("cluster-wide", "", fmt.Sprintf("{apiVersion: v1, kind: Namespace, metadata: {name: %s}}", namespace)))
	createApp(t, ns, objectsApp("bad-identity", "Not_A_Name", configMapIn(ns, "never")))
	createApp(t, ns, objectsApp("at-home", "", configMapIn(ns, "mine")))

	if msg := waitNotReady(t, ns, "neighbour", v1beta1.ReasonCrossNamespaceObject); !strings.Contains(msg, other) {
		t.Errorf("message %q does not name the namespace", msg)
	}
	if msg := waitNotReady(t, ns, "cluster-wide", v1beta1.ReasonClusterScopedObject); !strings.Contains(msg, namespace) {
		t.Errorf("message %q does not name the object", msg)
	}
	if msg := waitNotReady(t, ns, "bad-identity", v1beta1.ReasonInvalidServiceAccount); !strings.Contains(msg, "Not_A_Name") {
		t.Errorf("message %q does not name the service account", msg)
	}
	waitReady(t, ns, "at-home")
	if exists(t, &corev1.ConfigMap{}, other, "theirs") || exists(t, &corev1.Namespace{}, "", namespace) || exists(t, &corev1.ConfigMap{}, ns, "never") {
		t.Fatal("a refused object was created")
	}
	for _, app := range []string{"neighbour", "cluster-wide", "bad-identity"} {
		if n := len(trackersOf(t, ns, app)); n != 0 {
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
	spoke, sc := joinedSpoke(t, "tenant-spoke")
	ns := newNamespace(t)
	installK8sObjects(t, ns)
	// The ServiceAccount exists in the spoke, with its own Role there; on
	// the hub it may do nothing at all.
	if err := sc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	tenantIn(t, sc, ns, "deployer", configMapRule(append(writeVerbs, "delete")...))
	startManager(t, testCfg, testOptions())
	crb := shortName("spoke-escalate")
	createApp(t, ns, objectsApp("remote", "deployer", configMapIn(ns, "mine"), clusterAdminBinding(crb, ns, "deployer"))+
		fmt.Sprintf("  policies:\n    - {name: where, type: topology, properties: {clusters: [%s]}}\n", spoke.Name))

	msg := waitNotReady(t, ns, "remote", v1beta1.ReasonForbidden)
	for _, want := range []string{fmt.Sprintf("system:serviceaccount:%s:deployer", ns), "clusterrolebindings", fmt.Sprintf("%q", spoke.Name)} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready message %q does not name %s", msg, want)
		}
	}
	if exists(t, &corev1.ConfigMap{}, ns, "mine") {
		t.Error("the hub got the ConfigMap")
	}
	if err := sc.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mine"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the ConfigMap the ServiceAccount may create in the spoke: %v", err)
	}
	if err := sc.Get(ctx, client.ObjectKey{Name: crb}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the spoke's ClusterRoleBinding: %v, want it refused", err)
	}
}
