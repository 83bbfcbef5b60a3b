package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// KubeVela features Steward does not carry are never ignored silently:
// with definition revisions turned off, a pinned definition revision is
// refused (nothing applied), and features that change nothing delivered
// (autoUpdate, scopes) are named in a warning event while the Application
// is delivered.
func TestUnsupported_KubeVelaFeaturesAreRefusedOrNamed(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.DefinitionRevisions = false
	startManager(t, testCfg, opts)
	createApp(t, ns, `
metadata: {name: pinned}
spec:
  components:
    - {name: cfg, type: test-config@v2, properties: {name: pinned, data: {k: v}}}
`)
	createApp(t, ns, `
metadata:
  name: auto
  annotations: {app.oam.dev/autoUpdate: "true"}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: auto, data: {k: v}}}
`)
	eventually(t, 30*time.Second, "the pinned revision refused", func() error {
		c, err := condition(t, ns, "pinned", v1beta1.ConditionRendered)
		if err != nil {
			return err
		}
		if c.Reason != v1beta1.ReasonDefinitionNotFound || !strings.Contains(c.Message, "definition revisions are turned off") {
			return fmt.Errorf("rendered %s: %s", c.Reason, c.Message)
		}
		return nil
	})
	if configMapExists(t, ns, "pinned") {
		t.Fatal("a pinned definition revision was rendered with the current definition")
	}
	waitReady(t, ns, "auto")
	waitEvent(t, ns, "auto", v1beta1.EventUnsupportedFeature)
	var revs v1beta1.DefinitionRevisionList
	if err := testClient.List(context.Background(), &revs, client.InNamespace(ns)); err != nil || len(revs.Items) > 0 {
		t.Fatalf("definition revisions turned off, yet %d written (%v)", len(revs.Items), err)
	}
}
