package controllertest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
)

// WebApp is the stories' usual Application "web" of the test definitions:
// a Deployment of three replicas, its ConfigMap web-config and a Service.
const WebApp = `
apiVersion: core.oam.dev/v1beta1
kind: Application
metadata:
  name: web
spec:
  components:
    - name: web
      type: test-worker
      properties:
        image: nginx:1.27
        greeting: hi
      traits:
        - type: test-replicas
          properties: {count: 3}
        - type: test-service
          properties: {port: 8080}
`

// V1Spec has a Service (test-service trait); V2Spec drops it and changes
// the image: the two versions of the stories about what a new version
// keeps, collects and repairs. Indent them under "spec:".
const (
	V1Spec = `
components:
  - name: web
    type: test-worker
    properties: {image: "nginx:1.26"}
    traits:
      - {type: test-service, properties: {port: 80}}
`
	V2Spec = `
components:
  - name: web
    type: test-worker
    properties: {image: "nginx:1.27"}
`
)

// Indent indents each line of a spec by two spaces, so that it reads under
// "spec:" ("metadata: {name: web}\nspec:" + Indent(V1Spec)).
func Indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if line != "" {
			b.WriteString("\n  " + line)
		}
	}
	return b.String()
}

// ObjectsApp is an Application of k8s-objects components, one per object,
// acting as serviceAccount when it is not empty (InstallBuiltinDefinitions
// installs k8s-objects).
func ObjectsApp(name, serviceAccount string, objects ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "metadata:\n  name: %s\n", name)
	if serviceAccount != "" {
		fmt.Fprintf(&b, "  annotations: {%s: %s}\n", v1beta1.AnnotationServiceAccountName, serviceAccount)
	}
	b.WriteString("spec:\n  components:\n")
	for i, obj := range objects {
		fmt.Fprintf(&b, "    - {name: c%d, type: k8s-objects, properties: {objects: [%s]}}\n", i, obj)
	}
	return b.String()
}

// ConfigMapIn is a ConfigMap ns/name, as one object of ObjectsApp.
func ConfigMapIn(ns, name string) string {
	return fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s}, data: {k: v}}", name, ns)
}

// SetSpec replaces the Application's spec and adds annotations, retrying
// on conflicts with the controller's own writes.
func SetSpec(t testing.TB, ns, name, spec string, annotations map[string]string) {
	t.Helper()
	c := Client(t)
	Eventually(t, 10*time.Second, "updating "+name, func() error {
		app := GetApp(t, ns, name)
		app.Spec = v1beta1.ApplicationSpec{}
		if err := yaml.Unmarshal([]byte(spec), &app.Spec); err != nil {
			t.Fatal(err)
		}
		for k, v := range annotations {
			if app.Annotations == nil {
				app.Annotations = map[string]string{}
			}
			app.Annotations[k] = v
		}
		return c.Update(context.Background(), app)
	})
}

// DeleteApp deletes an Application and waits until it is gone, its
// finalizer run by the test's manager.
func DeleteApp(t testing.TB, ns, name string) {
	t.Helper()
	c := Client(t)
	ctx := context.Background()
	if err := c.Delete(ctx, GetApp(t, ns, name)); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 20*time.Second, name+" deleted", func() error {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1beta1.Application{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return ErrNotYet
	})
}

// ForceDelete deletes an Application with its finalizers removed by hand,
// so that Steward's finalizer never runs and its trackers stay behind, and
// waits until it is gone.
func ForceDelete(t testing.TB, ns, name string) {
	t.Helper()
	c := Client(t)
	ctx := context.Background()
	live := GetApp(t, ns, name)
	live.Finalizers = nil
	if err := c.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, live); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "the old app gone", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(live), &v1beta1.Application{}); !apierrors.IsNotFound(err) {
			return ErrNotYet
		}
		return nil
	})
}

// MakeClientSideApplied rewrites ConfigMap ns/name as KubeVela (or a
// client-side Steward) leaves it: its last-applied annotation holds the
// object plus data[stale], set live too, by KubeVela's field manager.
// Steward must upgrade such an object in place: the field and the
// annotation go, the UID stays. Errors of the read and the write are
// returned as they are.
func MakeClientSideApplied(ctx context.Context, c client.Client, ns, name, stale string) error {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		return err
	}
	data := maps.Clone(cm.Data)
	if data == nil {
		data = map[string]string{}
	}
	data[stale] = "left by a client-side apply"
	last, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": cm.Name, "namespace": cm.Namespace, "labels": cm.Labels}, "data": data})
	if err != nil {
		return err
	}
	cm.Data = data
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[v1beta1.AnnotationLastApplied] = string(last)
	return c.Update(ctx, cm, client.FieldOwner("kubevela"))
}
