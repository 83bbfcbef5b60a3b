package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// waitNotReady waits for Ready=False with reason and returns the message.
func waitNotReady(t *testing.T, ns, name, reason string) string {
	t.Helper()
	return controllertest.WaitNotReady(t, ns, name, reason)
}

func TestBadInput_ReportedOnTheApplicationWithoutHarmingOthers(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	// A healthy neighbour in the same namespace keeps working throughout.
	createApp(t, ns, webApp)

	for _, tc := range []struct {
		name, component, reason string
		mention                 []string
	}{
		{"unknown-type", `{name: c1, type: no-such-type, properties: {image: x}}`, v1beta1.ReasonDefinitionNotFound,
			[]string{`"c1"`, "no-such-type"}},
		{"unknown-trait", `{name: c2, type: test-worker, properties: {image: x}, traits: [{type: no-such-trait}]}`, v1beta1.ReasonDefinitionNotFound,
			[]string{`"c2"`, "no-such-trait"}},
		{"cue-error", `{name: c3, type: test-broken, properties: {value: x}}`, "",
			[]string{`"c3"`}},
		{"bad-properties", `{name: c4, type: test-worker, properties: {image: 42}}`, v1beta1.ReasonInvalidProperties,
			[]string{`"c4"`, "image"}},
		{"missing-property", `{name: c5, type: test-worker, properties: {greeting: hi}}`, v1beta1.ReasonInvalidProperties,
			[]string{`"c5"`, "image"}},
		{"missing-crd", `{name: c6, type: test-widget}`, v1beta1.ReasonKindNotFound,
			[]string{"Widget", "CustomResourceDefinition"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			createApp(t, ns, fmt.Sprintf("metadata: {name: %s}\nspec: {components: [%s]}\n", tc.name, tc.component))
			var msg string
			eventually(t, 30*time.Second, "Ready=False", func() error {
				app := getApp(t, ns, tc.name)
				c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
				if c == nil || c.Status != "False" || (tc.reason != "" && c.Reason != tc.reason) {
					return fmt.Errorf("ready = %+v", c)
				}
				msg = c.Message
				return nil
			})
			for _, m := range tc.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("message %q does not mention %s", msg, m)
				}
			}
			app := getApp(t, ns, tc.name)
			if app.Status.Phase == v1beta1.ApplicationRunning {
				t.Errorf("phase = running for a broken app")
			}
			ready := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
			waitEvent(t, ns, tc.name, ready.Reason)
		})
	}
	waitReady(t, ns, "web")
}

func TestBadInput_RenderFailureKeepsThePreviousVersion(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")

	app := getApp(t, ns, "web")
	app.Spec.Components[0].Type = "no-such-type"
	if err := testClient.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	waitNotReady(t, ns, "web", v1beta1.ReasonDefinitionNotFound)
	// Several passes later the objects of the previous version are all
	// still there and kept.
	time.Sleep(4 * time.Second)
	if _, err := getDeployment(t, ns, "web"); err != nil {
		t.Fatalf("a render failure deleted the running Deployment: %v", err)
	}
	dep, _ := getDeployment(t, ns, "web")
	if err := testClient.Delete(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the previous version kept by StateKeep", func() error {
		_, err := getDeployment(t, ns, "web")
		return err
	})
}

func TestBadInput_MissingDefinitionInstalledLater(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.ReSyncPeriod = time.Hour // only the definition watch can wake the app
	startManager(t, testCfg, opts)
	createApp(t, ns, `
metadata: {name: late}
spec:
  components:
    - {name: late, type: test-late, properties: {image: nginx}}
`)
	waitNotReady(t, ns, "late", v1beta1.ReasonDefinitionNotFound)
	def := &v1beta1.ComponentDefinition{}
	createFromYAML(t, ns, `
metadata: {name: test-late}
spec:
  workload: {definition: {apiVersion: v1, kind: ConfigMap}}
  schematic:
    cue:
      template: |
        output: {apiVersion: "v1", kind: "ConfigMap", metadata: name: context.name, data: image: parameter.image}
        parameter: image: string
`, def)
	waitReady(t, ns, "late")
}

func TestBadInput_NameOverSixtyThreeCharactersIsRefusedClearly(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	name := "a-name-that-is-far-too-long-to-be-a-label-value-" + strings.Repeat("x", 22) // 70 characters
	app := createApp(t, ns, "metadata: {name: "+name+"}\nspec: {components: [{name: web, type: test-worker, properties: {image: nginx}}]}\n")

	msg := waitNotReady(t, ns, name, v1beta1.ReasonInvalidName)
	if !strings.Contains(msg, "70 characters") || !strings.Contains(msg, "shorter name") {
		t.Errorf("message %q does not say what is wrong and what to do", msg)
	}
	waitEvent(t, ns, name, v1beta1.ReasonInvalidName)
	for _, k := range []tracker.Kind{tracker.Root(), tracker.Versioned(1)} {
		rt := &v1beta1.ResourceTracker{}
		if err := testClient.Get(context.Background(), client.ObjectKey{Name: tracker.Name(name, ns, k)}, rt); !apierrors.IsNotFound(err) {
			t.Errorf("tracker %s of a refused Application: %v", tracker.Name(name, ns, k), err)
		}
	}
	if live := getApp(t, ns, name); len(live.Finalizers) != 0 {
		t.Errorf("finalizers %v on an Application nothing was created for", live.Finalizers)
	}

	// Deleting it is not held up by anything.
	if err := testClient.Delete(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the refused Application to go", func() error {
		live := &v1beta1.Application{}
		if err := testClient.Get(context.Background(), client.ObjectKeyFromObject(app), live); err == nil {
			return fmt.Errorf("still there, finalizers %v", live.Finalizers)
		}
		return nil
	})
}
