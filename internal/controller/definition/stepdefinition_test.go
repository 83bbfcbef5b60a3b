package definition_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// notificationStep is a step template as KubeVela publishes them: it
// imports a provider package the component compile check does not know.
const notificationStep = `
metadata: {name: test-notify}
spec:
  schematic:
    cue:
      template: |
        import ("vela/http")
        req: http.#HTTPDo & {$params: {method: "POST", url: parameter.url}}
        parameter: url: string
`

func TestWorkflowStepDefinition_ImportingProvidersIsReady(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, managertest.Options())
	controllertest.CreateFromYAML(t, ns, notificationStep, &v1beta1.WorkflowStepDefinition{})
	controllertest.CreateFromYAML(t, ns, "metadata: {name: test-empty}\nspec: {}\n", &v1beta1.WorkflowStepDefinition{})
	for name, msg := range map[string]string{"test-notify": "template compiles", "test-empty": "no CUE template"} {
		controllertest.Eventually(t, 20*time.Second, name+" Ready=True", func() error {
			def := &v1beta1.WorkflowStepDefinition{}
			if err := controllertest.Client(t).Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, def); err != nil {
				return err
			}
			c := meta.FindStatusCondition(def.Status.Conditions, v1beta1.ConditionReady)
			if c == nil || c.Status != metav1.ConditionTrue || c.Message != msg || def.Status.ObservedGeneration != def.Generation {
				return fmt.Errorf("ready = %+v", c)
			}
			return nil
		})
	}
}
