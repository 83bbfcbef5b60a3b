package application

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// gizmoGVK is a custom resource of the tests whose spec.resources carries
// an integer and a string under limits and requests, the names built-in
// kinds use for quantities.
var gizmoGVK = schema.GroupVersionKind{Group: "quota.steward.dev", Version: "v1", Kind: "Gizmo"}

// installCRD installs (or updates) on the cluster behind cfg a
// CustomResourceDefinition serving gvk with the given scope and spec schema, and waits until it is served.
func installCRD(t *testing.T, cfg *rest.Config, gvk schema.GroupVersionKind, scope apiextensionsv1.ResourceScope, spec apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	plural := lowerPlural(gvk.Kind)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + gvk.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gvk.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: plural[:len(plural)-1], Kind: gvk.Kind, ListKind: gvk.Kind + "List"},
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: gvk.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
				}},
			}},
		},
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		t.Fatalf("installing CRD %s: %v", crd.Name, err)
	}
}

func lowerPlural(kind string) string {
	b := []byte(kind)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b) + "s"
}

// gizmoSchema has spec.resources.limits.count an integer and
// spec.resources.requests.memory a string.
var gizmoSchema = apiextensionsv1.JSONSchemaProps{
	Type: "object",
	Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"resources": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"limits":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"count": {Type: "integer"}}},
			"requests": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"memory": {Type: "string"}}},
		}},
	},
}

func getUnstructured(t *testing.T, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	return u, err
}
