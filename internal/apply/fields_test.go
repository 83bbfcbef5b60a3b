package apply

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestKeepLiveFields(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"replicas": int64(7),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "nginx:hand-edited"},
			}}},
		},
	}}
	desired := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"replicas": int64(2),
			"paused":   true,
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "nginx:1.27"},
			}}},
		},
	}}
	keepLiveFields(desired, live, []string{"spec.replicas", "spec.template.spec.containers[0].image", "spec.paused", "spec.missing.deep"})
	want := map[string]any{
		"spec": map[string]any{
			"replicas": int64(7),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "nginx:hand-edited"},
			}}},
		},
	}
	if !reflect.DeepEqual(desired.Object, want) {
		t.Errorf("got %v\nwant %v", desired.Object, want)
	}
}

func TestParsePath(t *testing.T) {
	got := parsePath("a.b[2][0].c")
	want := []step{{key: "a"}, {key: "b"}, {index: 2, isIdx: true}, {index: 0, isIdx: true}, {key: "c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	if parsePath("a[x]") != nil {
		t.Error("a bad index should give no path")
	}
}
