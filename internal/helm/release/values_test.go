package release

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

func TestMerge_MapsMergeOthersReplaceNullKept(t *testing.T) {
	base := map[string]any{"a": map[string]any{"x": 1.0, "y": 2.0}, "list": []any{1.0, 2.0}, "keep": "base", "gone": "base"}
	over := map[string]any{"a": map[string]any{"y": 3.0}, "list": []any{9.0}, "gone": nil}
	got := Merge(base, over)
	want := map[string]any{"a": map[string]any{"x": 1.0, "y": 3.0}, "list": []any{9.0}, "keep": "base", "gone": nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %v, want %v", got, want)
	}
	if base["a"].(map[string]any)["y"] != 2.0 {
		t.Error("Merge changed its base")
	}
}

// valuesFrom sources merge in order under the inline values; a source
// outside the release's and the Application's namespaces is refused, a
// missing one fails unless optional, binaryData is not read.
func TestValues_OrderNamespacesAndOptional(t *testing.T) {
	ctx := context.Background()
	c := controllertest.Client(t)
	app, other, rel := controllertest.NewNamespace(t), controllertest.NewNamespace(t), controllertest.NewNamespace(t)
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "base"}, Data: map[string]string{"values.yaml": "a: {x: 1, z: 1}\nlist: [1, 2]\n"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "bin"}, BinaryData: map[string][]byte{"values.yaml": []byte("a: 1")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "theirs"}, Data: map[string]string{"values.yaml": "a: 1"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rel, Name: "pw"}, Data: map[string][]byte{"custom": []byte("a: {z: 2}\npassword: s3cret\n")}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	in := strings.NewReplacer(`"app"`, strconv.Quote(app), `"other"`, strconv.Quote(other), `"rel"`, strconv.Quote(rel))
	params := func(raw string) *Params {
		p, err := ParseParams(json.RawMessage(in.Replace(raw)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := Values(ctx, c, params(`{"chart":{"source":"x"},"release":{"namespace":"rel"},
		"valuesFrom":[{"kind":"ConfigMap","name":"base","namespace":"app"},{"kind":"Secret","name":"pw","key":"custom"},{"kind":"ConfigMap","name":"absent","optional":true}],
		"values":{"a":{"x":9},"list":[3]}}`), app)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": map[string]any{"x": 9.0, "z": 2.0}, "list": []any{3.0}, "password": "s3cret"}
	raw, _ := json.Marshal(got)
	wantRaw, _ := json.Marshal(want)
	if string(raw) != string(wantRaw) {
		t.Errorf("values = %s, want %s", raw, wantRaw)
	}
	for what, p := range map[string]string{
		"another namespace": `{"chart":{"source":"x"},"valuesFrom":[{"kind":"ConfigMap","name":"theirs","namespace":"other"}]}`,
		"not found":         `{"chart":{"source":"x"},"valuesFrom":[{"kind":"ConfigMap","name":"absent"}]}`,
		"binaryData":        `{"chart":{"source":"x"},"valuesFrom":[{"kind":"ConfigMap","name":"bin"}]}`,
	} {
		if _, err := Values(ctx, c, params(p), app); err == nil {
			t.Errorf("%s: no error", what)
		} else if !strings.Contains(err.Error(), "valuesFrom[0]") {
			t.Errorf("%s: %v does not name the source", what, err)
		}
	}
}

func TestParseParams_DefaultsAndRefusals(t *testing.T) {
	p, err := ParseParams(json.RawMessage(`{"chart":{"source":"x"},"context":{"name":"web"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.ReleaseName() != "web" || p.ReleaseNamespace("app") != "app" || !p.IncludeCRDs() || !p.SkipTests() || p.SkipHooks() || !p.CreateNamespace() || p.MaxHistory() != 10 {
		t.Errorf("defaults: %s %s crds=%v tests=%v hooks=%v ns=%v history=%d", p.ReleaseName(), p.ReleaseNamespace("app"),
			p.IncludeCRDs(), p.SkipTests(), p.SkipHooks(), p.CreateNamespace(), p.MaxHistory())
	}
	if _, err := ParseParams(json.RawMessage(`{"chart":{"source":"x"},"options":{"postRender":{"exec":{"command":"sh"}}}}`)); err == nil {
		t.Error("postRender accepted")
	}
	if _, err := ParseParams(json.RawMessage(`{"chart":{}}`)); err == nil {
		t.Error("an empty source accepted")
	}
}
