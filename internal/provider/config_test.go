package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
)

func doConfig(t *testing.T, env *Env, do string, params any) (map[string]any, error) {
	t.Helper()
	out, err := Config().Do(context.Background(), env, Call{Provider: "config", Do: do, Params: mustJSON(t, params)})
	if err != nil || out == nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("returns %s: %v", out, err)
	}
	return m, nil
}

// kubeVelaConfig is a config Secret as KubeVela writes one from a template.
func kubeVelaConfig(name, template, props string, sensitive bool) *corev1.Secret {
	s := "false"
	if sensitive {
		s = "true"
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "team-a",
			Labels: map[string]string{ConfigLabelCatalog: ConfigCatalogValue, ConfigLabelType: template, "config.oam.dev/scope": ""},
			Annotations: map[string]string{ConfigAnnotationAlias: name + " alias", ConfigAnnotationDesc: "d",
				ConfigAnnotationSensitive: s, "config.oam.dev/template-namespace": "vela-system"},
		},
		Type: corev1.SecretType("/" + template),
		Data: map[string][]byte{ConfigDataProperties: []byte(props), "url": []byte("https://charts.example.com")},
	}
}

func TestConfig_CreateReadUpdateAsKubeVelaStoresIt(t *testing.T) {
	env := testEnv(t)
	if _, err := doConfig(t, env, "create", map[string]any{"name": "db", "namespace": "team-a", "config": map[string]any{"host": "db.local", "port": 5432}}); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "db"}, sec); err != nil {
		t.Fatal(err)
	}
	if sec.Labels[ConfigLabelCatalog] != "velacore-config" || sec.Labels[ConfigLabelType] != "" {
		t.Fatalf("labels %v", sec.Labels)
	}
	if _, ok := sec.Labels["config.oam.dev/type"]; !ok {
		t.Fatal("KubeVela sets config.oam.dev/type to \"\" for a config without template")
	}
	if string(sec.Data["input-properties"]) != `{"host":"db.local","port":5432}` {
		t.Fatalf("input-properties %s", sec.Data["input-properties"])
	}
	r, err := doConfig(t, env, "read", map[string]any{"name": "db", "namespace": "team-a"})
	if err != nil || !reflect.DeepEqual(r, map[string]any{"config": map[string]any{"host": "db.local", "port": 5432.0}}) {
		t.Fatalf("read %v, %v", r, err)
	}
	if _, err := doConfig(t, env, "create", map[string]any{"name": "db", "namespace": "team-a", "config": map[string]any{"host": "db2"}}); err != nil {
		t.Fatal(err)
	}
	r, err = doConfig(t, env, "read", map[string]any{"name": "db", "namespace": "team-a"})
	if err != nil || !reflect.DeepEqual(r, map[string]any{"config": map[string]any{"host": "db2"}}) {
		t.Fatalf("read after update %v, %v", r, err)
	}
}

func TestConfig_ReadsKubeVelaConfigsAndRefusesSensitive(t *testing.T) {
	env := testEnv(t, kubeVelaConfig("repo", "helm-repository", `{"url":"https://charts.example.com"}`, false),
		kubeVelaConfig("key", "image-registry", `{"password":"p"}`, true))
	r, err := doConfig(t, env, "read", map[string]any{"name": "repo", "namespace": "team-a"})
	if err != nil || !reflect.DeepEqual(r, map[string]any{"config": map[string]any{"url": "https://charts.example.com"}}) {
		t.Fatalf("read %v, %v", r, err)
	}
	if _, err := doConfig(t, env, "read", map[string]any{"name": "key", "namespace": "team-a"}); err == nil || !strings.Contains(err.Error(), "sensitive") {
		t.Fatalf("want a sensitive config refused, got %v", err)
	}
}

