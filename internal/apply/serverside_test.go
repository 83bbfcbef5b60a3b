package apply

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// These tests apply against a real API server: server-side apply's field
// ownership, conflicts and upgrades are the API server's semantics. They
// share the test binary's control plane (internal/controller/
// controllertest, started by the first test that needs it; TestMain is in
// suite_test.go) with the package's stories, which run the whole
// controller (serverside_story_test.go).

// testClient is a client of the control plane, as its admin; the test is
// skipped without one (KUBEBUILDER_ASSETS).
func testClient(t *testing.T) client.Client {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs an API server (KUBEBUILDER_ASSETS)")
	}
	_, c := controllertest.ControlPlane(t)
	return c
}

var ssa = Applier{Owner: Owner{Name: "web", Namespace: "default"}}

func manifest(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[v1beta1.LabelAppName], l[v1beta1.LabelAppNamespace] = "web", "default"
	u.SetLabels(l)
	return u
}

func deployment(t *testing.T, name, image string) *unstructured.Unstructured {
	return manifest(t, fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: default}
spec:
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: web, image: %s, resources: {requests: {cpu: "0.5"}}}]
`, name, image))
}

// setImage sets the first container's image of a Deployment.
func setImage(dep *unstructured.Unstructured, image string) {
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = image
	_ = unstructured.SetNestedSlice(dep.Object, containers, "spec", "template", "spec", "containers")
}

func imageOf(dep *unstructured.Unstructured) any {
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	return containers[0].(map[string]any)["image"]
}

func get(t *testing.T, c client.Client, ref *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	live, err := readLive(context.Background(), c, ref)
	if err != nil || live == nil {
		t.Fatalf("reading %s: %v (nil: %v)", describe(ref), err, live == nil)
	}
	return live
}

func mustApply(t *testing.T, c client.Client, a Applier, obj *unstructured.Unstructured, opts Options, want Action) Result {
	t.Helper()
	res, err := a.Apply(context.Background(), c, obj, opts)
	if err != nil {
		t.Fatalf("apply %s: %v", describe(obj), err)
	}
	if res.Action != want {
		t.Fatalf("apply %s: %s (fields %v), want %s", describe(obj), res.Action, res.Fields, want)
	}
	return res
}

func TestServerSide_SteadyStateWritesNothingAndDriftIsRepaired(t *testing.T) {
	c := testClient(t)
	d := deployment(t, "steady", "nginx:1.26")
	mustApply(t, c, ssa, d, Options{ExpectMissing: true}, Created)
	rv := get(t, c, d).GetResourceVersion()
	for range 3 {
		mustApply(t, c, ssa, d, Options{}, Unchanged)
	}
	if got := get(t, c, d).GetResourceVersion(); got != rv {
		t.Fatalf("a steady apply wrote the object: resourceVersion %s -> %s", rv, got)
	}
	// A hand edit is drift; the repair names the field and takes it back.
	live := get(t, c, d)
	live.Object["spec"].(map[string]any)["replicas"] = int64(7)
	setImage(live, "nginx:edited")
	if err := c.Update(context.Background(), live, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, c, ssa, d, Options{}, Configured)
	if !strings.Contains(strings.Join(res.Fields, ","), "image") {
		t.Errorf("drift fields %v do not name the image", res.Fields)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Manager != "kubectl-edit" || !strings.Contains(res.Conflicts[0].Field, "image") {
		t.Errorf("conflicts = %+v, want the image taken from kubectl-edit", res.Conflicts)
	}
	after := get(t, c, d)
	if img := imageOf(after); img != "nginx:1.26" {
		t.Errorf("image = %v after repair", img)
	}
	// Not in the manifest: another manager's replicas are not touched.
	if r, _, _ := unstructured.NestedInt64(after.Object, "spec", "replicas"); r != 7 {
		t.Errorf("replicas = %d, want 7 (set by another manager, not in the manifest)", r)
	}
	mustApply(t, c, ssa, d, Options{}, Unchanged)
}

func TestServerSide_ExpectMissingNeverWritesAnExistingObject(t *testing.T) {
	c := testClient(t)
	foreign := deployment(t, "foreign", "nginx:1.26")
	foreign.SetLabels(nil)
	if err := c.Create(context.Background(), foreign.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	before := get(t, c, foreign)
	_, err := ssa.Apply(context.Background(), c, deployment(t, "foreign", "nginx:1.26"), Options{ExpectMissing: true})
	if err == nil || !strings.Contains(err.Error(), "not managed by any application") {
		t.Fatalf("apply over a foreign object: %v, want an ownership error", err)
	}
	if after := get(t, c, foreign); after.GetResourceVersion() != before.GetResourceVersion() || len(after.GetLabels()) != 0 {
		t.Fatalf("the foreign object was written: labels %v", after.GetLabels())
	}
}

// countingClient is a client of the suite's API server that counts the
// requests it sends, by verb.
func countingClient(t *testing.T) (client.Client, func() map[string]int) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs an API server (KUBEBUILDER_ASSETS)")
	}
	cfg, _ := controllertest.ControlPlane(t)
	cfg = rest.CopyConfig(cfg)
	var mu sync.Mutex
	counts := map[string]int{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			counts[r.Method]++
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	c, err := client.New(cfg, client.Options{Scheme: controllertest.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := maps.Clone(counts)
		clear(counts)
		return out
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An object no version had before is created in one request (issue 49),
// and its fields are Steward's applied fields from the start: a field the
// manifest drops later is removed. An object of the same name that exists
// after all (a foreign one, or one another field manager holds) is never
// written into: the one-request create is refused and the object is read
// and judged as any other.
func TestServerSide_CreateInOneRequestNeverWritesAnExistingObject(t *testing.T) {
	c, requests := countingClient(t)
	ctx := context.Background()
	cm := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: one-request, namespace: default}, data: {a: "1", b: "2"}}`)
	// The client discovers the kind's resource on its first request.
	if _, err := readLive(ctx, c, manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: warm-up, namespace: default}}`)); err != nil {
		t.Fatal(err)
	}
	requests()
	res := mustApply(t, c, ssa, cm, Options{ExpectMissing: true}, Created)
	if got := requests(); got["PATCH"] != 1 || len(got) != 1 {
		t.Errorf("creating a missing object sent %v, want one PATCH", got)
	}
	if rv := res.Live.GetResourceVersion(); rv == "" || rv == createGuard {
		t.Errorf("the created object's resourceVersion is %q", rv)
	}
	live := get(t, c, cm)
	if !ssa.appliedServerSide(live) {
		t.Errorf("the created object has no applied fields of %s: %+v", FieldManager, live.GetManagedFields())
	}
	next := cm.DeepCopy()
	unstructured.RemoveNestedField(next.Object, "data", "b")
	mustApply(t, c, ssa, next, Options{}, Configured)
	if data, _, _ := unstructured.NestedStringMap(get(t, c, cm).Object, "data"); data["b"] != "" || data["a"] != "1" {
		t.Errorf("data = %v, want b removed", data)
	}

	// A foreign object of the same name, with and without fields the
	// manifest sets to other values.
	for name, data := range map[string]map[string]any{"foreign-same": {"a": "1"}, "foreign-other": {"a": "theirs", "z": "9"}} {
		foreign := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default"}, "data": data}}
		if err := c.Create(ctx, foreign, client.FieldOwner("someone")); err != nil {
			t.Fatal(err)
		}
		before := get(t, c, foreign)
		mine := manifest(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: default}, data: {a: "1"}}`, name))
		_, err := ssa.Apply(ctx, c, mine, Options{ExpectMissing: true})
		if err == nil || !strings.Contains(err.Error(), "not managed by any application") {
			t.Errorf("%s: %v, want an ownership error", name, err)
		}
		after := get(t, c, foreign)
		if after.GetResourceVersion() != before.GetResourceVersion() || len(after.GetLabels()) != 0 || len(after.GetManagedFields()) != len(before.GetManagedFields()) {
			t.Errorf("%s was written into: labels %v, managed fields %+v", name, after.GetLabels(), after.GetManagedFields())
		}
	}

	// The Application's own object, there already (a version recorded it
	// before a restart lost the record): taken as it is.
	own := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: own-there, namespace: default}, data: {a: "1"}}`)
	mustApply(t, c, ssa, own, Options{}, Created)
	rv := get(t, c, own).GetResourceVersion()
	mustApply(t, c, ssa, own, Options{ExpectMissing: true}, Unchanged)
	if got := get(t, c, own).GetResourceVersion(); got != rv {
		t.Errorf("an unchanged object of the Application was written: %s -> %s", rv, got)
	}
}

func TestServerSide_RemovedFieldIsRemoved(t *testing.T) {
	c := testClient(t)
	cm := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: removed, namespace: default, labels: {tier: web}}, data: {a: "1", b: "2"}}`)
	mustApply(t, c, ssa, cm, Options{}, Created)
	// Another manager's key stays; Steward's dropped key goes.
	live := get(t, c, cm)
	_ = unstructured.SetNestedField(live.Object, "3", "data", "theirs")
	if err := c.Update(context.Background(), live, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	next := cm.DeepCopy()
	unstructured.RemoveNestedField(next.Object, "data", "b")
	unstructured.RemoveNestedField(next.Object, "metadata", "labels", "tier")
	res := mustApply(t, c, ssa, next, Options{}, Configured)
	data, _, _ := unstructured.NestedStringMap(get(t, c, cm).Object, "data")
	if _, ok := data["b"]; ok || data["theirs"] != "3" || data["a"] != "1" {
		t.Errorf("data = %v, want b removed and theirs kept (fields %v)", data, res.Fields)
	}
	if _, ok := get(t, c, cm).GetLabels()["tier"]; ok {
		t.Error("the dropped label is still there")
	}
	mustApply(t, c, ssa, next, Options{}, Unchanged)
}

