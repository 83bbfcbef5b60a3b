package application

import (
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// gizmoDefinition renders a Gizmo with an integer limit and a string
// request that look like quantities, next to a Deployment whose CPU limit
// the API server stores in another form ("1000m" as "1").
const gizmoDefinition = `
apiVersion: core.oam.dev/v1beta1
kind: ComponentDefinition
metadata:
  name: test-gizmo
spec:
  workload:
    definition: {apiVersion: quota.steward.dev/v1, kind: Gizmo}
  schematic:
    cue:
      template: |
        output: {
          apiVersion: "quota.steward.dev/v1"
          kind:       "Gizmo"
          metadata: name: context.name
          spec: resources: {
            limits: count: parameter.count
            requests: memory: "1000"
          }
        }
        outputs: worker: {
          apiVersion: "apps/v1"
          kind:       "Deployment"
          metadata: name: context.name
          spec: {
            selector: matchLabels: app: context.name
            template: {
              metadata: labels: app: context.name
              spec: containers: [{name: "main", image: "nginx", resources: limits: cpu: "1000m"}]
            }
          }
        }
        parameter: count: *1000 | int
`

func TestNormalize_CustomResourceIsNeitherRewrittenNorRejected(t *testing.T) {
	ns := newNamespace(t)
	installCRD(t, testCfg, gizmoGVK, apiextensionsv1.NamespaceScoped, gizmoSchema)
	createFromYAML(t, ns, gizmoDefinition, &v1beta1.ComponentDefinition{})
	log := &requestLog{}
	opts := testOptions()
	opts.ReSyncPeriod = time.Hour // the test drives every pass itself
	startManager(t, log.wrap(testCfg), opts)
	createApp(t, ns, "metadata: {name: gizmo}\nspec: {components: [{name: gizmo, type: test-gizmo}]}\n")
	waitReady(t, ns, "gizmo")

	g, err := getUnstructured(t, gizmoGVK, ns, "gizmo")
	if err != nil {
		t.Fatal(err)
	}
	count, _, _ := unstructured.NestedFieldNoCopy(g.Object, "spec", "resources", "limits", "count")
	memory, _, _ := unstructured.NestedFieldNoCopy(g.Object, "spec", "resources", "requests", "memory")
	if count != int64(1000) || memory != "1000" {
		t.Errorf("the Gizmo was rewritten: count %#v, memory %#v; want 1000 and \"1000\"", count, memory)
	}

	// Re-synced passes find nothing to change: neither the Gizmo nor the
	// Deployment (whose "1000m" the server stores as "1") is patched.
	time.Sleep(2 * time.Second) // let the dispatch's own aftermath settle
	log.reset()
	for i := range 3 {
		pokeAndWaitPass(t, ns, "gizmo", i)
	}
	for _, w := range log.writes() {
		if strings.Contains(w, "/gizmos/") || strings.Contains(w, "/deployments/") {
			t.Errorf("a steady-state pass wrote %s", w)
		}
	}
	for _, e := range appEvents(t, ns, "gizmo") {
		if e.Reason == v1beta1.EventDriftRepaired {
			t.Errorf("drift reported in a steady state: %s", e.Note)
		}
	}
}

// pokeAndWaitPass wakes an Application with an annotation change, which
// Steward reconciles on, and waits for the pass to finish.
func pokeAndWaitPass(t *testing.T, ns, name string, i int) {
	t.Helper()
	controllertest.PokeAndWaitPass(t, ns, name, i)
}
