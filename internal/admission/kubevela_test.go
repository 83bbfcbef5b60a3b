package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// warningClient is a client of the suite's API server that records the
// warnings it is sent.
func warningClient(t *testing.T) (client.Client, *warnings) {
	t.Helper()
	cfg := rest.CopyConfig(controllertest.Config(t))
	seen := &warnings{}
	cfg.WarningHandler = seen
	c, err := client.New(cfg, client.Options{Scheme: controllertest.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, seen
}

// admitted asserts that a dry-run create of obj is admitted.
func admitted(t *testing.T, obj client.Object) {
	t.Helper()
	if err := dryRun(t, obj); err != nil {
		t.Fatalf("%s refused: %v", obj.GetName(), err)
	}
}

// cueDefinition is ComponentDefinition ns/name with template tmpl and
// workload w.
func cueDefinition(ns, name, tmpl string, w v1beta1.WorkloadTypeDescriptor) *v1beta1.ComponentDefinition {
	return &v1beta1.ComponentDefinition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1beta1.ComponentDefinitionSpec{Workload: w,
			Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: tmpl}}},
	}
}

func traitDefinition(ns, name, tmpl string) *v1beta1.TraitDefinition {
	return &v1beta1.TraitDefinition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1beta1.TraitDefinitionSpec{Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: tmpl}}},
	}
}

// nestedTemplate requires name and a.b.c; opt and def are not required.
const nestedTemplate = `
output: {
	apiVersion: "v1"
	kind:       "ConfigMap"
	metadata: name: context.name
	data: {c: parameter.a.b.c, n: parameter.name, d: parameter.def}
}
parameter: {
	name: string
	a: b: c: string
	opt?: string
	def:  *"x" | string
}
`

// An Application KubeVela's webhook refuses at `kubectl apply` is refused
// by Steward's, with KubeVela's message where a script matches on it:
// two components of one name, a required parameter nobody supplies,
// autoUpdate together with publishVersion, a pinned version that does not
// exist. A parameter a workflow step's or a component's input or an
// override policy supplies is not missing.
func TestAdmission_RefusesApplicationsKubeVelaRefuses(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, admissionOptions(t))
	waitAdmission(t, ns)
	ctx := context.Background()
	if err := controllertest.Client(t).Create(ctx, cueDefinition(ns, "nested", nestedTemplate, v1beta1.WorkloadTypeDescriptor{})); err != nil {
		t.Fatal(err)
	}

	refused(t, appFromYAML(t, ns, `
metadata: {name: twice}
spec:
  components:
  - {name: web, type: test-config, properties: {name: a}}
  - {name: web, type: test-config, properties: {name: b}}
`), "spec.components[1].name", "duplicated component name web")

	refused(t, appFromYAML(t, ns, `
metadata: {name: missing}
spec: {components: [{name: web, type: nested, properties: {name: named}}]}
`), "spec.components[0].properties", `component "web": missing parameters: a.b.c`)
	refused(t, appFromYAML(t, ns, `
metadata: {name: missing-all}
spec: {components: [{name: web, type: nested}]}
`), "spec.components[0].properties", `component "web": missing parameters: name,a.b.c`)
	admitted(t, appFromYAML(t, ns, `
metadata: {name: by-override}
spec:
  components: [{name: web, type: nested, properties: {name: named}}]
  policies: [{name: o, type: override, properties: {components: [{properties: {a: {b: {c: v}}}}]}}]
`))
	admitted(t, appFromYAML(t, ns, `
metadata: {name: by-input}
spec:
  components: [{name: web, type: nested, properties: {name: named}}]
  workflow:
    steps:
    - name: src
      type: apply-object
      properties: {value: {apiVersion: v1, kind: ConfigMap, metadata: {name: src}, data: {v: x}}}
      outputs: [{name: v, valueFrom: output.value.data.v}]
    - {name: web, type: apply-component, properties: {component: web}, inputs: [{from: v, parameterKey: properties.a.b.c}]}
`))

	refused(t, appFromYAML(t, ns, `
metadata:
  name: both
  annotations: {app.oam.dev/autoUpdate: "true", app.oam.dev/publishVersion: v1}
spec: {components: [{name: web, type: test-config, properties: {name: both}}]}
`), "metadata.annotations", "Application has both autoUpdate and publishVersion annotations. Only one can be present")

	// An update that adds the second annotation alone, spec unchanged.
	app := controllertest.CreateApp(t, ns, `
metadata:
  name: pinned
  annotations: {app.oam.dev/publishVersion: v1}
spec: {components: [{name: web, type: test-config, properties: {name: pinned}}]}
`)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"app.oam.dev/autoUpdate":"true"}}}`))
	err := controllertest.Client(t).Patch(ctx, app, patch)
	if err == nil || !strings.Contains(err.Error(), "Only one can be present") {
		t.Fatalf("adding autoUpdate beside publishVersion: %v, want refused", err)
	}

	refused(t, appFromYAML(t, ns, `
