package definition_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

func TestDefinition_BrokenTemplateIsReportedOnTheDefinitionAndItsApps(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	admin := controllertest.Client(t)
	managertest.Start(t, nil, managertest.Options())
	controllertest.Eventually(t, 20*time.Second, "test-broken Ready=False", func() error {
		def := &v1beta1.ComponentDefinition{}
		if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "test-broken"}, def); err != nil {
			return err
		}
		c := meta.FindStatusCondition(def.Status.Conditions, v1beta1.ConditionReady)
		if c == nil || c.Status != "False" || c.Reason != v1beta1.ReasonTemplateCompileFailed {
			return fmt.Errorf("ready = %+v", c)
		}
		if !strings.Contains(c.Message, "line ") {
			return fmt.Errorf("message %q has no position", c.Message)
		}
		return nil
	})
	def := &v1beta1.ComponentDefinition{}
	if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "test-worker"}, def); err != nil {
		t.Fatal(err)
	}
	controllertest.Eventually(t, 20*time.Second, "test-worker Ready=True", func() error {
		if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "test-worker"}, def); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(def.Status.Conditions, v1beta1.ConditionReady) {
			return controllertest.ErrNotYet
		}
		return nil
	})

	controllertest.CreateApp(t, ns, "metadata: {name: uses-broken}\nspec: {components: [{name: c, type: test-broken, properties: {value: x}}]}\n")
	controllertest.Eventually(t, 20*time.Second, "the app names the definition", func() error {
		c := v1beta1.FindCondition(controllertest.GetApp(t, ns, "uses-broken").Status.Conditions, v1beta1.ConditionReady)
		if c == nil || c.Status != "False" || !strings.Contains(c.Message, "test-broken") || !strings.Contains(c.Message, `"c"`) {
			return fmt.Errorf("ready = %+v", c)
		}
		return nil
	})
}
