package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The views KubeVela's CLI and VelaUX query, by the names KubeVela's chart
// gives them (charts/vela-core/templates/velaql at v1.9.13).
var kubevelaViews = []string{
	"application-resource-tree-view", "application-revision-view", "component-pod-view",
	"component-service-view", "service-applied-resources-view", "service-endpoints-view",
}

// TestChart_KubeVelaToolsInVelaSystem: by default the chart installs, in
// vela-system whatever the release namespace, KubeVela's six query views
// as config/kubevela has them and the Deployment `vela addon enable` reads
// the KubeVela version from (label controller.oam.dev/name=vela-core,
// container kubevela, tag kubevelaTools.version, zero replicas); it
// creates vela-system when nothing else does, and renders none of it with
// kubevelaTools.enabled=false.
func TestChart_KubeVelaToolsInVelaSystem(t *testing.T) {
	helm(t)
	objs := render(t, "--set", "kubevelaTools.enabled=true,kubevelaTools.version=v1.10.4")
	var views []string
	for _, cm := range find(objs, "ConfigMap") {
		if cm.GetNamespace() != "vela-system" {
			continue
		}
		views = append(views, cm.GetName())
		want := readKubeVelaObject(t, "ConfigMap", cm.GetName())
		if !reflect.DeepEqual(cm.Object["data"], want.Object["data"]) {
			t.Errorf("view %s: data differs from config/kubevela", cm.GetName())
		}
	}
	slices.Sort(views)
	if !slices.Equal(views, kubevelaViews) {
		t.Errorf("views in vela-system %v, want %v", views, kubevelaViews)
	}

	var marker *unstructured.Unstructured
	for _, d := range find(objs, "Deployment") {
		if d.GetLabels()["controller.oam.dev/name"] == "vela-core" {
			if marker != nil {
				t.Fatalf("two Deployments labelled controller.oam.dev/name=vela-core")
			}
			marker = d
		}
	}
	if marker == nil || marker.GetNamespace() != "vela-system" {
		t.Fatalf("no Deployment labelled controller.oam.dev/name=vela-core in vela-system: %v", marker)
	}
	replicas, _, _ := unstructured.NestedInt64(marker.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(marker.Object, "spec", "template", "spec", "containers")
	if replicas != 0 || len(containers) != 1 {
		t.Fatalf("marker: %d replicas, %d containers; want 0 and 1", replicas, len(containers))
	}
	c := containers[0].(map[string]any)
	if c["name"] != "kubevela" || !strings.HasSuffix(c["image"].(string), ".invalid/vela-core:v1.10.4") {
		t.Errorf("marker container %v %v, want kubevela with an unpullable image tagged v1.10.4", c["name"], c["image"])
	}

	namespaces := findNamed(objs, "Namespace", "vela-system")
	if namespaces == nil {
		t.Errorf("release namespace %s: vela-system not created", releaseNamespace)
	}
	objs = render(t, "--set", "kubevelaTools.enabled=true,systemDefinitionNamespace=vela-system", "--namespace", "vela-system")
	if n := len(find(objs, "Namespace")); n != 0 {
		t.Errorf("released into vela-system: %d Namespaces rendered, want none", n)
	}

	objs = render(t)
	for _, o := range objs {
		if o.GetNamespace() == "vela-system" && (o.GetKind() == "ConfigMap" || o.GetKind() == "Deployment") {
			t.Errorf("kubevelaTools.enabled=false rendered %s %s", o.GetKind(), o.GetName())
		}
	}
}

// readKubeVelaObject finds an object of config/kubevela by kind and name.
func readKubeVelaObject(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "config", "kubevela", "*.yaml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeObjects(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if o := findNamed(objs, kind, name); o != nil {
			return o
		}
	}
	t.Fatalf("config/kubevela has no %s %s", kind, name)
	return nil
}
