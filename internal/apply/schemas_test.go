package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	sigsyaml "sigs.k8s.io/yaml"
)

const injectedDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, ports: [{containerPort: 80, protocol: TCP}], env: [{name: A, value: b}]}
      - {name: mesh-proxy, image: proxy:1}
      volumes: [{name: data, emptyDir: {}}]
`

func unstructuredOf(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// The schema kept for a kind types its objects exactly as client-go's
// whole schema does: the same fields, lists keyed the same way.
func TestKindTypes_CutSchemaTypesAsTheWholeOne(t *testing.T) {
	obj := unstructuredOf(t, injectedDeployment)
	cut := builtinTypes.typeOf(obj.GroupVersionKind())
	if cut == nil {
		t.Fatal("no type for apps/v1 Deployment")
	}
	all, err := typed.NewParser(builtinSchema)
	if err != nil {
		t.Fatal(err)
	}
	whole := all.Type("io.k8s.api.apps.v1.Deployment")
	want, err := whole.FromUnstructured(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cut.FromUnstructured(obj.Object)
	if err != nil {
		t.Fatalf("the cut schema does not type the Deployment: %v", err)
	}
	wf, _ := want.ToFieldSet()
	gf, _ := got.ToFieldSet()
	if !wf.Equals(gf) {
		t.Errorf("fields differ:\nwhole %s\ncut   %s", wf, gf)
	}
	if s := gf.String(); !strings.Contains(s, `"mesh-proxy"`) {
		t.Errorf("containers are not keyed by name: %s", s)
	}
}

// A container another manager injected is not drift: containers are
// keyed by name, so the manifest's container is compared alone.
func TestKindTypes_InjectedContainerIsNotDrift(t *testing.T) {
	live := unstructuredOf(t, injectedDeployment)
	desired := unstructuredOf(t, injectedDeployment)
	containers, _, _ := unstructured.NestedSlice(desired.Object, "spec", "template", "spec", "containers")
	_ = unstructured.SetNestedSlice(desired.Object, containers[:1], "spec", "template", "spec", "containers")
	if d := serverSideDrift(desired, live); len(d) != 0 {
		t.Errorf("drift %v, want none", d)
	}
}
