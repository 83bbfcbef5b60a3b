package definition_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// setDefinitionVersion rewrites def's template to render version.
func setDefinitionVersion(t *testing.T, ns, name, version string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		def := &v1beta1.ComponentDefinition{}
		if err := controllertest.Client(t).Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, def); err != nil {
			return err
		}
		def.Spec.Schematic = controllertest.VersionedDefinition(ns, name, version, "").Spec.Schematic
		return controllertest.Client(t).Update(context.Background(), def)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// revisionNames lists the DefinitionRevisions of a ComponentDefinition.
func revisionNames(t *testing.T, ns, name string) []string {
	t.Helper()
	var list v1beta1.DefinitionRevisionList
	if err := controllertest.Client(t).List(context.Background(), &list, client.InNamespace(ns),
		client.MatchingLabels{v1beta1.LabelComponentDefinitionName: name}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list.Items {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

func waitRevisions(t *testing.T, ns, name string, want ...string) {
	t.Helper()
	slices.Sort(want)
	controllertest.Eventually(t, 20*time.Second, fmt.Sprintf("revisions %v", want), func() error {
		if got := revisionNames(t, ns, name); !slices.Equal(got, want) {
			return fmt.Errorf("revisions %v", got)
		}
		return nil
	})
}

// waitRenderedBy waits until ConfigMap name says it was rendered by
// definition spec want.
func waitRenderedBy(t *testing.T, ns, name, want string) {
	t.Helper()
	controllertest.Eventually(t, 20*time.Second, "configmap "+name+" rendered by "+want, func() error {
		cm := &corev1.ConfigMap{}
		if err := controllertest.Client(t).Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
			var apps v1beta1.ApplicationList
			_ = controllertest.Client(t).List(context.Background(), &apps, client.InNamespace(ns))
			for _, a := range apps.Items {
				for _, c := range a.Status.Conditions {
					if c.Status != "True" {
						err = fmt.Errorf("%w; application %s: %s %s: %s", err, a.Name, c.Type, c.Reason, c.Message)
					}
				}
			}
			return err
		}
		if got := cm.Data["definition"]; got != want {
			return fmt.Errorf("rendered by %q", got)
		}
		return nil
	})
}

func renderedBy(t *testing.T, ns, name string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := controllertest.Client(t).Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data["definition"]
}

// A platform team changes a definition: an Application pinning
// revision 1 (type: versioned@v1) keeps rendering revision 1, even when
// its own spec changes; an Application with app.oam.dev/autoUpdate takes
// each change within one re-sync interval; one with neither keeps what it
// rendered until its spec changes (KubeVela's default).
func TestDefinitionRevisions_PinnedAutoUpdateAndDefault(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	managertest.Start(t, nil, managertest.Options())
	ctx := context.Background()
	if err := admin.Create(ctx, controllertest.VersionedDefinition(ns, "versioned", "one", "")); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "versioned", "versioned-v1")
	setDefinitionVersion(t, ns, "versioned", "two")
	waitRevisions(t, ns, "versioned", "versioned-v1", "versioned-v2")
	controllertest.Eventually(t, 10*time.Second, "status.latestRevision", func() error {
		def := &v1beta1.ComponentDefinition{}
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "versioned"}, def); err != nil {
			return err
		}
		if lr := def.Status.LatestRevision; lr == nil || lr.Name != "versioned-v2" || lr.Revision != 2 {
			return fmt.Errorf("latestRevision %+v", lr)
		}
		return nil
	})

	controllertest.CreateApp(t, ns, `
metadata: {name: pinned}
spec:
  components:
    - {name: c, type: versioned@v1, properties: {name: pinned}}
`)
	controllertest.CreateApp(t, ns, `
metadata:
  name: auto
  annotations: {app.oam.dev/autoUpdate: "true"}
spec:
  components:
    - {name: c, type: versioned, properties: {name: auto}}
`)
	controllertest.CreateApp(t, ns, `
metadata: {name: plain}
spec:
  components:
    - {name: c, type: versioned, properties: {name: plain}}
`)
	waitRenderedBy(t, ns, "pinned", "one")
	waitRenderedBy(t, ns, "auto", "two")
	waitRenderedBy(t, ns, "plain", "two")
	controllertest.WaitReady(t, ns, "pinned")

	setDefinitionVersion(t, ns, "versioned", "three")
	waitRevisions(t, ns, "versioned", "versioned-v1", "versioned-v2", "versioned-v3")
	// autoUpdate: within the debounce and one re-sync interval.
	waitRenderedBy(t, ns, "auto", "three")
	// Rendered again at its first generation, its component has a second
	// revision, marked on the version's tracker as a first version's are.
	controllertest.Eventually(t, 10*time.Second, "component revisions of auto", func() error {
		rt := &v1beta1.ResourceTracker{}
		if err := admin.Get(ctx, client.ObjectKey{Name: tracker.Name("auto", ns, tracker.Versioned(1))}, rt); err != nil {
			return err
		}
		var got []string
		for _, e := range record.MarkedComponentRevisions(rt) {
			got = append(got, e.Name)
		}
		if strings.Join(got, ",") != "c-v1,c-v2" {
			return fmt.Errorf("component revisions %v, want c-v1,c-v2", got)
		}
		return nil
	})
	// Two more re-sync intervals (2 s each in tests): the others kept theirs.
	time.Sleep(5 * time.Second)
	if got := renderedBy(t, ns, "plain"); got != "two" {
		t.Fatalf("an Application without autoUpdate was rendered again with the changed definition: %q", got)
	}
	if got := renderedBy(t, ns, "pinned"); got != "one" {
		t.Fatalf("a pinned revision changed under its Application: %q", got)
	}
	// A spec change of the pinned Application still renders revision 1.
	app := controllertest.GetApp(t, ns, "pinned")
	app.Spec.Components[0].Properties.Raw = []byte(`{"name":"pinned2"}`)
	if err := admin.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitRenderedBy(t, ns, "pinned2", "one")
}

