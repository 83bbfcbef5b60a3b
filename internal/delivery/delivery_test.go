package delivery_test

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/render"
)

// config renders a ConfigMap and, with cluster-role: true, a ClusterRole.
const config = `
apiVersion: core.oam.dev/v1beta1
kind: ComponentDefinition
metadata: {name: config}
spec:
  schematic:
    cue:
      template: |
        output: {
          apiVersion: "v1"
          kind:       "ConfigMap"
          metadata: name: context.name
          data: v:       parameter.v
        }
        if parameter["cluster-role"] {
          outputs: role: {
            apiVersion: "rbac.authorization.k8s.io/v1"
            kind:       "ClusterRole"
            metadata: {name: context.name, namespace: "ignored"}
          }
        }
        parameter: {v: *"one" | string, "cluster-role": *false | bool}
`

func definitions(t *testing.T) func(*v1beta1.Application) (render.Definitions, error) {
	t.Helper()
	def := &v1beta1.ComponentDefinition{}
	if err := yaml.Unmarshal([]byte(config), def); err != nil {
		t.Fatal(err)
	}
	return func(*v1beta1.Application) (render.Definitions, error) {
		return render.Definitions{Components: map[string]*v1beta1.ComponentDefinition{"config": def}}, nil
	}
}

func application(t *testing.T, spec string) *v1beta1.Application {
	t.Helper()
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team"}}
	if err := yaml.Unmarshal([]byte(spec), &app.Spec); err != nil {
		t.Fatal(err)
	}
	return app
}

// Clusters are named by placements; kinds outside rbac are namespaced.
func scope(_ string, obj *unstructured.Unstructured) (bool, error) {
	return obj.GetKind() != "ClusterRole", nil
}

func TestObjects_PlacesOverriddenComponentsInDependencyOrderWithOwnership(t *testing.T) {
	app := application(t, `
components:
  - {name: front, type: config, dependsOn: [back], properties: {cluster-role: true}}
  - {name: back, type: config}
policies:
  - {name: eu, type: topology, properties: {clusters: [eu-1], namespace: prod}}
  - {name: v2, type: override, properties: {components: [{name: back, properties: {v: two}}]}}
workflow:
  steps:
    - {name: eu, type: deploy, properties: {policies: [eu, v2]}}
`)
	steps, err := placement.Resolve(app, []placement.Cluster{{Name: "eu-1"}})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := delivery.Objects(app, steps, delivery.Input{Definitions: definitions(t), Namespaced: scope})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.Key().String()+" v="+o.Object.GetLabels()[v1beta1.LabelAppComponent]+"/"+strings.TrimSpace(dataV(o.Object)))
		if l := o.Object.GetLabels(); l[v1beta1.LabelAppName] != "shop" || l[v1beta1.LabelAppNamespace] != "team" {
			t.Errorf("%s: ownership labels %v, want the Application's name and own namespace", o.Key(), l)
		}
	}
	want := []string{
		"ConfigMap prod/back (cluster eu-1) v=back/two",
		"ConfigMap prod/front (cluster eu-1) v=front/one",
		"ClusterRole.rbac.authorization.k8s.io front (cluster eu-1) v=front/",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("objects:\n%s\nwant (back first: front depends on it; the override reaches back; the placement's namespace; no namespace on a cluster-scoped kind):\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func dataV(obj *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(obj.Object, "data", "v")
	return v
}

func TestObjects_SaysWhatFailed(t *testing.T) {
	app := application(t, `components: [{name: a, type: config}, {name: b, type: config}]`)
	steps, err := placement.Resolve(app, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = delivery.Objects(app, steps, delivery.Input{Definitions: func(*v1beta1.Application) (render.Definitions, error) {
		return render.Definitions{}, errors.New("cache not synced")
	}})
	if !errors.As(err, new(*delivery.DefinitionsError)) {
		t.Errorf("definitions failing: %v, want a *DefinitionsError", err)
	}
	_, err = delivery.Objects(app, steps, delivery.Input{Definitions: definitions(t),
		Namespaced: func(string, *unstructured.Unstructured) (bool, error) { return false, errors.New("no route to host") }})
	if !errors.As(err, new(*delivery.ScopeError)) || !strings.Contains(err.Error(), `component "a"`) {
		t.Errorf("scope failing: %v, want a *ScopeError naming the component", err)
	}

	// Two deploy steps place the same component in the same cluster.
	twice := application(t, `
components: [{name: a, type: config}]
policies:
  - {name: eu, type: topology, properties: {clusters: [eu-1]}}
workflow:
  steps:
    - {name: first, type: deploy, properties: {policies: [eu]}}
    - {name: again, type: deploy, properties: {policies: [eu]}}
`)
	steps, err = placement.Resolve(twice, []placement.Cluster{{Name: "eu-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := delivery.Objects(twice, steps, delivery.Input{Definitions: definitions(t), Namespaced: scope}); err == nil || !strings.Contains(err.Error(), "each object must come from one place") {
		t.Errorf("an object rendered twice: %v, want it refused", err)
	}
}

// The cluster registry is read when a step names a cluster, not only for
// topology policies: an apply-component or apply-object step to a spoke
// is placed there.
func TestUsesTopology(t *testing.T) {
	for wf, want := range map[string]bool{
		`{steps: [{name: a, type: apply-component, properties: {component: web}}]}`:                                            false,
		`{steps: [{name: a, type: apply-component, properties: {component: web, cluster: local}}]}`:                            false,
		`{steps: [{name: a, type: apply-component, properties: {component: web, cluster: eu-1}}]}`:                             true,
		`{steps: [{name: a, type: apply-object, properties: {value: {kind: x}, cluster: eu-1}}]}`:                              true,
		`{steps: [{name: a, type: deploy, properties: {inlinePolicies: [{type: topology, properties: {clusters: [eu-1]}}]}}]}`: true,
	} {
		app := &v1beta1.Application{}
		if err := yaml.Unmarshal([]byte("spec: {workflow: "+wf+"}"), app); err != nil {
			t.Fatal(err)
		}
		if got := delivery.UsesTopology(app); got != want {
			t.Errorf("%s: UsesTopology = %v, want %v", wf, got, want)
		}
	}
}
