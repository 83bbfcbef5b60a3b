package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const benchLive = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app.oam.dev/name: web, app.oam.dev/namespace: default, app.oam.dev/component: web}
  managedFields:
  - manager: steward
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata":{"f:labels":{"f:app.oam.dev/component":{},"f:app.oam.dev/name":{},"f:app.oam.dev/namespace":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}},"f:resources":{"f:requests":{"f:cpu":{}}}}}}}}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80, protocol: TCP}]
        resources: {requests: {cpu: 500m}}
        terminationMessagePath: /dev/termination-log
        imagePullPolicy: IfNotPresent
      restartPolicy: Always
      dnsPolicy: ClusterFirst
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
`
const benchDesired = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app.oam.dev/name: web, app.oam.dev/namespace: default, app.oam.dev/component: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: "0.5"}}
`

func parse(b *testing.B, s string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		b.Fatal(err)
	}
	return u
}

func BenchmarkDriftServerSide(b *testing.B) {
	live, desired := parse(b, benchLive), parse(b, benchDesired)
	a := Applier{}
	d := a.prepare(desired)
	if f := serverSideDrift(d, live); len(f) != 0 {
		b.Fatalf("drift %v", f)
	}
	b.ReportAllocs()
	for b.Loop() {
		serverSideDrift(a.prepare(desired), live)
	}
}

func BenchmarkDriftClientSide(b *testing.B) {
	live, desired := parse(b, benchLive), parse(b, benchDesired)
	a := Applier{Method: ClientSide}
	m, _ := withLastApplied(a.prepare(desired))
	ann := live.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["app.oam.dev/last-applied-configuration"] = m.GetAnnotations()["app.oam.dev/last-applied-configuration"]
	live.SetAnnotations(ann)
	b.ReportAllocs()
	for b.Loop() {
		m, _ := withLastApplied(a.prepare(desired))
		threeWayPatch(m.GroupVersionKind(), live, m)
	}
}
