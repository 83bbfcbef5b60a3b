package chart

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestChart_SchemaRejectsBadValues: a mistyped or out-of-range value stops
// `helm template` and `helm lint` with the schema's message, before
// anything reaches the cluster (or a controller that would crash-loop on
// the flag).
func TestChart_SchemaRejectsBadValues(t *testing.T) {
	cases := []struct {
		set  string // a --set argument
		want string // part of helm's error
	}{
		{"controllerArgs.driftDetection=sometimes", "/controllerArgs/driftDetection"},
		{"replicaCount=-1", "/replicaCount"},
		{"controllerArgs.trackerCompression=lz4", "/controllerArgs/trackerCompression"},
		{"controllerArgs.concurrentReconciles=0", "/controllerArgs/concurrentReconciles"},
		{"controllerArgs.cueEvaluators=0", "/controllerArgs/cueEvaluators"},
		{"controllerArgs.cueEvalMemoryLimit=lots", "/controllerArgs/cueEvalMemoryLimit"},
		{"controllerArgs.cueEvalTimeout=0", "/controllerArgs/cueEvalTimeout"},
		{"controllerArgs.reSyncPeriod=soon", "/controllerArgs/reSyncPeriod"},
		{"controllerArgs.watchFullReadPeriod=hourly", "/controllerArgs/watchFullReadPeriod"},
		{"controllerArgs.cachedGVKs={Deployment}", "/controllerArgs/cachedGVKs/0"},
		{"kubeAPI.burst=0", "/kubeAPI/burst"},
		{"metrics.port=70000", "/metrics/port"},
		{"image.pullPolicy=Sometimes", "/image/pullPolicy"},
		{"leaderElection.enabled=yes", "/leaderElection/enabled"},
		{"podDisruptionBudget.minAvailable=half", "/podDisruptionBudget/minAvailable"},
		{"metrics.serviceMonitor.interval=often", "/metrics/serviceMonitor/interval"},
		{"extraArgs={zap-log-level=4}", "/extraArgs/0"},
		// A misspelt value would otherwise be ignored without a word.
		{"replicas=2", "'replicas' not allowed"},
		{"controllerArgs.resyncPeriod=1m", "'resyncPeriod' not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.set, func(t *testing.T) {
			_, err := runHelm(t, "template", "steward", "charts/steward", "--kube-version", kubeVersion, "--set", tc.set)
			if err == nil || !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("helm template --set %s: got %v, want a schema error at %s", tc.set, err, tc.want)
			}
		})
	}
	out, err := runHelm(t, "lint", "--strict", "charts/steward", "--kube-version", kubeVersion,
		"--set", "controllerArgs.driftDetection=sometimes")
	if err == nil || !strings.Contains(string(out), "/controllerArgs/driftDetection") {
		t.Fatalf("helm lint accepted driftDetection=sometimes: %v\n%s", err, out)
	}
}

// TestChart_SchemaAcceptsCustomValues: every value set away from its
// default (testdata/values-custom.yaml) lints, and the controller accepts
// the flags it renders.
func TestChart_SchemaAcceptsCustomValues(t *testing.T) {
	values := filepath.Join("test", "chart", "testdata", "values-custom.yaml")
	if out, err := runHelm(t, "lint", "--strict", "charts/steward", "--kube-version", kubeVersion, "-f", values); err != nil {
		t.Fatalf("helm lint -f %s: %v\n%s", values, err, out)
	}
	objs := render(t, "-f", values)
	opts := parseControllerFlags(t, containerArgs(t, one(t, objs, "Deployment"))[1:])
	if opts.DriftDetection != "timer" || opts.WatchFullReadPeriod != 30*time.Minute || opts.TrackerCompression != "" || opts.RevisionLimit != 0 || opts.KubeAPIQPS != 50.5 ||
		opts.Budget.Evaluators != 4 || opts.Budget.Timeout != 30*time.Second || opts.Budget.Memory.String() != "1Gi" || opts.Budget.RenderSize.String() != "64Mi" {
		t.Fatalf("options from values-custom.yaml: %+v", opts)
	}
}