// A type pinning a revision that does not exist is refused with a
// condition naming the revision; nothing of it is applied.
func TestDefinitionRevisions_MissingRevisionIsNamed(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	if err := controllertest.Client(t).Create(context.Background(), controllertest.VersionedDefinition(ns, "versioned", "one", "")); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "versioned", "versioned-v1")
	controllertest.CreateApp(t, ns, `
metadata: {name: nine}
spec:
  components:
    - {name: c, type: versioned@v9, properties: {name: nine}}
`)
	controllertest.Eventually(t, 20*time.Second, "the missing revision named", func() error {
		c, err := controllertest.Condition(t, ns, "nine", v1beta1.ConditionRendered)
		if err != nil {
			return err
		}
		if c.Reason != v1beta1.ReasonDefinitionNotFound || !strings.Contains(c.Message, `no DefinitionRevision "versioned-v9"`) {
			return fmt.Errorf("rendered %s: %s", c.Reason, c.Message)
		}
		return nil
	})
	if controllertest.ConfigMapExists(t, ns, "nine") {
		t.Fatal("a missing revision was rendered with the current definition")
	}
}

// Deleting a definition deletes its revisions, except those an
// Application pins; those go once the last Application pinning them
// does. The history is bounded, never dropping a pinned revision.
func TestDefinitionRevisions_KeptWhilePinnedAndBounded(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	opts := managertest.Options()
	opts.DefinitionRevisionLimit = 2
	managertest.Start(t, nil, opts)
	ctx := context.Background()
	if err := admin.Create(ctx, controllertest.VersionedDefinition(ns, "versioned", "one", "")); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "versioned", "versioned-v1")
	controllertest.CreateApp(t, ns, `
metadata: {name: pinned}
spec:
  components:
    - {name: c, type: versioned@v1, properties: {name: pinned}}
`)
	waitRenderedBy(t, ns, "pinned", "one")
	for i, v := range []string{"two", "three", "four"} {
		setDefinitionVersion(t, ns, "versioned", v)
		want := fmt.Sprintf("versioned-v%d", i+2)
		controllertest.Eventually(t, 20*time.Second, want, func() error {
			if !slices.Contains(revisionNames(t, ns, "versioned"), want) {
				return controllertest.ErrNotYet
			}
			return nil
		})
	}
	// The limit (2) counts the revisions no Application pins: v3 and v4
	// (current) stay, v2 goes, and v1 stays because it is pinned.
	waitRevisions(t, ns, "versioned", "versioned-v1", "versioned-v3", "versioned-v4")

	def := &v1beta1.ComponentDefinition{}
	def.Namespace, def.Name = ns, "versioned"
	if err := admin.Delete(ctx, def); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "versioned", "versioned-v1")
	// The Application pinning it still renders from it.
	app := controllertest.GetApp(t, ns, "pinned")
	app.Spec.Components[0].Properties.Raw = []byte(`{"name":"pinned2"}`)
	if err := admin.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitRenderedBy(t, ns, "pinned2", "one")
	if err := admin.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "versioned")
}

// A definition naming its revision (spec.version, or the
// definitionrevision.oam.dev/name annotation) is pinned by that name; a
// named revision never changes: a different spec under the same name is
// reported on the definition, not recorded.
func TestDefinitionRevisions_NamedRevisionsNeverChange(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	managertest.Start(t, nil, managertest.Options())
	ctx := context.Background()
	def := controllertest.VersionedDefinition(ns, "named", "one", "")
	def.Spec.Version = "1.2.0"
	if err := admin.Create(ctx, def); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, ns, "named", "named-v1.2.0")
	controllertest.CreateApp(t, ns, `
metadata: {name: semver}
spec:
  components:
    - {name: c, type: named@v1.2.0, properties: {name: semver}}
`)
	waitRenderedBy(t, ns, "semver", "one")
	setDefinitionVersion(t, ns, "named", "two") // same spec.version
	controllertest.Eventually(t, 20*time.Second, "the taken revision reported", func() error {
		live := &v1beta1.ComponentDefinition{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(def), live); err != nil {
			return err
		}
		c := meta.FindStatusCondition(live.Status.Conditions, v1beta1.ConditionRevisionRecorded)
		if c == nil || c.Status != "False" || c.Reason != v1beta1.ReasonDefinitionRevisionFailed || !strings.Contains(c.Message, "named-v1.2.0 exists") {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	rev := &v1beta1.DefinitionRevision{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "named-v1.2.0"}, rev); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rev.Spec.ComponentDefinition.Spec.Schematic.CUE.Template, `"one"`) {
		t.Fatal("a named revision was overwritten")
	}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "named-v1.2.1"}, rev); !apierrors.IsNotFound(err) {
		t.Fatalf("unexpected revision: %v", err)
	}
}