metadata: {name: no-such-version}
spec: {components: [{name: web, type: test-config@v9.9.9, properties: {name: x}}]}
`), "spec.components[0].type", "test-config@v9.9.9")
}

// A definition KubeVela's webhook refuses is refused by Steward's: its
// outputs name a kind the cluster does not have or a malformed
// apiVersion, it names both spec.version and the revision-name
// annotation, or (a ComponentDefinition) its workload.type and
// workload.definition disagree. A kind the cluster serves at another
// version only is admitted with a warning.
func TestAdmission_RefusesDefinitionsKubeVelaRefuses(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, admissionOptions(t))
	waitAdmission(t, ns)
	ctx := context.Background()
	cm := v1beta1.WorkloadTypeDescriptor{Definition: v1beta1.WorkloadGVK{APIVersion: "v1", Kind: "ConfigMap"}}

	refused(t, cueDefinition(ns, "no-such-kind", `
output: {apiVersion: "example.com/v1", kind: "Widget", metadata: name: context.name}
`, v1beta1.WorkloadTypeDescriptor{Type: AutoDetect}), "spec.schematic.cue.template", "resource type not found on cluster: example.com/v1/Widget")
	refused(t, traitDefinition(ns, "no-such-kind", `
outputs: widget: {apiVersion: "example.com/v1", kind: "Widget", metadata: name: context.name}
`), "spec.schematic.cue.template", "outputs.widget: resource type not found on cluster: example.com/v1/Widget")
	refused(t, traitDefinition(ns, "malformed", `
outputs: svc: {apiVersion: "apps/v1/extra", kind: "Deployment", metadata: name: context.name}
`), "spec.schematic.cue.template", `malformed apiVersion "apps/v1/extra"`)

	c, seen := warningClient(t)
	old := traitDefinition(ns, "old-ingress", `
outputs: ingress: {apiVersion: "networking.k8s.io/v1beta1", kind: "Ingress", metadata: name: context.name}
`)
	if err := c.Create(ctx, old, client.DryRunAll); err != nil {
		t.Fatalf("a definition outputting a removed version was refused: %v", err)
	}
	if w := strings.Join(seen.take(), " "); !strings.Contains(w, "networking.k8s.io/v1beta1/Ingress is not served by this cluster (it serves networking.k8s.io/v1 Ingress)") {
		t.Fatalf("warnings %q, want one saying the version is not served", w)
	}

	both := controllertest.VersionedDefinition(ns, "both", "one", "")
	both.Spec.Version = "1.0.0"
	both.Annotations = map[string]string{v1beta1.AnnotationDefinitionRevisionName: "1"}
	refused(t, both, "spec.version", "ComponentDefinition has both spec.version and revision name annotation. Only one can be present")
	// An update that adds the annotation alone, spec unchanged.
	versioned := controllertest.VersionedDefinition(ns, "versioned", "one", "")
	versioned.Spec.Version = "1.0.0"
	if err := controllertest.Client(t).Create(ctx, versioned); err != nil {
		t.Fatal(err)
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"definitionrevision.oam.dev/name":"1"}}}`))
	if err := controllertest.Client(t).Patch(ctx, versioned, patch); err == nil || !strings.Contains(err.Error(), "Only one can be present") {
		t.Fatalf("adding the revision-name annotation beside spec.version: %v, want refused", err)
	}

	mismatch := controllertest.VersionedDefinition(ns, "mismatch", "one", "")
	mismatch.Spec.Workload = v1beta1.WorkloadTypeDescriptor{Type: "deployments.apps", Definition: v1beta1.WorkloadGVK{APIVersion: "v1", Kind: "ConfigMap"}}
	refused(t, mismatch, "spec.workload.type", "the type and the definition of the workload field in ComponentDefinition mismatch should represent the same workload")
	unknownWorkload := controllertest.VersionedDefinition(ns, "unknown-workload", "one", "")
	unknownWorkload.Spec.Workload = v1beta1.WorkloadTypeDescriptor{Definition: v1beta1.WorkloadGVK{APIVersion: "example.com/v1", Kind: "Widget"}}
	refused(t, unknownWorkload, "spec.workload.definition", "example.com/v1 Widget")
	agree := controllertest.VersionedDefinition(ns, "agree", "one", "")
	agree.Spec.Workload = v1beta1.WorkloadTypeDescriptor{Type: "configmaps", Definition: cm.Definition}
	admitted(t, agree)
}

// AutoDetect is KubeVela's workload type of a definition naming none.
const AutoDetect = "autodetects.core.oam.dev"

