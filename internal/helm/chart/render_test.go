package chart_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/steward-oam/steward/internal/helm/chart"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
)

func TestRender_ValuesNamespaceAndOrder(t *testing.T) {
	archive := charttest.Archive("demo", "1.2.3", map[string]string{
		"values.yaml": "greeting: hello\n",
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
data:
  greeting: {{ .Values.greeting }}
`,
		"templates/role.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-role
`,
		"templates/test.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  containers: [{name: t, image: busybox}]
`,
		"templates/job.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  template: {spec: {restartPolicy: Never, containers: [{name: m, image: busybox}]}}
`,
		"crds/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
		"templates/NOTES.txt": "installed {{ .Release.Name }}",
	})
	r, err := chart.Render(archive, map[string]any{"greeting": "bonjour"}, chart.Options{ReleaseName: "web", Namespace: "team", IncludeCRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.CRDs) != 1 || r.CRDs[0]["kind"] != "CustomResourceDefinition" {
		t.Fatalf("crds = %v, want the chart's crds/ apart from its objects", r.CRDs)
	}
	var got []string
	for _, o := range r.Objects {
		md := o["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		got = append(got, o["kind"].(string)+"/"+ns+"/"+md["name"].(string))
	}
	// Helm's install order: ConfigMap before ClusterRole.
	want := []string{"ConfigMap/team/web-cm", "ClusterRole//web-role"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	if cm := r.Objects[0]; cm["data"].(map[string]any)["greeting"] != "bonjour" {
		t.Errorf("values not applied: %v", cm["data"])
	}
	if r.Notes != "installed web" || r.Chart != "demo" || r.Version != "1.2.3" {
		t.Errorf("notes/chart = %q %s %s", r.Notes, r.Chart, r.Version)
	}
	if len(r.Hooks) != 1 || !strings.Contains(r.Hooks[0], "Job/web-migrate (pre-install,pre-upgrade)") {
		t.Errorf("hooks = %v, want the migrate job listed as not run", r.Hooks)
	}

	// Without CRDs, with tests kept.
	r, err = chart.Render(archive, nil, chart.Options{ReleaseName: "web", Namespace: "team", KeepTests: true})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range r.Objects {
		kinds = append(kinds, o["kind"].(string))
	}
	if strings.Join(kinds, ",") != "ConfigMap,ClusterRole,Pod" || len(r.CRDs) != 0 {
		t.Errorf("kinds = %v, crds %d", kinds, len(r.CRDs))
	}
}

func TestRender_Errors(t *testing.T) {
	bad := charttest.Archive("bad", "0.1.0", map[string]string{
		"templates/cm.yaml": "{{ required \"image.tag is required\" .Values.image.tag }}",
	})
	_, err := chart.Render(bad, nil, chart.Options{ReleaseName: "x", Namespace: "y"})
	var ce *chart.Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "bad-0.1.0") {
		t.Fatalf("err = %v, want a chart.Error naming the chart", err)
	}
	schema := charttest.Archive("strict", "0.1.0", map[string]string{
		"values.schema.json": `{"type":"object","properties":{"replicas":{"type":"integer"}}}`,
		"templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	})
	if _, err := chart.Render(schema, map[string]any{"replicas": "three"}, chart.Options{ReleaseName: "x", Namespace: "y"}); err == nil || !strings.Contains(err.Error(), "replicas") {
		t.Fatalf("values not fitting the schema: err = %v", err)
	}
	if _, err := chart.Render([]byte("not a tgz"), nil, chart.Options{}); !errors.As(err, &ce) {
		t.Fatalf("garbage archive: err = %v", err)
	}
}
