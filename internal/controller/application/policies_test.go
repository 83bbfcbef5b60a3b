package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

func getConfigMap(t *testing.T, ns, name string) (*corev1.ConfigMap, error) {
	t.Helper()
	return controllertest.GetConfigMap(t, ns, name)
}

func deleteApp(t *testing.T, ns, name string) {
	t.Helper()
	controllertest.DeleteApp(t, ns, name)
}

func TestPolicy_GarbageCollectOnAppDeleteAndNever(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	policies := `
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {resourceTypes: [Service]}, strategy: onAppDelete}
        - {selector: {resourceTypes: [ConfigMap]}, strategy: never}
`
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec+policies))
	waitReady(t, ns, "web")
	// v2 drops the Service: onAppDelete keeps it across versions.
	setSpec(t, ns, "web", v2Spec+policies, nil)
	waitReady(t, ns, "web")
	time.Sleep(3 * time.Second)
	if !serviceExists(t, ns, "web") {
		t.Fatal("an onAppDelete Service was deleted on update")
	}
	deleteApp(t, ns, "web")
	if serviceExists(t, ns, "web") {
		t.Error("an onAppDelete Service survived the app's deletion")
	}
	if _, err := getConfigMap(t, ns, "web-config"); err != nil {
		t.Errorf("a never-collected ConfigMap was deleted: %v", err)
	}
	if _, err := getDeployment(t, ns, "web"); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment survived the app's deletion: %v", err)
	}
}

func TestPolicy_GarbageCollectKeepLegacyResource(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	policies := "\npolicies:\n  - {name: legacy, type: garbage-collect, properties: {keepLegacyResource: true}}\n"
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec+policies))
	waitReady(t, ns, "web")
	setSpec(t, ns, "web", v2Spec+policies, nil)
	waitReady(t, ns, "web")
	time.Sleep(3 * time.Second)
	if !serviceExists(t, ns, "web") {
		t.Error("keepLegacyResource: the previous version's Service was deleted")
	}
	deleteApp(t, ns, "web")
	if serviceExists(t, ns, "web") {
		t.Error("the legacy Service survived the app's deletion")
	}
}

func TestPolicy_ApplyOnceLeavesSelectedFields(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `
metadata: {name: web}
spec:
  components:
    - {name: web, type: test-worker, properties: {image: "nginx:1.26", replicas: 2}}
  policies:
    - name: once
      type: apply-once
      properties:
        enable: true
        rules:
          - {selector: {resourceTypes: [Deployment]}, strategy: {path: [spec.replicas]}}
`)
	waitReady(t, ns, "web")
	dep, _ := getDeployment(t, ns, "web")
	patch := client.MergeFrom(dep.DeepCopy())
	seven := int32(7)
	dep.Spec.Replicas = &seven
	dep.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
	if err := testClient.Patch(context.Background(), dep, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the image edit reverted", func() error {
		if image(t, ns, "web") != "nginx:1.26" {
			return errNotYet
		}
		return nil
	})
	dep, _ = getDeployment(t, ns, "web")
	if *dep.Spec.Replicas != 7 {
		t.Errorf("replicas = %d: apply-once should leave the hand-set 7", *dep.Spec.Replicas)
	}
}

func TestPolicy_ReadOnlyNeverWritesAndRequiresTheObject(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	app := `
metadata: {name: reader}
spec:
  components:
    - {name: c, type: test-config, properties: {name: settings, data: {mine: "yes"}}}
  policies:
    - {name: ro, type: read-only, properties: {rules: [{selector: {resourceTypes: [ConfigMap]}}]}}
`
	createApp(t, ns, app)
	msg := waitNotReady(t, ns, "reader", v1beta1.ReasonResourceMissing)
	if !strings.Contains(msg, "settings") {
		t.Errorf("message %q does not name the missing object", msg)
	}
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace, cm.Data = "settings", ns, map[string]string{"theirs": "yes"}
	if err := testClient.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "reader")
	deleteApp(t, ns, "reader")
	got, err := getConfigMap(t, ns, "settings")
	if err != nil {
		t.Fatalf("the read-only ConfigMap was deleted with the app: %v", err)
	}
	if got.Data["theirs"] != "yes" || got.Data["mine"] != "" || len(got.Labels) != 0 {
		t.Errorf("the read-only ConfigMap was written: %+v", got)
	}
}

func TestPolicy_TakeOverAdoptsAnUnownedObject(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace, cm.Data = "settings", ns, map[string]string{"k": "old"}
	if err := testClient.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	createApp(t, ns, `
metadata: {name: adopter}
spec:
  components:
    - {name: c, type: test-config, properties: {name: settings, data: {k: new}}}
  policies:
    - {name: adopt, type: take-over, properties: {rules: [{selector: {componentNames: [c]}}]}}
`)
	waitReady(t, ns, "adopter")
	got, _ := getConfigMap(t, ns, "settings")
	if got.Data["k"] != "new" || got.Labels[v1beta1.LabelAppName] != "adopter" {
		t.Errorf("not taken over: %+v", got)
	}
	deleteApp(t, ns, "adopter")
	if _, err := getConfigMap(t, ns, "settings"); !apierrors.IsNotFound(err) {
		t.Errorf("an adopted object belongs to the app and goes with it: %v", err)
	}
}