// A WorkflowStepDefinition Steward cannot run (vela-core's
// collect-service-endpoints imports vela/query) is admitted with a
// warning; an Application whose workflow runs it is admitted too, warned,
// and its step fails with the reason in status.workflow.
func TestAdmission_StepStewardCannotRunFailsOnlyTheApplicationRunningIt(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, admissionOptions(t))
	waitAdmission(t, ns)
	controllertest.InstallPublishedSteps(t, ns, "collect-service-endpoints")

	c, seen := warningClient(t)
	app := appFromYAML(t, ns, `
metadata: {name: endpoints}
spec:
  components: [{name: web, type: test-config, properties: {name: endpoints}}]
  workflow:
    steps:
    - {name: deploy, type: deploy, properties: {policies: []}}
    - {name: endpoints, type: collect-service-endpoints}
`)
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatalf("an Application running a step Steward cannot run was refused: %v", err)
	}
	if w := strings.Join(seen.take(), " "); !strings.Contains(w, "collect-service-endpoints") || !strings.Contains(w, "vela/query") {
		t.Fatalf("warnings %q, want one naming the step and the package", w)
	}
	controllertest.Eventually(t, 60*time.Second, "the step failing with its reason", func() error {
		got := controllertest.GetApp(t, ns, "endpoints")
		if got.Status.Workflow == nil {
			return controllertest.ErrNotYet
		}
		for _, s := range got.Status.Workflow.Steps {
			if s.Name == "endpoints" && s.Phase == v1beta1.WorkflowStepFailed && strings.Contains(s.Message, "vela/query") {
				t.Logf("step %s: %s: %s", s.Name, s.Reason, s.Message)
				return nil
			}
		}
		return controllertest.ErrNotYet
	})
}

// A ComponentDefinition's workload.type is filled as KubeVela's mutating
// webhook fills it: from workload.definition (deployments.apps,
// configmaps for a core kind), autodetects.core.oam.dev when both are
// empty; a type given is kept.
func TestAdmission_DefaultsTheWorkloadType(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, admissionOptions(t))
	waitAdmission(t, ns)
	ctx := context.Background()
	c := controllertest.Client(t)
	stored := func(name string, w v1beta1.WorkloadTypeDescriptor) string {
		t.Helper()
		cd := controllertest.VersionedDefinition(ns, name, "one", "")
		cd.Spec.Workload = w
		if err := c.Create(ctx, cd, client.DryRunAll); err != nil {
			t.Fatalf("%s refused: %v", name, err)
		}
		return cd.Spec.Workload.Type
	}
	deployment := v1beta1.WorkloadTypeDescriptor{Definition: v1beta1.WorkloadGVK{APIVersion: "apps/v1", Kind: "Deployment"}}
	// The mutating webhook answers once its configuration holds the CA.
	controllertest.Eventually(t, 60*time.Second, "the workload type defaulted", func() error {
		if stored("probe", deployment) == "" {
			return controllertest.ErrNotYet
		}
		return nil
	})
	for _, tc := range []struct {
		name string
		w    v1beta1.WorkloadTypeDescriptor
		want string
	}{
		{"deployment", deployment, "deployments.apps"},
		{"configmap", v1beta1.WorkloadTypeDescriptor{Definition: v1beta1.WorkloadGVK{APIVersion: "v1", Kind: "ConfigMap"}}, "configmaps"},
		{"none", v1beta1.WorkloadTypeDescriptor{}, AutoDetect},
		{"given", v1beta1.WorkloadTypeDescriptor{Type: "statefulsets.apps"}, "statefulsets.apps"},
	} {
		if got := stored(tc.name, tc.w); got != tc.want {
			t.Errorf("%s: workload.type %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A pinned version that does not exist is refused, unless the
// Application has app.oam.dev/autoUpdate, under which the newest revision
// in the range is taken (KubeVela: "use latest version in specified
// range").
func TestAdmission_PinnedVersionWithAutoUpdateTakesTheRange(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, admissionOptions(t))
	waitAdmission(t, ns)
	def := controllertest.VersionedDefinition(ns, "ranged", "one", "")
	def.Spec.Version = "1.2.5"
	if err := controllertest.Client(t).Create(context.Background(), def); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 30*time.Second, "the revision ranged-v1.2.5", func() error {
		rev := &v1beta1.DefinitionRevision{}
		return controllertest.Client(t).Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ranged-v1.2.5"}, rev)
	})
	refused(t, appFromYAML(t, ns, `
metadata: {name: pinned}
spec: {components: [{name: web, type: ranged@v1.2, properties: {name: pinned}}]}
`), "spec.components[0].type", "ranged@v1.2")
	admitted(t, appFromYAML(t, ns, `
metadata:
  name: ranged
  annotations: {app.oam.dev/autoUpdate: "true"}
spec: {components: [{name: web, type: ranged@v1.2, properties: {name: ranged}}]}
`))
}
