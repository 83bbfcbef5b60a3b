package application

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// gadgetGVK is a cluster-scoped custom resource whose CRD a test installs
// after the Application that renders it.
var gadgetGVK = schema.GroupVersionKind{Group: "scope.steward.dev", Version: "v1", Kind: "Gadget"}

const gadgetDefinition = `
apiVersion: core.oam.dev/v1beta1
kind: ComponentDefinition
metadata:
  name: test-gadget
spec:
  workload:
    definition: {apiVersion: scope.steward.dev/v1, kind: Gadget}
  schematic:
    cue:
      template: |
        output: {
          apiVersion: "scope.steward.dev/v1"
          kind:       "Gadget"
          metadata: name: context.name + "-" + context.namespace
          spec: size: 1
        }
`

func TestKindScope_FromTheTargetClusterNeverGuessed(t *testing.T) {
	ns := newNamespace(t)
	createFromYAML(t, ns, gadgetDefinition, &v1beta1.ComponentDefinition{})
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: gadget}\nspec: {components: [{name: gadget, type: test-gadget}]}\n")

	// The kind is not served: KindNotFound, and no key is recorded for it.
	msg := waitNotReady(t, ns, "gadget", v1beta1.ReasonKindNotFound)
	if !contains(msg, "Gadget") || !contains(msg, "CustomResourceDefinition") {
		t.Errorf("message %q does not name the kind and the fix", msg)
	}
	isGadget := func(e v1beta1.ManagedResource) bool { return e.Kind == "Gadget" }
	if anyEntry(t, ns, "gadget", isGadget) {
		t.Fatal("an entry was recorded for a kind whose scope is unknown")
	}

	// Once the CRD says the kind is cluster-scoped, the object is recorded
	// without a namespace and created.
	installCRD(t, testCfg, gadgetGVK, apiextensionsv1.ClusterScoped, apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)})
	waitReady(t, ns, "gadget")
	if _, err := getUnstructured(t, gadgetGVK, "", "gadget-"+ns); err != nil {
		t.Errorf("the cluster-scoped Gadget was not created: %v", err)
	}
	if anyEntry(t, ns, "gadget", func(e v1beta1.ManagedResource) bool { return isGadget(e) && e.Namespace != "" }) {
		t.Error("the Gadget is recorded with a namespace")
	}
	if !anyEntry(t, ns, "gadget", func(e v1beta1.ManagedResource) bool { return isGadget(e) && e.Namespace == "" }) {
		t.Error("the Gadget is not recorded")
	}
}

func ptrTo[T any](v T) *T { return &v }

// doohickeyGVK is a cluster-scoped custom resource served by a spoke and
// never by the hub.
var doohickeyGVK = schema.GroupVersionKind{Group: "spoke.steward.dev", Version: "v1", Kind: "Doohickey"}

func TestKindScope_FromTheSpokeAKindIsServedBy(t *testing.T) {
	ctx := context.Background()
	spoke, _ := joinedSpoke(t, "ks-a")
	installCRD(t, spoke.Config, doohickeyGVK, apiextensionsv1.ClusterScoped, apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)})

	ns := newNamespace(t)
	createFromYAML(t, ns, `
apiVersion: core.oam.dev/v1beta1
kind: ComponentDefinition
metadata:
  name: test-doohickey
spec:
  workload:
    definition: {apiVersion: spoke.steward.dev/v1, kind: Doohickey}
  schematic:
    cue:
      template: |
        output: {
          apiVersion: "spoke.steward.dev/v1"
          kind:       "Doohickey"
          metadata: name: context.name
          spec: size: 1
        }
`, &v1beta1.ComponentDefinition{})
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `
metadata: {name: gizmo}
spec:
  components:
    - {name: gizmo, type: test-doohickey}
  policies:
    - {name: where, type: topology, properties: {clusters: [ks-a], namespace: default}}
`)
	waitReady(t, ns, "gizmo")

	// The hub does not serve the kind; the spoke says it is cluster-scoped,
	// so it is recorded and created without a namespace.
	isDoohickey := func(e v1beta1.ManagedResource) bool { return e.Kind == "Doohickey" }
	if anyEntry(t, ns, "gizmo", func(e v1beta1.ManagedResource) bool { return isDoohickey(e) && e.Namespace != "" }) {
		t.Error("the cluster-scoped Doohickey is recorded with a namespace")
	}
	if !anyEntry(t, ns, "gizmo", func(e v1beta1.ManagedResource) bool {
		return isDoohickey(e) && e.Cluster == "ks-a" && e.Namespace == ""
	}) {
		t.Error("the Doohickey is not recorded for the spoke")
	}
	sc, err := spoke.Client(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(doohickeyGVK)
	if err := sc.Get(ctx, client.ObjectKey{Name: "gizmo"}, u); err != nil {
		t.Errorf("the Doohickey was not created in the spoke: %v", err)
	}
}
