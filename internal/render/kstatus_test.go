package render_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/internal/render"
)

func TestKstatusHealth_BuiltinKinds(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want bool
	}{
		{"deployment rolled out", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 2}
status:
  observedGeneration: 2
  replicas: 2
  updatedReplicas: 2
  readyReplicas: 2
  availableReplicas: 2
  conditions: [{type: Available, status: "True"}]`, true},
		{"deployment rolling", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 2}
status: {observedGeneration: 2, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}`, false},
		{"deployment spec not observed", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 3}
spec: {replicas: 1}
status: {observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}`, false},
		{"statefulset ready", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, generation: 1}
spec: {replicas: 1}
status: {observedGeneration: 1, replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1, currentRevision: r1, updateRevision: r1}`, true},
		{"daemonset not scheduled", `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, generation: 1}
status: {observedGeneration: 1, desiredNumberScheduled: 3, currentNumberScheduled: 1, updatedNumberScheduled: 1, numberAvailable: 1, numberReady: 1}`, false},
		{"job complete", `
apiVersion: batch/v1
kind: Job
metadata: {name: once, generation: 1}
status: {succeeded: 1, startTime: "2024-01-01T00:00:00Z", conditions: [{type: Complete, status: "True"}]}`, true},
		{"job failed", `
apiVersion: batch/v1
kind: Job
metadata: {name: once, generation: 1}
status: {failed: 1, startTime: "2024-01-01T00:00:00Z", conditions: [{type: Failed, status: "True"}]}`, false},
		{"service", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {type: ClusterIP, clusterIP: 10.0.0.1}`, true},
		{"configmap", `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: b}`, true},
		{"pvc pending", `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
status: {phase: Pending}`, false},
		{"pvc bound", `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
status: {phase: Bound}`, true},
		{"custom resource with Ready=False", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, generation: 1}
status: {observedGeneration: 1, conditions: [{type: Ready, status: "False", reason: Waiting}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := yaml.YAMLToJSON([]byte(tt.obj))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				t.Fatal(err)
			}
			h := render.KstatusHealth(u)
			if h.Healthy != tt.want {
				t.Fatalf("healthy=%v (%q, %v), want %v", h.Healthy, h.Message, h.Details, tt.want)
			}
			if h.Message == "" {
				t.Errorf("no message")
			}
		})
	}
	if h := render.KstatusHealth(nil); h.Healthy || h.Message != "not found" {
		t.Errorf("nil object: %+v", h)
	}
}
