package application

import (
	"context"
	"fmt"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

// denyTrackerCreates installs an admission policy refusing to create
// ResourceTrackers whose name starts with prefix, and returns a function
// that lifts it.
func denyTrackerCreates(t *testing.T, prefix string) func() {
	t.Helper()
	ctx := context.Background()
	// Wait until a probe tracker cannot be created.
	return denyCreates(t, "resourcetrackers", fmt.Sprintf("!object.metadata.name.startsWith(%q)", prefix), "", func() error {
		probe := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Name: prefix + "probe"}, Spec: v1beta1.ResourceTrackerSpec{Type: v1beta1.ResourceTrackerTypeRoot}}
		if err := testClient.Create(ctx, probe); err == nil {
			_ = testClient.Delete(ctx, probe)
			return errNotYet
		}
		return nil
	})
}

// denyCreates installs an admission policy refusing to create objects of
// Steward's group resource that fail the CEL expression, in namespace ns
// ("" anywhere), once probe says it holds, and returns a function that
// lifts it.
func denyCreates(t *testing.T, resource, expression, ns string, probe func() error) func() {
	t.Helper()
	fail := admissionv1.Fail
	name := "deny-" + resource + "-" + fmt.Sprint(time.Now().UnixNano())
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{v1beta1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{resource}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: expression, Message: "creating this " + resource + " object is refused"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	if ns != "" {
		binding.Spec.MatchResources = &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
		}}
	}
	return installPolicy(t, policy, binding, "deny "+resource+" creates", probe)
}

// The objects an Application keeps for its lifetime are recorded in the
// root tracker before its version is: when recording the version fails,
// no run has started, and nothing of the gated steps is applied, staging
// nor production. Once the version is recorded, the run holds production
// at the gate as usual.
func TestWorkflow_FailedRecordHoldsAll(t *testing.T) {
	ns := newNamespace(t)
	envs := envNamespaces(t, ns, "staging", "prod")
	staging, prod := envs[0], envs[1]
	lift := denyTrackerCreates(t, "gate."+ns+".v")
	startManager(t, testCfg, testOptions())
	createApp(t, ns, fmt.Sprintf(`metadata: {name: gate}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg, data: {v: "1"}}}
  policies:
    - {name: staging, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: production, type: topology, properties: {clusters: [local], namespace: %s}}
    - {name: keep, type: garbage-collect, properties: {rules: [{selector: {resourceTypes: [ConfigMap]}, strategy: never}]}}
  workflow:
    steps:
      - {name: deploy-staging, type: deploy, properties: {policies: [staging]}}
      - {name: approve, type: suspend}
      - {name: deploy-prod, type: deploy, properties: {policies: [production]}}
`, staging, prod))
	eventually(t, 30*time.Second, "the root tracker recorded, the version refused", func() error {
		if trackerNamed(t, ns, "gate", "gate."+ns+".root") == nil {
			return errNotYet
		}
		return nil
	})
	// Several passes retry the version.
	time.Sleep(5 * time.Second)
	if configMapExists(t, prod, "cfg") || configMapExists(t, staging, "cfg") {
		t.Fatal("objects of the workflow's steps were applied before the version was recorded")
	}

	lift()
	waitSuspended(t, ns)
	if !configMapExists(t, staging, "cfg") || configMapExists(t, prod, "cfg") {
		t.Fatal("after the version was recorded: staging must have the ConfigMap, production not")
	}
}