func TestConfig_List(t *testing.T) {
	env := testEnv(t,
		kubeVelaConfig("repo-a", "helm-repository", `{"url":"a"}`, false),
		kubeVelaConfig("repo-b", "helm-repository", `{"url":"b"}`, true),
		kubeVelaConfig("reg", "image-registry", `{"registry":"r"}`, false),
	)
	r, err := doConfig(t, env, "list", map[string]any{"template": "vela-system/helm-repository", "namespace": "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"configs": []any{
		map[string]any{"name": "repo-a", "alias": "repo-a alias", "description": "d", "config": map[string]any{"url": "a"}},
		map[string]any{"name": "repo-b", "alias": "repo-b alias", "description": "d"}, // sensitive: no properties
	}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("list\n got %v\nwant %v", r, want)
	}
	if _, err := doConfig(t, env, "list", map[string]any{"template": "", "namespace": "team-a"}); err == nil {
		t.Fatal("KubeVela requires the template to list")
	}
}

func TestConfig_CreateLeavesOtherSecretsAlone(t *testing.T) {
	env := testEnv(t,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "team-a"}, Data: map[string][]byte{"k": []byte("v")}},
		kubeVelaConfig("repo", "helm-repository", `{"url":"a"}`, false),
	)
	for name, p := range map[string]map[string]any{
		"not a config":       {"name": "plain", "namespace": "team-a", "config": map[string]any{"x": 1}},
		"template change":    {"name": "repo", "namespace": "team-a", "config": map[string]any{"x": 1}},
		"template rendering": {"name": "new", "namespace": "team-a", "template": "helm-repository", "config": map[string]any{"x": 1}},
		"no namespace":       {"name": "new", "config": map[string]any{"x": 1}},
	} {
		if _, err := doConfig(t, env, "create", p); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	sec := &corev1.Secret{}
	_ = env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "plain"}, sec)
	if len(sec.Data) != 1 || string(sec.Data["k"]) != "v" {
		t.Fatalf("the plain Secret was changed: %v", sec.Data)
	}
	_ = env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "repo"}, sec)
	if string(sec.Data[ConfigDataProperties]) != `{"url":"a"}` {
		t.Fatalf("the templated config was changed: %s", sec.Data[ConfigDataProperties])
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "new"}, sec); !apierrors.IsNotFound(err) {
		t.Fatalf("a config was created from a template Steward cannot render: %v", err)
	}
}

func TestConfig_Delete(t *testing.T) {
	withOutputs := kubeVelaConfig("repo", "helm-repository", `{"url":"a"}`, false)
	withOutputs.UID = "repo-uid"
	withOutputs.Data[ConfigDataObjectReferences] = []byte(`[{"kind":"ConfigMap","namespace":"team-a","name":"repo-out","apiVersion":"v1"},{"kind":"ConfigMap","name":"gone","apiVersion":"v1"}]`)
	env := testEnv(t, withOutputs,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "repo-out", Namespace: "team-a",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "repo", UID: "repo-uid"}}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "team-a"}},
	)
	if _, err := doConfig(t, env, "delete", map[string]any{"name": "repo", "namespace": "team-a"}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}} {
		name := map[bool]string{true: "repo", false: "repo-out"}[reflect.TypeOf(obj) == reflect.TypeOf(&corev1.Secret{})]
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: name}, obj); !apierrors.IsNotFound(err) {
			t.Fatalf("%T %s still there: %v", obj, name, err)
		}
	}
	if _, err := doConfig(t, env, "delete", map[string]any{"name": "plain", "namespace": "team-a"}); err == nil || !strings.Contains(err.Error(), "not a config") {
		t.Fatalf("want a plain Secret left alone, got %v", err)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "plain"}, &corev1.Secret{}); err != nil {
		t.Fatalf("the plain Secret was deleted: %v", err)
	}
	if _, err := doConfig(t, env, "delete", map[string]any{"name": "absent", "namespace": "team-a"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("want not found, got %v", err)
	}
}