func TestServerSide_LargeConfigMap(t *testing.T) {
	c := testClient(t)
	cm := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: large, namespace: default}}`)
	_ = unstructured.SetNestedField(cm.Object, strings.Repeat("x", 900<<10), "data", "blob")
	mustApply(t, c, ssa, cm, Options{ExpectMissing: true}, Created)
	mustApply(t, c, ssa, cm, Options{}, Unchanged)
	live := get(t, c, cm)
	_ = unstructured.SetNestedField(live.Object, "edited", "data", "blob")
	if err := c.Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, ssa, cm, Options{}, Configured)
	if v, _, _ := unstructured.NestedString(get(t, c, cm).Object, "data", "blob"); len(v) != 900<<10 {
		t.Errorf("blob is %d bytes after repair", len(v))
	}
	// The same ConfigMap cannot be applied client-side: the annotation
	// would hold it all.
	csa := Applier{Owner: ssa.Owner, Method: ClientSide}
	big := cm.DeepCopy()
	big.SetName("large-csa")
	if _, err := csa.Apply(context.Background(), c, big, Options{}); err == nil || !strings.Contains(err.Error(), "Too long") {
		t.Errorf("client-side apply of 900 KiB: %v, want the annotation refused as too long", err)
	}
}

func TestServerSide_UpgradesAClientSideAppliedObjectInPlace(t *testing.T) {
	c := testClient(t)
	csa := Applier{Owner: ssa.Owner, Method: ClientSide}
	old := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: upgraded, namespace: default, annotations: {note: old}}, data: {kept: "1", dropped: "2"}}`)
	mustApply(t, c, csa, old, Options{}, Created)
	before := get(t, c, old)
	if before.GetAnnotations()[v1beta1.AnnotationLastApplied] == "" {
		t.Fatal("client-side apply left no annotation")
	}
	next := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: upgraded, namespace: default}, data: {kept: "1"}}`)
	res := mustApply(t, c, ssa, next, Options{}, Configured)
	after := get(t, c, next)
	if after.GetUID() != before.GetUID() {
		t.Error("the object was re-created")
	}
	data, _, _ := unstructured.NestedStringMap(after.Object, "data")
	if _, ok := data["dropped"]; ok || data["kept"] != "1" {
		t.Errorf("data = %v, want dropped removed (fields %v)", data, res.Fields)
	}
	if ann := after.GetAnnotations(); ann[v1beta1.AnnotationLastApplied] != "" || ann["note"] != "" {
		t.Errorf("annotations = %v, want the last-applied and the dropped note gone", ann)
	}
	mustApply(t, c, ssa, next, Options{}, Unchanged)
	// Later drift is repaired server-side.
	_ = unstructured.SetNestedField(after.Object, "9", "data", "kept")
	if err := c.Update(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, ssa, next, Options{}, Configured)
	if v, _, _ := unstructured.NestedString(get(t, c, next).Object, "data", "kept"); v != "1" {
		t.Errorf("kept = %s after repair", v)
	}
}

func TestServerSide_ReportOnlyAndApplyOnceWriteNothing(t *testing.T) {
	c := testClient(t)
	d := deployment(t, "once", "nginx:1.26")
	mustApply(t, c, ssa, d, Options{}, Created)
	live := get(t, c, d)
	setImage(live, "nginx:edited")
	if err := c.Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	rv := get(t, c, d).GetResourceVersion()
	res := mustApply(t, c, ssa, d, Options{ReportOnly: true}, Drifted)
	if !strings.Contains(strings.Join(res.Fields, ","), "image") {
		t.Errorf("drift report %v does not name the image", res.Fields)
	}
	mustApply(t, c, ssa, d, Options{KeepLiveFields: []string{"spec.template.spec.containers[0].image"}}, Unchanged)
	mustApply(t, c, ssa, d, Options{KeepLiveFields: []string{"*"}}, Unchanged)
	if got := get(t, c, d).GetResourceVersion(); got != rv {
		t.Errorf("report-only or apply-once wrote the object")
	}
}

func TestServerSide_LabelsRemovedByHandComeBackButAReleasedObjectStaysFree(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	cm := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: relabel, namespace: default}, data: {a: "1"}}`)
	mustApply(t, c, ssa, cm, Options{}, Created)
	strip := func() {
		live := get(t, c, cm)
		live.SetLabels(nil)
		if err := c.Update(ctx, live, client.FieldOwner("kubectl-label")); err != nil {
			t.Fatal(err)
		}
	}
	strip()
	mustApply(t, c, ssa, cm, Options{}, Configured)
	if l := get(t, c, cm).GetLabels(); l[v1beta1.LabelAppName] != "web" {
		t.Fatalf("labels = %v, want the ownership labels back", l)
	}
	if _, err := ssa.Release(ctx, c, cm); err != nil {
		t.Fatal(err)
	}
	released := get(t, c, cm)
	for _, e := range released.GetManagedFields() {
		if e.Manager == FieldManager {
			t.Errorf("released object keeps Steward's field manager entry %+v", e)
		}
	}
	if _, err := ssa.Apply(ctx, c, cm, Options{}); err == nil || !strings.Contains(err.Error(), "not managed by any application") {
		t.Fatalf("apply after release: %v, want an ownership error", err)
	}
}

