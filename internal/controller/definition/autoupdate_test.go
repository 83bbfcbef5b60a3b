package definition_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/definition"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// setNamedVersion gives definition name a new spec.version rendering
// version.
func setNamedVersion(t *testing.T, ns, name, specVersion, version string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		def := &v1beta1.ComponentDefinition{}
		if err := controllertest.Client(t).Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, def); err != nil {
			return err
		}
		def.Spec.Version = specVersion
		def.Spec.Schematic = controllertest.VersionedDefinition(ns, name, version, "").Spec.Schematic
		return controllertest.Client(t).Update(context.Background(), def)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// With app.oam.dev/autoUpdate, a pinned version that has no revision of
// its own (ranged@v1.2) renders the newest revision in its range, as
// KubeVela does ("use latest version in specified range"), and takes up a
// new revision in the range on its own; without autoUpdate the same pin
// is refused, naming the revision it lacks.
func TestAutoUpdate_PinnedVersionTakesTheNewestRevisionInRange(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	managertest.Start(t, nil, managertest.Options())
	def := controllertest.VersionedDefinition(ns, "ranged", "one", "")
	def.Spec.Version = "1.2.0"
	if err := admin.Create(context.Background(), def); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "ranged", "ranged-v1.2.0")
	setNamedVersion(t, ns, "ranged", "1.2.5", "two")
	waitRevisions(t, ns, "ranged", "ranged-v1.2.0", "ranged-v1.2.5")
	setNamedVersion(t, ns, "ranged", "1.3.0", "three")
	waitRevisions(t, ns, "ranged", "ranged-v1.2.0", "ranged-v1.2.5", "ranged-v1.3.0")

	controllertest.CreateApp(t, ns, `
metadata:
  name: auto
  annotations: {app.oam.dev/autoUpdate: "true"}
spec:
  components:
    - {name: c, type: ranged@v1.2, properties: {name: auto}}
`)
	controllertest.CreateApp(t, ns, `
metadata: {name: fixed}
spec:
  components:
    - {name: c, type: ranged@v1.2, properties: {name: fixed}}
`)
	// The newest 1.2.x, not the definition's current 1.3.0.
	waitRenderedBy(t, ns, "auto", "two")
	controllertest.WaitReady(t, ns, "auto")
	controllertest.Eventually(t, 20*time.Second, "the pin without autoUpdate refused", func() error {
		c, err := controllertest.Condition(t, ns, "fixed", v1beta1.ConditionRendered)
		if err != nil {
			return err
		}
		if c.Reason != v1beta1.ReasonDefinitionNotFound || !strings.Contains(c.Message, `no DefinitionRevision "ranged-v1.2"`) {
			return fmt.Errorf("rendered %s: %s", c.Reason, c.Message)
		}
		return nil
	})

	// A new revision in the range is taken up without a spec change.
	setNamedVersion(t, ns, "ranged", "1.2.7", "four")
	waitRevisions(t, ns, "ranged", "ranged-v1.2.0", "ranged-v1.2.5", "ranged-v1.3.0", "ranged-v1.2.7")
	waitRenderedBy(t, ns, "auto", "four")
	if controllertest.ConfigMapExists(t, ns, "fixed") {
		t.Fatal("a pin without autoUpdate rendered a revision in its range")
	}
}

// An autoUpdate Application is indexed by the definitions its pinned
// types name too: a definition's new spec.version may be in their range,
// and its watch event wakes them.
func TestAutoUpdateKeys_NamePinnedTypesByTheirDefinition(t *testing.T) {
	app := &v1beta1.Application{}
	app.Annotations = map[string]string{v1beta1.AnnotationAutoUpdate: "true"}
	app.Spec.Components = []v1beta1.ApplicationComponent{
		{Name: "a", Type: "webservice@v1.2", Traits: []v1beta1.ApplicationTrait{{Type: "scaler@v1"}, {Type: "expose"}}},
		{Name: "b", Type: "webservice"},
	}
	got := definition.AutoUpdateKeys(app)
	want := []string{"Component/webservice", "Trait/expose", "Trait/scaler"}
	if !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	app.Annotations = nil
	if got := definition.AutoUpdateKeys(app); len(got) != 0 {
		t.Fatalf("an Application without autoUpdate is indexed: %v", got)
	}
}