// TestChart_SchemaDescribesEveryValue walks values.yaml: each value must
// have a schema, so a value added without one fails here rather than
// going unchecked.
func TestChart_SchemaDescribesEveryValue(t *testing.T) {
	var values map[string]any
	data, err := os.ReadFile(filepath.Join(root, "charts", "steward", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	data, err = os.ReadFile(filepath.Join(root, "charts", "steward", "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	var walk func(path string, value any, s map[string]any)
	walk = func(path string, value any, s map[string]any) {
		if s == nil {
			t.Errorf("values.yaml %s has no schema", path)
			return
		}
		if _, typed := s["type"]; !typed && s["oneOf"] == nil && s["anyOf"] == nil && s["enum"] == nil {
			t.Errorf("schema of %s names no type", path)
		}
		obj, ok := value.(map[string]any)
		props, fixed := s["properties"].(map[string]any)
		if !ok || !fixed {
			return // a leaf, or a free-form map such as podAnnotations
		}
		if s["additionalProperties"] != false {
			t.Errorf("schema of %s allows unknown keys: a misspelt value would pass", path)
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			child, _ := props[k].(map[string]any)
			walk(path+"."+k, obj[k], child)
		}
	}
	walk("", values, schema)
}

// TestChart_DefaultImageIsTheImageMakeImageBuilds: the Deployment runs the
// image `make image` tags (ghcr.io/steward-oam/steward:<appVersion>) with
// the binary's path inside it.
func TestChart_DefaultImageIsTheImageMakeImageBuilds(t *testing.T) {
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	data, err := os.ReadFile(filepath.Join(root, "charts", "steward", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &chart); err != nil || chart.AppVersion == "" {
		t.Fatalf("Chart.yaml appVersion %q: %v", chart.AppVersion, err)
	}
	containers, _, _ := unstructured.NestedSlice(one(t, render(t), "Deployment").Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	if want := "ghcr.io/steward-oam/steward:" + chart.AppVersion; c["image"] != want {
		t.Errorf("image %v, want %s", c["image"], want)
	}
	if cmd := toStrings(c["command"]); !slices.Equal(cmd, []string{"/steward"}) {
		t.Errorf("command %v, want [/steward], the image's entrypoint", cmd)
	}
}

// TestChart_ServiceMonitorScrapesTheMetricsService: enabled, the
// ServiceMonitor selects the metrics Service (and nothing else of the
// release) and scrapes its named port; it refuses to render without a
// metrics Service.
func TestChart_ServiceMonitorScrapesTheMetricsService(t *testing.T) {
	if objs := render(t); len(find(objs, "ServiceMonitor")) != 0 {
		t.Fatal("ServiceMonitor rendered by default")
	}
	objs := render(t, "--set", "metrics.serviceMonitor.enabled=true,metrics.serviceMonitor.labels.release=prom,metrics.serviceMonitor.interval=15s")
	sm := one(t, objs, "ServiceMonitor")
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetNamespace() != releaseNamespace {
		t.Errorf("ServiceMonitor %s in %q", sm.GetAPIVersion(), sm.GetNamespace())
	}
	if sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor labels %v, want release=prom", sm.GetLabels())
	}
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	for _, o := range objs {
		if o.GetKind() != "Service" {
			continue
		}
		if selects(selector, o.GetLabels()) != strings.HasSuffix(o.GetName(), "-metrics") {
			t.Errorf("ServiceMonitor selector %v and Service %s (labels %v)", selector, o.GetName(), o.GetLabels())
		}
	}
	var svc *unstructured.Unstructured
	for _, o := range find(objs, "Service") {
		if strings.HasSuffix(o.GetName(), "-metrics") {
			svc = o
		}
	}
	if svc == nil {
		t.Fatal("no metrics Service")
	}
	if !selects(selector, svc.GetLabels()) {
		t.Fatalf("ServiceMonitor selector %v does not select the metrics Service %v", selector, svc.GetLabels())
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(endpoints) != 1 || len(ports) != 1 {
		t.Fatalf("%d endpoints, %d Service ports; want 1 each", len(endpoints), len(ports))
	}
	ep, port := endpoints[0].(map[string]any), ports[0].(map[string]any)
	if ep["port"] != port["name"] || ep["path"] != "/metrics" || ep["interval"] != "15s" {
		t.Errorf("endpoint %v, Service port %v", ep, port)
	}

	_, err := runHelm(t, "template", "steward", "charts/steward", "--kube-version", kubeVersion,
		"--set", "metrics.serviceMonitor.enabled=true,metrics.enabled=false")
	if err == nil || !strings.Contains(err.Error(), "needs metrics.enabled") {
		t.Fatalf("got %v, want a refusal without metrics", err)
	}
}

// TestChart_PodDisruptionBudgetGuardsTheControllerPods: enabled, the PDB
// selects the Deployment's pods with the budget asked for, a number or a
// percentage, and refuses both budgets at once.
func TestChart_PodDisruptionBudgetGuardsTheControllerPods(t *testing.T) {
	if objs := render(t); len(find(objs, "PodDisruptionBudget")) != 0 {
		t.Fatal("PodDisruptionBudget rendered by default")
	}
	for _, tc := range []struct {
		args      []string
		field     string
		wantValue string // as fmt.Sprint prints it
	}{
		{[]string{"--set", "podDisruptionBudget.enabled=true"}, "maxUnavailable", "1"},
		{[]string{"--set", "podDisruptionBudget.enabled=true,podDisruptionBudget.maxUnavailable=,podDisruptionBudget.minAvailable=50%"},
			"minAvailable", "50%"},
	} {
		objs := render(t, tc.args...)
		pdb := one(t, objs, "PodDisruptionBudget")
		spec, _, _ := unstructured.NestedMap(pdb.Object, "spec")
		if v, ok := spec[tc.field]; !ok || fmt.Sprint(v) != tc.wantValue || len(spec) != 2 {
			t.Errorf("%v: PDB spec %v, want only %s: %v and a selector", tc.args, spec, tc.field, tc.wantValue)
		}
		selector, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
		podLabels, _, _ := unstructured.NestedStringMap(one(t, objs, "Deployment").Object, "spec", "template", "metadata", "labels")
		if len(selector) == 0 || !selects(selector, podLabels) {
			t.Errorf("PDB selector %v does not select the controller's pods %v", selector, podLabels)
		}
	}
	_, err := runHelm(t, "template", "steward", "charts/steward", "--kube-version", kubeVersion,
		"--set", "podDisruptionBudget.enabled=true,podDisruptionBudget.minAvailable=1")
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("got %v, want a refusal of minAvailable and maxUnavailable together", err)
	}
}

// selects reports whether every pair of selector is among labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
