package definition_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/definition"
)

func TestPin_SplitsKubeVelaTypes(t *testing.T) {
	for _, tc := range []struct {
		typ, name, rev string
		ok             bool
	}{
		{"webservice@v2", "webservice", "webservice-v2", true},
		{"worker@v1.3.1", "worker", "worker-v1.3.1", true},
		{"webservice", "webservice", "", false},
		{"@v2", "@v2", "", false},
		{"webservice@v", "webservice@v", "", false},
	} {
		name, rev, ok := definition.Pin(tc.typ)
		if name != tc.name || rev != tc.rev || ok != tc.ok {
			t.Errorf("Pin(%q) = %q, %q, %v; want %q, %q, %v", tc.typ, name, rev, ok, tc.name, tc.rev, tc.ok)
		}
	}
	if definition.CheckPin("web@vNOT_A_NAME") == nil {
		t.Error("a revision name that is no object name was accepted")
	}
}

func component(ns, name, tmpl string) *v1beta1.ComponentDefinition {
	return &v1beta1.ComponentDefinition{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Spec:       v1beta1.ComponentDefinitionSpec{Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: tmpl}}},
	}
}

// A snapshot holds the spec, names its definition by KubeVela's label, and
// gives back a definition for the pinned type; revisions of another kind
// give none.
func TestSnapshot_RoundTrip(t *testing.T) {
	def := component("team", "web", "output: {}")
	rev := definition.Snapshot(def, "web-v3", 3)
	if rev.Labels[v1beta1.LabelComponentDefinitionName] != "web" || rev.Spec.Revision != 3 || rev.Spec.DefinitionType != v1beta1.DefinitionTypeComponent {
		t.Fatalf("snapshot %+v", rev)
	}
	if rev.Spec.RevisionHash != definition.SpecHash(def) || definition.SpecHash(component("team", "web", "output: {a: 1}")) == rev.Spec.RevisionHash {
		t.Fatal("the hash does not follow the spec")
	}
	if _, ok := rev.Spec.ComponentDefinition.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		t.Fatal("kubectl's last-applied copy was kept in the revision")
	}
	rev.UID = "u1"
	got := definition.FromRevision[v1beta1.ComponentDefinition](rev, "web@v3")
	if got == nil || got.Name != "web@v3" || got.UID != "u1" || got.Spec.Schematic.CUE.Template != "output: {}" {
		t.Fatalf("from revision: %+v", got)
	}
	if definition.FromRevision[v1beta1.TraitDefinition](rev, "web@v3") != nil {
		t.Fatal("a component revision was read as a trait")
	}
}

// spec.version names the revision as KubeVela does (semver normalised),
// then the annotation; a bad version is an error.
func TestNamedRevision(t *testing.T) {
	def := component("team", "web", "")
	if n, _ := definition.NamedRevision(def); n != "" {
		t.Fatalf("named %q", n)
	}
	def.Annotations[v1beta1.AnnotationDefinitionRevisionName] = "blue"
	if n, _ := definition.NamedRevision(def); n != "web-vblue" {
		t.Fatalf("named %q", n)
	}
	def.Spec.Version = "v1.2"
	if n, _ := definition.NamedRevision(def); n != "web-v1.2.0" {
		t.Fatalf("named %q", n)
	}
	def.Spec.Version = "one"
	if _, err := definition.NamedRevision(def); err == nil {
		t.Fatal("a version that is not semantic was accepted")
	}
}

// The fingerprint moves when a definition an Application uses changes,
// and not for a pinned one. (A pure function of what the reader returns:
// a fake reader is enough.)
func TestFingerprint(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	def := component("team", "web", "output: {}")
	def.Generation = 1
	rev := definition.Snapshot(def, "web-v1", 1)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(def, rev).Build()
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a"}}
	app.Spec.Components = []v1beta1.ApplicationComponent{{Name: "a", Type: "web"}}
	pinned := app.DeepCopy()
	pinned.Spec.Components[0].Type = "web@v1"
	r := definition.Resolver{Reader: c, SystemNamespace: "vela-system"}
	ctx := context.Background()
	before, _ := r.Fingerprint(ctx, app)
	pinnedBefore, _ := r.Fingerprint(ctx, pinned)
	defs, _ := r.Resolve(ctx, pinned)
	if defs.Components["web@v1"] == nil {
		t.Fatal("the pinned revision was not resolved")
	}
	def.Spec.Schematic.CUE.Template = "output: {a: 1}"
	def.Generation = 2 // the API server's doing; the fake client keeps it
	if err := c.Update(ctx, def); err != nil {
		t.Fatal(err)
	}
	after, _ := r.Fingerprint(ctx, app)
	pinnedAfter, _ := r.Fingerprint(ctx, pinned)
	if before == after {
		t.Fatal("the fingerprint did not move with the definition")
	}
	if pinnedBefore != pinnedAfter {
		t.Fatal("a pinned type's fingerprint moved with the definition")
	}
}
