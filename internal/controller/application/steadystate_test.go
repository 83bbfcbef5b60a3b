package application

import (
	"strings"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
)

// fourDeployments renders four Deployments and has no health policy, so
// that with --kstatus-health all four are judged by kstatus; envtest runs
// no Deployment controller, so none ever becomes ready.
const fourDeployments = `
apiVersion: core.oam.dev/v1beta1
kind: ComponentDefinition
metadata:
  name: test-four
spec:
  workload:
    definition: {apiVersion: apps/v1, kind: Deployment}
  schematic:
    cue:
      template: |
        outputs: {
          for i in ["a", "b", "c", "d"] {
            "dep-\(i)": {
              apiVersion: "apps/v1"
              kind:       "Deployment"
              metadata: name: "\(context.name)-\(i)"
              spec: {
                selector: matchLabels: app: "\(context.name)-\(i)"
                template: {
                  metadata: labels: app: "\(context.name)-\(i)"
                  spec: containers: [{name: "main", image: "nginx"}]
                }
              }
            }
          }
        }
`

func TestSteadyState_UnhealthyAppWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kstatus bool
		// component is the app's component; mention is in its message.
		component, mention string
	}{
		// Four Deployments judged by kstatus: the message names the first
		// unhealthy one, which map order used to pick.
		{"kstatus", true, "{name: four, type: test-four}", "four-a"},
		// A health policy (customStatus "ready 0/2").
		{"health-policy", false, "{name: four, type: test-healthy, properties: {image: nginx}}", "ready 0/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			createFromYAML(t, ns, fourDeployments, &v1beta1.ComponentDefinition{})
			log := &requestLog{}
			opts := testOptions()
			opts.ReSyncPeriod = time.Hour // the test drives every pass itself
			opts.KstatusHealth = tc.kstatus
			startManager(t, log.wrap(testCfg), opts)
			createApp(t, ns, "metadata: {name: four}\nspec: {components: ["+tc.component+"]}\n")
			msg := waitNotReady(t, ns, "four", v1beta1.ReasonUnhealthy)
			if !strings.Contains(msg, tc.mention) {
				t.Errorf("message %q does not mention %q", msg, tc.mention)
			}
			time.Sleep(2 * time.Second) // let the dispatch's own aftermath settle

			// The same unhealthy objects, pass after pass: the message
			// stays the same, so nothing is written and no event emitted.
			log.reset()
			events := len(appEvents(t, ns, "four"))
			for i := range 6 {
				pokeAndWaitPass(t, ns, "four", i)
			}
			if w := log.writes(); len(w) > 0 {
				t.Errorf("steady-state passes wrote: %v", w)
			}
			if n := len(appEvents(t, ns, "four")); n != events {
				t.Errorf("%d events emitted in a steady state", n-events)
			}
		})
	}
}