func TestOwnership_AnotherAppsObjectIsNeverOverwritten(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: first}\nspec: {components: [{name: c, type: test-config, properties: {name: settings, data: {by: first}}}]}\n")
	waitReady(t, ns, "first")
	createApp(t, ns, "metadata: {name: second}\nspec: {components: [{name: c, type: test-config, properties: {name: settings, data: {by: second}}}]}\n")
	msg := waitNotReady(t, ns, "second", v1beta1.ReasonOwnershipConflict)
	if !strings.Contains(msg, ns+"/first") {
		t.Errorf("message %q does not name the owner", msg)
	}
	deleteApp(t, ns, "second")
	got, err := getConfigMap(t, ns, "settings")
	if err != nil || got.Data["by"] != "first" {
		t.Errorf("the first app's object was touched: %+v, %v", got, err)
	}
}

// sharedConfigApp is an Application that shares the ConfigMap "shared"
// (a shared-resource policy) and writes its own name into it.
func sharedConfigApp(name string) string {
	return fmt.Sprintf(`
metadata: {name: %s}
spec:
  components:
    - {name: c, type: test-config, properties: {name: shared, data: {by: %s}}}
  policies:
    - {name: share, type: shared-resource, properties: {rules: [{selector: {resourceTypes: [ConfigMap]}}]}}
`, name, name)
}

func TestPolicy_SharedResourceGoesWithTheLastSharer(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, sharedConfigApp("one"))
	waitReady(t, ns, "one")
	createApp(t, ns, sharedConfigApp("two"))
	waitReady(t, ns, "two")
	got, _ := getConfigMap(t, ns, "shared")
	if got.Data["by"] != "one" {
		t.Errorf("the second sharer wrote the object: %v", got.Data)
	}
	if sb := got.Annotations[v1beta1.AnnotationSharedBy]; sb != ns+"/one,"+ns+"/two" {
		t.Errorf("shared-by = %q", sb)
	}
	deleteApp(t, ns, "one")
	got, err := getConfigMap(t, ns, "shared")
	if err != nil {
		t.Fatalf("a shared object was deleted while another app shares it: %v", err)
	}
	if got.Labels[v1beta1.LabelAppName] != "two" {
		t.Errorf("ownership did not pass to the remaining sharer: %v", got.Labels)
	}
	deleteApp(t, ns, "two")
	if _, err := getConfigMap(t, ns, "shared"); !apierrors.IsNotFound(err) {
		t.Errorf("the last sharer left and the object stayed: %v", err)
	}
}

// An object whose garbage-collect rule is removed moves from the root
// tracker back to the version; removing its component later must delete
// it. Found by the chaos suite (seed 596315): the root tracker kept a
// manifest-less entry for it, which counted as live forever, so the
// object was orphaned.
func TestPolicy_RuleRemovedThenComponentRemovedIsCollected(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	both := `
components:
  - {name: a, type: test-config, properties: {name: a, data: {k: v}}}
  - {name: b, type: test-config, properties: {name: b, data: {k: v}}}
`
	never := `
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {componentNames: [a]}, strategy: never}
`
	createApp(t, ns, "metadata: {name: app}\nspec:"+indent(both+never))
	waitReady(t, ns, "app")
	setSpec(t, ns, "app", both, nil) // the rule goes: a moves back to the version
	waitReady(t, ns, "app")
	setSpec(t, ns, "app", `
components:
  - {name: b, type: test-config, properties: {name: b, data: {k: v}}}
`, nil) // a leaves the spec, and no rule keeps it
	waitReady(t, ns, "app")
	eventually(t, 20*time.Second, "ConfigMap a collected", func() error {
		if _, err := getConfigMap(t, ns, "a"); apierrors.IsNotFound(err) {
			return nil
		}
		return errNotYet
	})
	if _, err := getConfigMap(t, ns, "b"); err != nil {
		t.Errorf("ConfigMap b, still in the spec: %v", err)
	}
}

