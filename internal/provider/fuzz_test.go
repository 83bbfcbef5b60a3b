package provider

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/internal/boundary"
)

// jsonStringLen is what the result bounds count a string as: it must be
// exactly what encoding/json makes of it, or a tenant's response could be
// counted short of what the step is handed.
func FuzzJSONStringLen(f *testing.F) {
	for _, s := range []string{"", "plain", "<<<&&&>>>", "\"\\\n\r\t\x00\x1f", "\u2028\u2029", "\xff\xfe", "é漢字🙂", "\xed\xa0\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want, err := json.Marshal(string(s))
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonStringLen(s); got != int64(len(want)) {
			t.Fatalf("jsonStringLen(%q) = %d, json.Marshal makes %d bytes", s, got, len(want))
		}
	})
}

// Whatever a config Secret's objects-reference holds, the references
// config.delete would act on are never more than maxObjectReferences and
// never outside a confined Application's namespace.
func FuzzConfigReferences(f *testing.F) {
	for _, s := range []string{
		`[{"apiVersion":"v1","kind":"ConfigMap","namespace":"team-b","name":"victim"}]`,
		`[{"apiVersion":"v1","kind":"ConfigMap","name":"mine"}]`,
		`[{"apiVersion":"v1","kind":"Namespace","name":"kube-system"}]`,
		`[{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","name":"x"}]`,
		`[{"apiVersion":"v1","kind":"Secret","namespace":"team-a","name":"s"},{"apiVersion":"v1","kind":"Secret","namespace":"TEAM-A","name":"s"}]`,
		`{}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	env := testEnv(f)
	env.Boundary = boundary.Boundary{Namespace: "team-a", Confined: true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "c"}, Data: map[string][]byte{ConfigDataObjectReferences: raw}}
		refs, err := configReferences(env, sec)
		if err != nil {
			return
		}
		if len(refs) > maxObjectReferences {
			t.Fatalf("%d references accepted, more than %d", len(refs), maxObjectReferences)
		}
		for _, u := range refs {
			if u.GetNamespace() != "team-a" {
				t.Fatalf("accepted %s/%s %s/%s outside team-a", u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
			}
		}
	})
}
