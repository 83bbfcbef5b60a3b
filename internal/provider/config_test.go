package provider

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	withOutputs.Data[ConfigDataObjectReferences] = []byte(`[{"kind":"ConfigMap","namespace":"team-a","name":"repo-out","apiVersion":"v1"}]`)
	env := testEnv(t, withOutputs,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "repo-out", Namespace: "team-a"}},
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
