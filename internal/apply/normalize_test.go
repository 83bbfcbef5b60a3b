package apply

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestNormalize_StoresValuesAsTheServerDoes(t *testing.T) {
	dep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "a", "resources": map[string]any{
				"limits":   map[string]any{"cpu": "0.5", "memory": "1024Mi"},
				"requests": map[string]any{"cpu": int64(1), "memory": float64(0.25)},
			}},
		}}}},
	}}
	got := normalize(dep)
	res := got.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"]
	want := map[string]any{
		"limits":   map[string]any{"cpu": "500m", "memory": "1Gi"},
		"requests": map[string]any{"cpu": "1", "memory": "250m"},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("resources = %v, want %v", res, want)
	}
	if dep.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)["cpu"] != "0.5" {
		t.Error("normalize changed its input")
	}

	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"data":       map[string]any{"a": "YQ=="},
		"stringData": map[string]any{"b": "bee"},
	}}
	got = normalize(secret)
	if _, ok := got.Object["stringData"]; ok || !reflect.DeepEqual(got.Object["data"], map[string]any{"a": "YQ==", "b": "YmVl"}) {
		t.Errorf("secret = %v", got.Object)
	}
}