func TestServerSide_EmptyMapsAndListsAreNotDrift(t *testing.T) {
	c := testClient(t)
	d := manifest(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: empty, namespace: default, annotations: {}}
spec:
  selector: {matchLabels: {app: empty}}
  template:
    metadata: {labels: {app: empty}, annotations: {}}
    spec:
      containers: [{name: web, image: nginx, env: [], args: [], resources: {}}]
      volumes: []
`)
	mustApply(t, c, ssa, d, Options{}, Created)
	mustApply(t, c, ssa, d, Options{}, Unchanged)
	cm := manifest(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: empty, namespace: default}, data: {}}`)
	mustApply(t, c, ssa, cm, Options{}, Created)
	mustApply(t, c, ssa, cm, Options{}, Unchanged)
}

// steward diff applies through a dry-run client: the result and the
// fields another manager would lose come back, nothing is written.
func TestServerSide_DryRunReportsConflictsAndWritesNothing(t *testing.T) {
	c := testClient(t)
	ctx := context.Background()
	d := deployment(t, "dry", "nginx:1.26")
	mustApply(t, c, ssa, d, Options{}, Created)
	live := get(t, c, d)
	setImage(live, "nginx:edited")
	if err := c.Update(ctx, live, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	rv := get(t, c, d).GetResourceVersion()
	res := mustApply(t, client.NewDryRunClient(c), ssa, d, Options{}, Configured)
	if len(res.Conflicts) != 1 || res.Conflicts[0].Manager != "kubectl-edit" {
		t.Errorf("conflicts = %+v, want the image from kubectl-edit", res.Conflicts)
	}
	if img := imageOf(res.Live); img != "nginx:1.26" {
		t.Errorf("the dry run's result has image %v", img)
	}
	if got := get(t, c, d).GetResourceVersion(); got != rv {
		t.Error("the dry run wrote the object")
	}
}