// Rolling back to a version that kept an object in the root tracker must
// not collect the object, even after a newer version moved it to its own
// tracker (a review found that dropping the root entry did).
func TestPolicy_RollbackToAVersionThatKeptAnObjectInRootKeepsIt(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	spec := `
components:
  - {name: a, type: test-config, properties: {name: a, data: {k: v}}}
  - {name: b, type: test-config, properties: {name: b, data: {k: v}}}
`
	onAppDelete := `
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {componentNames: [a]}, strategy: onAppDelete}
`
	createApp(t, ns, "metadata: {name: app, annotations: {app.oam.dev/publishVersion: alpha}}\nspec:"+indent(spec+onAppDelete))
	waitReady(t, ns, "app")
	setSpec(t, ns, "app", spec, map[string]string{v1beta1.AnnotationPublishVersion: "beta"})
	waitReady(t, ns, "app")
	time.Sleep(3 * time.Second) // passes of beta: its garbage collection ran
	// Only the annotation changes, so the generation stays and Ready may
	// still be beta's: poll for alpha's revision.
	setSpec(t, ns, "app", spec, map[string]string{v1beta1.AnnotationPublishVersion: "alpha"})
	eventually(t, 20*time.Second, "latestRevision of alpha", func() error {
		if rev := getApp(t, ns, "app").Status.LatestRevision; rev == nil || rev.RevisionHash != "alpha" {
			return fmt.Errorf("latestRevision = %+v, want alpha's", rev)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // passes of alpha: its garbage collection ran
	if _, err := getConfigMap(t, ns, "a"); err != nil {
		t.Fatalf("rolled back to alpha, which delivers ConfigMap a: %v", err)
	}
}

// waitLatestRevision waits until the Application reports version name
// (<app>-<publishVersion>) as its live version: a publishVersion change
// alone does not move the generation, so Ready may still be the previous
// version's. The status names the version's ApplicationRevision
// (<app>-v<N>) and its publishVersion (revisionHash).
func waitLatestRevision(t *testing.T, ns, app, name string) {
	t.Helper()
	eventually(t, 20*time.Second, "latestRevision "+name, func() error {
		if rev := getApp(t, ns, app).Status.LatestRevision; rev == nil || app+"-"+rev.RevisionHash != name {
			return fmt.Errorf("latestRevision = %+v, want %s", rev, name)
		}
		return nil
	})
}

// An object a garbage-collect rule kept for the Application's lifetime
// goes once no version renders it and no rule keeps it: here its component
// and its rule leave the spec, unpublished, then one publishVersion
// delivers both, as in the chaos suite's seed 37959 (watch mode), where
// the object stayed, unrecorded by any version, until the Application was
// deleted.
func TestPolicy_ObjectDroppedWithItsKeepRuleIsCollected(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	onlyA := `
components:
  - {name: a, type: test-config, properties: {name: a, data: {k: v}}}
`
	both := onlyA + `  - {name: b, type: test-config, properties: {name: b, data: {k: v}}}
`
	onAppDelete := `
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {componentNames: [b]}, strategy: onAppDelete}
`
	createApp(t, ns, "metadata: {name: app, annotations: {app.oam.dev/publishVersion: p1}}\nspec:"+indent(both+onAppDelete))
	waitReady(t, ns, "app")
	// The spec drops b, then its rule; nothing is published: p1 stays
	// live, and renders b.
	setSpec(t, ns, "app", onlyA+onAppDelete, nil)
	setSpec(t, ns, "app", onlyA, nil)
	waitReady(t, ns, "app")
	time.Sleep(3 * time.Second) // passes of the unpublished spec
	if _, err := getConfigMap(t, ns, "b"); err != nil {
		t.Fatalf("ConfigMap b, which the live version p1 renders, is gone: %v", err)
	}
	setSpec(t, ns, "app", onlyA, map[string]string{v1beta1.AnnotationPublishVersion: "p2"})
	waitLatestRevision(t, ns, "app", "app-p2")
	eventually(t, 20*time.Second, "ConfigMap b collected", func() error {
		if _, err := getConfigMap(t, ns, "b"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ConfigMap b: %v: no version renders it, and no rule keeps it", err)
		}
		return nil
	})
	if _, err := getConfigMap(t, ns, "a"); err != nil {
		t.Errorf("ConfigMap a, still in the spec: %v", err)
	}
}

// A rollback applies what the earlier version rendered, also of the
// objects a garbage-collect rule keeps for the Application's lifetime:
// each version records them with their manifests, not only the root
// tracker, which has the newest version's. Found by the chaos suite
// (seed 7483, timer mode): a rolled-back object kept the newest content.
func TestPolicy_RollbackRestoresTheContentOfObjectsKeptInRoot(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	spec := func(value string) string {
		return fmt.Sprintf(`
components:
  - {name: a, type: test-config, properties: {name: a, data: {k: v}}}
  - {name: b, type: test-config, properties: {name: b, data: {k: %s}}}
policies:
  - name: keep
    type: garbage-collect
    properties:
      rules:
        - {selector: {componentNames: [b]}, strategy: onAppDelete}
`, value)
	}
	value := func() string {
		cm, err := getConfigMap(t, ns, "b")
		if err != nil {
			return err.Error()
		}
		return cm.Data["k"]
	}
	createApp(t, ns, "metadata: {name: app, annotations: {app.oam.dev/publishVersion: p1}}\nspec:"+indent(spec("one")))
	waitReady(t, ns, "app")
	setSpec(t, ns, "app", spec("two"), map[string]string{v1beta1.AnnotationPublishVersion: "p2"})
	waitReady(t, ns, "app")
	eventually(t, 15*time.Second, "ConfigMap b as p2 renders it", func() error {
		if got := value(); got != "two" {
			return fmt.Errorf("b.data.k = %q", got)
		}
		return nil
	})
	// Back to p1 (only the annotation changes).
	setSpec(t, ns, "app", spec("two"), map[string]string{v1beta1.AnnotationPublishVersion: "p1"})
	waitLatestRevision(t, ns, "app", "app-p1")
	eventually(t, 20*time.Second, "ConfigMap b as p1 rendered it", func() error {
		if got := value(); got != "one" {
			return fmt.Errorf("b.data.k = %q after the rollback to p1, which rendered \"one\"", got)
		}
		return nil
	})
	// And forward again: p2's content.
	setSpec(t, ns, "app", spec("two"), map[string]string{v1beta1.AnnotationPublishVersion: "p2"})
	waitLatestRevision(t, ns, "app", "app-p2")
	eventually(t, 20*time.Second, "ConfigMap b as p2 renders it again", func() error {
		if got := value(); got != "two" {
			return fmt.Errorf("b.data.k = %q after going forward to p2 again", got)
		}
		return nil
	})
}

// waitUnsupportedPolicy waits for the Application to be refused with
// reason UnsupportedPolicy naming the policy, with its event, and checks
// that nothing of the version was applied.
func waitUnsupportedPolicy(t *testing.T, ns, app, policyName, configMap string) string {
	t.Helper()
	var msg string
	eventually(t, 30*time.Second, "Rendered=False, UnsupportedPolicy", func() error {
		c, err := condition(t, ns, app, v1beta1.ConditionRendered)
		if err != nil {
			return err
		}
		if c.Status != "False" || c.Reason != v1beta1.ReasonUnsupportedPolicy {
			return fmt.Errorf("Rendered %s/%s: %s", c.Status, c.Reason, c.Message)
		}
		msg = c.Message
		return nil
	})
	if !strings.Contains(msg, `"`+policyName+`"`) {
		t.Errorf("condition message %q does not name the policy %q", msg, policyName)
	}
	waitEvent(t, ns, app, v1beta1.ReasonUnsupportedPolicy)
	time.Sleep(2 * time.Second)
	if _, err := getConfigMap(t, ns, configMap); !apierrors.IsNotFound(err) {
		t.Fatalf("the ConfigMap of a refused version was applied: %v", err)
	}
	return msg
}

// An Application-scoped PolicyDefinition (KubeVela transforms the
// Application with it before rendering) is refused, naming the policy;
// a global one, which no Application names, is reported on the
// definition itself, with a Warning event.
func TestPolicy_ApplicationScopedAndGlobalPoliciesAreReportedNotIgnored(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	const template = "output: {labels: {team: \"a\"}}\nparameter: {}\n"
	for name, extra := range map[string]string{"add-labels": "scope: Application", "everywhere": "global: true\n  scope: Application"} {
		createFromYAML(t, ns, fmt.Sprintf("metadata: {name: %s}\nspec:\n  %s\n  schematic: {cue: {template: %q}}\n", name, extra, template), &v1beta1.PolicyDefinition{})
	}
	createApp(t, ns, "metadata: {name: scoped}\nspec:"+indent(`
components:
  - {name: cfg, type: test-config, properties: {name: cfg, data: {v: one}}}
policies:
  - {name: labels, type: add-labels}
`))
	msg := waitUnsupportedPolicy(t, ns, "scoped", "labels", "cfg")
	if !strings.Contains(msg, "Application-scoped") {
		t.Errorf("condition message %q does not say why", msg)
	}
	eventually(t, 30*time.Second, "the global PolicyDefinition Ready=False, UnsupportedPolicy", func() error {
		var def v1beta1.PolicyDefinition
		if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "everywhere"}, &def); err != nil {
			return err
		}
		c := meta.FindStatusCondition(def.Status.Conditions, v1beta1.ConditionReady)
		if c == nil || c.Status != "False" || c.Reason != v1beta1.ReasonUnsupportedPolicy || !strings.Contains(c.Message, "global") {
			return fmt.Errorf("Ready: %+v", c)
		}
		return nil
	})
	eventually(t, 15*time.Second, "a Warning event on the global PolicyDefinition", func() error {
		var list eventsv1.EventList
		if err := testClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Name == "everywhere" && e.Reason == v1beta1.ReasonUnsupportedPolicy && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return errNotYet
	})
}
