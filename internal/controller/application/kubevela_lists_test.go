package application

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Stories of definitions written for KubeVela that Steward renders as
// KubeVela does (issue 29): legacy spec.extension templates, CUE list
// arithmetic from before CUE v0.11, and status parts reading
// context.status.

// waitDefinitionReady waits until a definition of ns reports Ready=True and
// returns its message.
func waitDefinitionReady(t *testing.T, ns string, def client.Object) string {
	t.Helper()
	var msg string
	eventually(t, 20*time.Second, def.GetName()+" Ready=True", func() error {
		if err := testClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: def.GetName()}, def); err != nil {
			return err
		}
		var conds []metav1.Condition
		switch d := def.(type) {
		case *v1beta1.ComponentDefinition:
			conds = d.Status.Conditions
		case *v1beta1.TraitDefinition:
			conds = d.Status.Conditions
		}
		c := meta.FindStatusCondition(conds, v1beta1.ConditionReady)
		if c == nil || c.Status != "True" || c.ObservedGeneration != def.GetGeneration() {
			return fmt.Errorf("ready = %+v", c)
		}
		msg = c.Message
		return nil
	})
	return msg
}

// setReadyReplicas plays the Deployment controller, which envtest lacks.
func setReadyReplicas(t *testing.T, ns, name string, ready int32) {
	t.Helper()
	eventually(t, 10*time.Second, "deployment "+name+" status", func() error {
		dep, err := getDeployment(t, ns, name)
		if err != nil {
			return err
		}
		dep.Status.Replicas, dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = ready, ready, ready
		return testClient.Status().Update(context.Background(), dep)
	})
}

// TestKubeVelaCompat_ListArithmeticRenders: a definition adding lists with
// +, which CUE v0.11 and later reject, compiles (its definition is Ready)
// and renders the concatenated lists, as KubeVela renders it.
func TestKubeVelaCompat_ListArithmeticRenders(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	def := &v1beta1.ComponentDefinition{}
	createFromYAML(t, ns, `
metadata: {name: list-worker}
spec:
  workload: {definition: {apiVersion: apps/v1, kind: Deployment}}
  status:
    customStatus: |
      _words: ["env"] + ["set"]
      message: "\(_words[0]) \(_words[1])"
  schematic:
    cue:
      template: |
        _defaultEnv: [{name: "APP", value: context.appName}]
        output: {
          apiVersion: "apps/v1"
          kind:       "Deployment"
          spec: {
            selector: matchLabels: app: context.name
            template: {
              metadata: labels: app: context.name
              spec: containers: [{
                name:    context.name
                image:   parameter.image
                env:     _defaultEnv + parameter.env
                command: ["/bin/sh", "-c"] + parameter.cmd
                args:    ["-v"] * 2
              }]
            }
          }
        }
        parameter: {
          image: string
          env:   *[] | [...{name: string, value: string}]
          cmd:   [...string]
        }
`, def)
	if msg := waitDefinitionReady(t, ns, def); msg != "template compiles" {
		t.Errorf("definition says %q", msg)
	}

	createApp(t, ns, `
metadata: {name: lists}
spec:
  components:
    - name: worker
      type: list-worker
      properties: {image: busybox, env: [{name: MODE, value: batch}], cmd: ["sleep 60"]}
`)
	app := waitReady(t, ns, "lists")
	if s := app.Status.Services; len(s) != 1 || s[0].Message != "env set" {
		t.Errorf("services %+v: want the customStatus that adds lists", s)
	}
	dep, err := getDeployment(t, ns, "worker")
	if err != nil {
		t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	env := []corev1.EnvVar{{Name: "APP", Value: "lists"}, {Name: "MODE", Value: "batch"}}
	if !reflect.DeepEqual(c.Env, env) || !reflect.DeepEqual(c.Command, []string{"/bin/sh", "-c", "sleep 60"}) ||
		!reflect.DeepEqual(c.Args, []string{"-v", "-v"}) {
		t.Errorf("container env %v command %v args %v", c.Env, c.Command, c.Args)
	}
}
