package controllertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/localcp"
)

// InstallBuiltinDefinitions installs the built-in definitions named (the
// files config/definitions/<name>.yaml, such as k8s-objects or helmchart)
// into ns, the way `steward dev` installs them.
func InstallBuiltinDefinitions(t testing.TB, ns string, names ...string) {
	t.Helper()
	c := Client(t)
	dir := t.TempDir()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(here, "..", "..", "..", "config", "definitions", name+".yaml"))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".yaml"), b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := localcp.ApplyDefinitions(context.Background(), c, dir, ns); err != nil {
		t.Fatalf("installing %v: %v", names, err)
	}
}

// InstallPublishedSteps installs KubeVela's published step definitions
// named, unchanged but for their namespace, from the compatibility corpus
// ($STEWARD_COMPAT_DIR, else ../shared/compat beside the clone); the test
// is skipped without it.
func InstallPublishedSteps(t testing.TB, ns string, names ...string) {
	t.Helper()
	c := Client(t)
	dir := os.Getenv("STEWARD_COMPAT_DIR")
	if dir == "" {
		dir = filepath.Join(here, "..", "..", "..", "..", "shared", "compat")
	}
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join(dir, "workflowsteps", name+".yaml"))
		if os.IsNotExist(err) {
			t.Skipf("the compatibility corpus (../shared/compat) is absent: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		def := &v1beta1.WorkflowStepDefinition{}
		if err := yaml.Unmarshal(raw, def); err != nil {
			t.Fatal(err)
		}
		def.Namespace, def.ResourceVersion = ns, ""
		if err := c.Create(context.Background(), def); err != nil {
			t.Fatalf("installing %s: %v", name, err)
		}
	}
}

// VersionedDefinition is ComponentDefinition ns/name rendering a
// ConfigMap (named by the property name) whose data says version, so that
// a story can tell which spec of the definition rendered it; extra is
// appended to the template (an unclosed "data: {" makes it fail to
// compile).
func VersionedDefinition(ns, name, version, extra string) *v1beta1.ComponentDefinition {
	return &v1beta1.ComponentDefinition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1beta1.ComponentDefinitionSpec{
			Workload: v1beta1.WorkloadTypeDescriptor{Definition: v1beta1.WorkloadGVK{APIVersion: "v1", Kind: "ConfigMap"}},
			Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: fmt.Sprintf(`
output: {
	apiVersion: "v1"
	kind:       "ConfigMap"
	metadata: name: parameter.name
	data: {definition: %q%s}
}
parameter: name: string
`, version, extra)}},
		},
	}
}

// Tenant creates ServiceAccount name in ns of the cluster behind c, bound
// to a Role of ns with rules; it returns a function that replaces the
// rules. The suite's API server authorises with RBAC, so an Application
// acting as the ServiceAccount may do what the rules allow and no more.
func Tenant(t testing.TB, c client.Client, ns, name string, rules ...rbacv1.PolicyRule) func(...rbacv1.PolicyRule) {
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

// ConfigMapRule allows verbs on ConfigMaps.
func ConfigMapRule(verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}
}

// WriteVerbs are every verb Steward uses to deliver and repair an object,
// delete excepted.
func WriteVerbs() []string {
	return []string{"get", "list", "watch", "create", "update", "patch"}
}

// InstallPolicy creates an admission policy and its binding, waits until
// probe says it takes effect (it does so asynchronously), and returns a
// function that lifts it; the test's end lifts it too.
func InstallPolicy(t testing.TB, policy *admissionv1.ValidatingAdmissionPolicy, binding *admissionv1.ValidatingAdmissionPolicyBinding, what string, probe func() error) func() {
	t.Helper()
	c := Client(t)
	ctx := context.Background()
	for _, obj := range []client.Object{policy, binding} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	Eventually(t, 20*time.Second, "the admission policy to "+what, probe)
	lift := func() {
		_ = c.Delete(ctx, binding)
		_ = c.Delete(ctx, policy)
	}
	t.Cleanup(lift)
	return lift
}

// DenyServiceDeletes installs an admission policy refusing DELETE of
// Services in ns and returns a function that lifts it.
func DenyServiceDeletes(t testing.TB, ns string) func() {
	t.Helper()
	c := Client(t)
	ctx := context.Background()
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-delete-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "deleting services is frozen"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-delete-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	// The policy takes effect asynchronously: wait until a probe Service
	// cannot be deleted.
	probe := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	return InstallPolicy(t, policy, binding, "deny deletes", func() error {
		p := probe.DeepCopy()
		if err := c.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err := c.Delete(ctx, p); err == nil || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
			return fmt.Errorf("delete answered %v", err)
		}
		return nil
	})
}
