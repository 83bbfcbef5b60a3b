package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
)

// fakeApp is the controller's side of vela/kube's actions: the hub's
// client, counting what is sent through it; the objects the
// Application's trackers record; and what its steps applied.
type fakeApp struct {
	c        *countingClient
	managed  map[string]bool
	recorded []*unstructured.Unstructured
}

type countingClient struct {
	client.Client
	sent int
}

func (c *countingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.sent++
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *countingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.sent++
	return c.Client.List(ctx, list, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.sent++
	return c.Client.Delete(ctx, obj, opts...)
}

func (a *fakeApp) Client(context.Context, string) (client.Client, error) { return a.c, nil }

func (a *fakeApp) Namespaced(_ context.Context, _ string, obj *unstructured.Unstructured) (bool, error) {
	return a.c.IsObjectNamespaced(obj)
}

func (a *fakeApp) Manages(_ string, obj *unstructured.Unstructured) bool {
	return a.managed[obj.GetNamespace()+"/"+obj.GetName()]
}

func (a *fakeApp) Apply(_ context.Context, _ string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	a.recorded = append(a.recorded, obj)
	return nil, fmt.Errorf("%w: %s recorded, to be applied", ErrPending, obj.GetName())
}

func kubeEnv(t *testing.T, objs ...client.Object) (*Env, *fakeApp) {
	t.Helper()
	env := testEnv(t, objs...)
	return env, &fakeApp{c: &countingClient{Client: env.Client}, managed: map[string]bool{}}
}

func doKube(t *testing.T, env *Env, app *fakeApp, do string, params any) (map[string]any, error) {
	t.Helper()
	out, err := Kube(app).Do(context.Background(), env, Call{Provider: "kube", Do: do, Params: mustJSON(t, params)})
	if err != nil || out == nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("returns %s: %v", out, err)
	}
	return m, nil
}

func configMap(namespace, name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}}
}

func cmValue(namespace, name string) map[string]any {
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}
}

// A confined Application's kube actions are refused, for the object's
// namespace or kind, before any request is sent.
func TestKube_HoldsTheBoundaryBeforeAnythingIsSent(t *testing.T) {
	env, app := kubeEnv(t, configMap("team-b", "victim", nil))
	env.Boundary = boundary.Boundary{Namespace: "team-a", Confined: true}
	for name, tc := range map[string]struct {
		do     string
		params map[string]any
		reason string
	}{
		"read in another namespace":   {"read", map[string]any{"value": cmValue("team-b", "victim")}, v1beta1.ReasonCrossNamespaceObject},
		"read of a default namespace": {"read", map[string]any{"value": cmValue("", "victim")}, v1beta1.ReasonCrossNamespaceObject},
		"patch in another namespace":  {"patch", map[string]any{"value": cmValue("team-b", "victim"), "patch": map[string]any{}}, v1beta1.ReasonCrossNamespaceObject},
		"delete in another namespace": {"delete", map[string]any{"value": cmValue("team-b", "victim")}, v1beta1.ReasonCrossNamespaceObject},
		"delete by filter elsewhere": {"delete", map[string]any{"value": cmValue("", ""), "filter": map[string]any{"namespace": "team-b"}},
			v1beta1.ReasonCrossNamespaceObject},
		"list of every namespace": {"list", map[string]any{"resource": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}},
			v1beta1.ReasonCrossNamespaceObject},
		"list of a cluster-scoped kind": {"list", map[string]any{"resource": map[string]any{"apiVersion": "v1", "kind": "Namespace"}},
			v1beta1.ReasonClusterScopedObject},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := doKube(t, env, app, tc.do, tc.params)
			var refused *RefusedError
			if be := boundary.As(err); be == nil || be.Reason != tc.reason || !errors.As(err, &refused) {
				t.Fatalf("want %s, refused for good; got %v", tc.reason, err)
			}
			if app.c.sent != 0 {
				t.Fatalf("%d requests sent before the refusal", app.c.sent)
			}
		})
	}
	if _, err := doKube(t, env, app, "read", map[string]any{"value": cmValue("team-a", "missing")}); err != nil {
		t.Fatalf("its own namespace: %v", err)
	}
}

