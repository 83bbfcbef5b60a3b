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

func TestNormalize_OnlyKnownQuantityFields(t *testing.T) {
	limits := func() map[string]any { return map[string]any{"cpu": "0.5", "count": int64(1000)} }
	for _, tc := range []struct {
		name string
		obj  map[string]any
		at   []string
		want map[string]any
	}{{
		name: "custom resource is never rewritten",
		obj: map[string]any{"apiVersion": "example.com/v1", "kind": "Gizmo",
			"spec": map[string]any{"resources": map[string]any{"limits": limits()}}},
		at:   []string{"spec", "resources", "limits"},
		want: limits(),
	}, {
		name: "custom resource named like a built-in kind",
		obj: map[string]any{"apiVersion": "example.com/v1", "kind": "Deployment",
			"spec": map[string]any{"hard": limits()}},
		at:   []string{"spec", "hard"},
		want: limits(),
	}, {
		name: "CronJob pod template",
		obj: map[string]any{"apiVersion": "batch/v1", "kind": "CronJob",
			"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"resources": map[string]any{"limits": limits()}}}}}}}}},
		at:   []string{"spec", "jobTemplate", "spec", "template", "spec", "containers", "0", "resources", "limits"},
		want: map[string]any{"cpu": "500m", "count": "1k"},
	}, {
		name: "StatefulSet claim template",
		obj: map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet",
			"spec": map[string]any{"volumeClaimTemplates": []any{map[string]any{"spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1024Mi"}}}}}}},
		at:   []string{"spec", "volumeClaimTemplates", "0", "spec", "resources", "requests"},
		want: map[string]any{"storage": "1Gi"},
	}, {
		name: "ResourceQuota hard",
		obj:  map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "spec": map[string]any{"hard": map[string]any{"pods": int64(10), "requests.cpu": "0.5"}}},
		at:   []string{"spec", "hard"},
		want: map[string]any{"pods": "10", "requests.cpu": "500m"},
	}, {
		name: "LimitRange items",
		obj:  map[string]any{"apiVersion": "v1", "kind": "LimitRange", "spec": map[string]any{"limits": []any{map[string]any{"type": "Container", "max": map[string]any{"cpu": "2000m"}}}}},
		at:   []string{"spec", "limits", "0", "max"},
		want: map[string]any{"cpu": "2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := normalize(&unstructured.Unstructured{Object: tc.obj}).Object
			var v any = got
			for _, step := range tc.at {
				switch x := v.(type) {
				case map[string]any:
					v = x[step]
				case []any:
					v = x[0]
				}
			}
			if !reflect.DeepEqual(v, tc.want) {
				t.Errorf("%v = %#v, want %#v", tc.at, v, tc.want)
			}
		})
	}
}