// A config's objects-reference deletes only what was made for the config:
// an object of another namespace is refused by the boundary before it is
// read, and an object without an ownerReference to the config, or one an
// Application manages, is refused; nothing of the config is deleted then.
func TestConfig_DeleteRefusesWhatTheConfigDidNotMake(t *testing.T) {
	for _, tc := range []struct {
		name, ref, want string
		confined        bool
	}{
		{"another namespace, confined", `{"apiVersion":"v1","kind":"ConfigMap","namespace":"team-b","name":"victim"}`, "--no-cross-namespace-objects", true},
		{"a Namespace, confined", `{"apiVersion":"v1","kind":"Namespace","name":"team-b"}`, "cluster-scoped Namespace team-b", true},
		{"another namespace, not made by the config", `{"apiVersion":"v1","kind":"ConfigMap","namespace":"team-b","name":"victim"}`, "not made for this config", false},
		{"same namespace, not made by the config", `{"apiVersion":"v1","kind":"ConfigMap","namespace":"team-a","name":"mine"}`, "not made for this config", false},
		{"managed by an Application", `{"apiVersion":"v1","kind":"ConfigMap","namespace":"team-a","name":"managed"}`, "Application team-a/shop", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kubeVelaConfig("c", "", `{}`, false)
			cfg.UID = "c-uid"
			cfg.Data[ConfigDataObjectReferences] = []byte("[" + tc.ref + "]")
			owned := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "c", UID: "c-uid"}}
			env := testEnv(t, cfg,
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: "team-b"}},
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "team-a"}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "managed", Namespace: "team-a", OwnerReferences: owned,
					Labels: map[string]string{"app.oam.dev/name": "shop", "app.oam.dev/namespace": "team-a"}}},
			)
			env.Boundary = boundary.Boundary{Namespace: "team-a", Confined: tc.confined}
			_, err := doConfig(t, env, "delete", map[string]any{"name": "c", "namespace": "team-a"})
			var refusedErr *RefusedError
			if !errors.As(err, &refusedErr) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a refusal naming %q, got %v", tc.want, err)
			}
			for _, k := range []client.ObjectKey{{Namespace: "team-b", Name: "victim"}, {Namespace: "team-a", Name: "mine"}, {Namespace: "team-a", Name: "managed"}} {
				if err := env.Client.Get(context.Background(), k, &corev1.ConfigMap{}); err != nil {
					t.Errorf("ConfigMap %s: %v", k, err)
				}
			}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Name: "team-b"}, &corev1.Namespace{}); err != nil {
				t.Errorf("Namespace team-b: %v", err)
			}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "c"}, &corev1.Secret{}); err != nil {
				t.Errorf("the config was deleted although its references were refused: %v", err)
			}
		})
	}
}

// Under --no-cross-namespace-objects every config action stays in the
// Application's namespace, refused before anything is read.
func TestConfig_ActionsHoldTheBoundary(t *testing.T) {
	env := testEnv(t, kubeVelaConfig("c", "t", `{"a":"b"}`, false))
	env.Boundary = boundary.Boundary{Namespace: "team-a", Confined: true}
	for do, p := range map[string]map[string]any{
		"create": {"name": "c", "namespace": "vela-system", "config": map[string]any{}},
		"read":   {"name": "c", "namespace": "vela-system"},
		"list":   {"template": "t", "namespace": "vela-system"},
		"delete": {"name": "c", "namespace": "vela-system"},
	} {
		_, err := doConfig(t, env, do, p)
		if be := boundary.As(err); be == nil || be.Reason != v1beta1.ReasonCrossNamespaceObject {
			t.Errorf("config.%s in another namespace: want CrossNamespaceObject, got %v", do, err)
		}
	}
	if _, err := doConfig(t, env, "read", map[string]any{"name": "c", "namespace": "team-a"}); err != nil {
		t.Errorf("its own namespace: %v", err)
	}
}

// config.list stops at the result bound instead of holding the whole list.
func TestConfig_ListIsBounded(t *testing.T) {
	var objs []client.Object
	for i := range 40 {
		objs = append(objs, kubeVelaConfig(fmt.Sprintf("c%02d", i), "t", `{"v":"`+strings.Repeat("x", 200)+`"}`, false))
	}
	env := testEnv(t, objs...)
	env.MaxResultBytes = 4 << 10
	_, err := doConfig(t, env, "list", map[string]any{"template": "t", "namespace": "team-a"})
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("want the result bound, got %v", err)
	}
	env.MaxResultBytes = 64 << 10
	r, err := doConfig(t, env, "list", map[string]any{"template": "t", "namespace": "team-a"})
	if err != nil || len(r["configs"].([]any)) != 40 {
		t.Fatalf("within the bound every page is read: %v", err)
	}
}
