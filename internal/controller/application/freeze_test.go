package application

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/version"
)

// KubeVela's CLI freezes an Application around a rollback with
// app.oam.dev/controller-version-require: "Disabled", swaps its spec, and
// removes the annotation. A frozen Application is left alone, whatever
// changes meanwhile; once the annotation goes (or names the KubeVela
// version Steward carries), the change is applied.
func TestFreeze_ControllerVersionRequireLeavesTheApplicationAlone(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, testCfg, testOptions())
	createApp(t, ns, `
metadata: {name: frozen}
spec:
  components:
    - {name: cfg, type: test-config, properties: {name: cfg, data: {k: v1}}}
`)
	waitReady(t, ns, "frozen")
	patch := func(annotation *string, data string) {
		t.Helper()
		ann := "null"
		if annotation != nil {
			ann = fmt.Sprintf("%q", *annotation)
		}
		body := fmt.Sprintf(`"metadata":{"annotations":{%q:%s}}`, v1beta1.AnnotationControllerRequirement, ann)
		if data != "" {
			body += fmt.Sprintf(`,"spec":{"components":[{"name":"cfg","type":"test-config","properties":{"name":"cfg","data":{"k":%q}}}]}`, data)
		}
		app := &v1beta1.Application{}
		app.Namespace, app.Name = ns, "frozen"
		if err := testClient.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte("{"+body+"}"))); err != nil {
			t.Fatal(err)
		}
	}
	data := func() string {
		cm, err := getConfigMap(t, ns, "cfg")
		if err != nil {
			return err.Error()
		}
		return cm.Data["k"]
	}
	disabled := "Disabled"
	patch(&disabled, "v2")
	for range 10 { // two re-syncs of testOptions (2 s) and the events of the patch
		time.Sleep(500 * time.Millisecond)
		if got := data(); got != "v1" {
			t.Fatalf("a frozen Application was reconciled: cfg has %q", got)
		}
	}
	patch(nil, "")
	eventually(t, 30*time.Second, "the change applied once the freeze is lifted", func() error {
		if got := data(); got != "v2" {
			return fmt.Errorf("cfg has %q", got)
		}
		return nil
	})
	carried := version.KubeVela
	patch(&carried, "v3")
	eventually(t, 30*time.Second, "an Application requiring the KubeVela version Steward carries is reconciled", func() error {
		if got := data(); got != "v3" {
			return fmt.Errorf("cfg has %q", got)
		}
		return nil
	})
}
