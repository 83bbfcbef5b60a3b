package definition_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// warningRecorder keeps every warning the API server sends a client.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

// about returns the warnings that mention s.
func (w *warningRecorder) about(s string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, text := range w.warnings {
		if strings.Contains(text, s) {
			out = append(out, text)
		}
	}
	return out
}

// A DefinitionRevision keeps the embedded definition's name, namespace,
// labels and annotations, as KubeVela's does (vela def and VelaUX read
// them from it), and the API server accepts it without a warning: before,
// the CRD pruned the embedded metadata and every revision written logged
// `unknown field "spec.traitDefinition.metadata.name"` and the like.
func TestDefinitionRevisions_KeepTheDefinitionsMetadataWithoutWarnings(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(controllertest.Config(t))
	cfg.WarningHandlerWithContext = warnings
	managertest.Start(t, cfg, managertest.Options())
	ctx := context.Background()

	def := controllertest.VersionedDefinition(ns, "described", "one", "")
	def.Labels = map[string]string{"custom.definition.oam.dev/ui-hidden": "false"}
	def.Annotations = map[string]string{"definition.oam.dev/description": "A ConfigMap that says its version"}
	if err := admin.Create(ctx, def); err != nil {
		t.Fatal(err)
	}
	trait := &v1beta1.TraitDefinition{}
	controllertest.CreateFromYAML(t, ns, `
metadata:
  name: labelled
  annotations: {definition.oam.dev/description: "Adds a label"}
spec:
  appliesToWorkloads: ["*"]
  schematic:
    cue:
      template: |
        patch: metadata: labels: trait: "labelled"
        parameter: {}
`, trait)
	waitRevisions(t, ns, "described", "described-v1")

	for _, c := range []struct{ revision, field, name, annotation string }{
		{"described-v1", "componentDefinition", "described", "A ConfigMap that says its version"},
		{"labelled-v1", "traitDefinition", "labelled", "Adds a label"},
	} {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("DefinitionRevision"))
		controllertest.Eventually(t, 20*time.Second, "revision "+c.revision, func() error {
			return admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.revision}, live)
		})
		embedded, _, _ := unstructured.NestedMap(live.Object, "spec", c.field)
		if got, _, _ := unstructured.NestedString(embedded, "metadata", "name"); got != c.name {
			t.Errorf("%s: spec.%s.metadata.name = %q, want %q (stored: %v)", c.revision, c.field, got, c.name, embedded["metadata"])
		}
		if got, _, _ := unstructured.NestedString(embedded, "metadata", "namespace"); got != ns {
			t.Errorf("%s: spec.%s.metadata.namespace = %q, want %q", c.revision, c.field, got, ns)
		}
		if got, _, _ := unstructured.NestedString(embedded, "metadata", "annotations", "definition.oam.dev/description"); got != c.annotation {
			t.Errorf("%s: the description annotation = %q, want %q", c.revision, got, c.annotation)
		}
		if got, _, _ := unstructured.NestedString(embedded, "kind"); got == "" {
			t.Errorf("%s: spec.%s.kind is empty", c.revision, c.field)
		}
	}
	var rev v1beta1.DefinitionRevision
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "described-v1"}, &rev); err != nil {
		t.Fatal(err)
	}
	if got := rev.Spec.ComponentDefinition.Labels["custom.definition.oam.dev/ui-hidden"]; got != "false" {
		t.Errorf("the definition's label was not kept: %v", rev.Spec.ComponentDefinition.Labels)
	}
	if got := warnings.about("Definition.metadata"); len(got) > 0 {
		t.Errorf("the API server warned about the revisions it was sent:\n%s", strings.Join(got, "\n"))
	}
	// A second writer (a GitOps tool copying the revision) gets no warning
	// either: the schema describes what the revision holds.
	copyOf := rev.DeepCopy()
	copyOf.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "described-copy"}
	direct := &warningRecorder{}
	dcfg := rest.CopyConfig(controllertest.Config(t))
	dcfg.WarningHandlerWithContext = direct
	dc, err := client.New(dcfg, client.Options{Scheme: controllertest.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := dc.Create(ctx, copyOf, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if got := direct.about(""); len(got) > 0 {
		t.Errorf("creating a copy of the revision warned: %s", fmt.Sprint(got))
	}
}