// A step deletes neither what its Application manages (its trackers
// record it) nor what another Application owns: one such object named is refused, a filter leaves
// them.
func TestKube_DeleteLeavesWhatApplicationsManage(t *testing.T) {
	own := map[string]string{v1beta1.LabelAppName: "app", v1beta1.LabelAppNamespace: "team-a", "sel": "x"}
	env, app := kubeEnv(t,
		configMap("team-a", "managed", map[string]string{"sel": "x"}),
		configMap("team-a", "theirs", map[string]string{"sel": "x", v1beta1.LabelAppName: "shop", v1beta1.LabelAppNamespace: "team-b"}),
		configMap("team-a", "labelled", own),
		configMap("team-a", "free", map[string]string{"sel": "x"}))
	app.managed["team-a/managed"] = true

	for name, want := range map[string]string{"managed": "managed by this Application", "theirs": "belongs to Application team-b/shop"} {
		_, err := doKube(t, env, app, "delete", map[string]any{"value": cmValue("team-a", name)})
		var refused *RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), want) {
			t.Errorf("delete %s: want refused (%s), got %v", name, want, err)
		}
	}
	if _, err := doKube(t, env, app, "delete", map[string]any{"value": cmValue("team-a", "gone")}); err != nil {
		t.Errorf("an object already gone: %v", err)
	}
	if _, err := doKube(t, env, app, "delete", map[string]any{"value": cmValue("", ""),
		"filter": map[string]any{"namespace": "team-a", "matchingLabels": map[string]string{"sel": "x"}}}); err != nil {
		t.Fatalf("delete by filter: %v", err)
	}
	left, err := doKube(t, env, app, "list", map[string]any{"resource": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
		"filter": map[string]any{"namespace": "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, item := range left["values"].(map[string]any)["items"].([]any) {
		names = append(names, item.(map[string]any)["metadata"].(map[string]any)["name"].(string))
	}
	// An object with this Application's labels that no tracker records
	// is not managed: the filter deletes it.
	if got := strings.Join(names, ","); got != "managed,theirs" {
		t.Fatalf("left %s, want managed,theirs", got)
	}
}

// Applies and patches are handed to the Application to record, never
// sent: the action is pending until they are applied.
func TestKube_AppliesAreRecordedNotSent(t *testing.T) {
	env, app := kubeEnv(t, configMap("team-a", "cm", map[string]string{"a": "b"}))
	_, err := doKube(t, env, app, "apply", map[string]any{"value": cmValue("", "new"), "patch": map[string]any{"data": map[string]any{"k": "v"}}})
	if !errors.Is(err, ErrPending) || len(app.recorded) != 1 || app.recorded[0].Object["data"].(map[string]any)["k"] != "v" {
		t.Fatalf("apply: %v, recorded %v", err, app.recorded)
	}
	_, err = doKube(t, env, app, "apply-in-parallel", map[string]any{"value": []any{cmValue("", "x"), cmValue("", "y")}})
	if !errors.Is(err, ErrPending) || len(app.recorded) != 3 {
		t.Fatalf("apply-in-parallel: %v, recorded %d", err, len(app.recorded))
	}
	_, err = doKube(t, env, app, "patch", map[string]any{"value": cmValue("", "cm"), "patch": map[string]any{"metadata": map[string]any{"labels": map[string]any{"c": "d"}}}})
	if !errors.Is(err, ErrPending) || len(app.recorded) != 4 {
		t.Fatalf("patch: %v", err)
	}
	patched := app.recorded[3]
	if patched.GetNamespace() != "team-a" || patched.GetLabels()["a"] != "b" || patched.GetLabels()["c"] != "d" || patched.GetResourceVersion() != "" {
		t.Fatalf("patch recorded %v: want the live object, cleaned, with the patch merged", patched.Object)
	}
}
