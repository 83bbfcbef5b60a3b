package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/localcp"
	"github.com/steward-oam/steward/internal/readmodel"
	"github.com/steward-oam/steward/internal/testcp"
	"github.com/steward-oam/steward/internal/watch"
)

// shopApp is delivered to the hub and a spoke. Drift is reported, not
// repaired, so that the drift a test makes stays for the commands to see.
func shopApp(version, image string) string {
	return fmt.Sprintf(`
apiVersion: core.oam.dev/v1beta1
kind: Application
metadata:
  name: shop
  namespace: default
  annotations:
    app.oam.dev/publishVersion: %q
    app.oam.dev/drift-mode: report
spec:
  components:
    - name: frontend
      type: webservice
      properties: {image: %q}
      traits:
        - {type: scaler, properties: {replicas: 1}}
        - {type: expose, properties: {port: [80]}}
    - name: config
      type: k8s-objects
      properties:
        objects:
          - {apiVersion: v1, kind: ConfigMap, metadata: {name: shop-config}, data: {greeting: hello}}
  policies:
    - {name: everywhere, type: topology, properties: {clusters: [local, spoke]}}
`, version, image)
}

const blogApp = `
apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: blog, namespace: team-b}
spec:
  components:
    - name: posts
      type: k8s-objects
      properties:
        objects:
          - {apiVersion: v1, kind: ConfigMap, metadata: {name: posts}, data: {a: b}}
`

// delivered is a hub with the built-in definitions, a joined spoke and the
// real controller, which has delivered shop (two publishVersions) and blog.
type delivered struct {
	hubConfig *rest.Config
	hub       client.Client
	spoke     *testcp.Plane
	spokeC    client.Client
}

func deliver(t *testing.T) *delivered {
	t.Helper()
	ctx := context.Background()
	logf.SetLogger(logr.Discard())
	planes := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd")}}, "hub", "spoke")
	d := &delivered{hubConfig: planes[0].Config, spoke: planes[1]}
	var err error
	if d.hub, err = NewClient(d.hubConfig); err != nil {
		t.Fatal(err)
	}
	if d.spokeC, err = NewClient(d.spoke.Config); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"vela-system", "team-b"} {
		if err := d.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := localcp.ApplyDefinitions(ctx, d.hub, filepath.Join("..", "..", "config", "definitions"), "vela-system"); err != nil {
		t.Fatal(err)
	}
	if _, err := Join(ctx, d.hub, JoinOptions{KubeconfigPath: d.spoke.KubeconfigPath, Name: "spoke"}); err != nil {
		t.Fatal(err)
	}

	opts := manager.NewOptions()
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.ReSyncPeriod, opts.MinReconcileInterval, opts.ReSyncJitter = 2*time.Second, time.Second, 0
	// Timer mode: the spoke is stopped below to make it unreachable, and a
	// kube-apiserver serving open watches takes longer to stop on SIGTERM
	// than envtest waits (20 s). What the read commands show does not
	// depend on the mode.
	opts.DriftDetection = watch.ModeTimer
	mgr, err := manager.NewManager(d.hubConfig, opts)
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = mgr.Start(mctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	d.create(t, shopApp("1.0", "nginx:1.26"))
	d.create(t, blogApp)
	d.waitDispatched(t, "default", "shop", "shop-1.0")
	d.update(t, shopApp("2.0", "nginx:1.27"))
	d.waitDispatched(t, "default", "shop", "shop-2.0")
	d.waitDispatched(t, "team-b", "blog", "blog-v1")
	return d
}

func (d *delivered) create(t *testing.T, doc string) {
	t.Helper()
	app := &v1beta1.Application{}
	if err := yaml.UnmarshalStrict([]byte(doc), app); err != nil {
		t.Fatal(err)
	}
	if err := d.hub.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
}

func (d *delivered) update(t *testing.T, doc string) {
	t.Helper()
	want := &v1beta1.Application{}
	if err := yaml.UnmarshalStrict([]byte(doc), want); err != nil {
		t.Fatal(err)
	}
	app := &v1beta1.Application{}
	if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(want), app); err != nil {
		t.Fatal(err)
	}
	app.Annotations, app.Spec = want.Annotations, want.Spec
	if err := d.hub.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
}

// waitDispatched waits until the controller reports revision dispatched
// for the Application's current generation.
func (d *delivered) waitDispatched(t *testing.T, ns, name, revision string) {
	t.Helper()
	eventually(t, 60*time.Second, name+" dispatched as "+revision, func() error {
		app := &v1beta1.Application{}
		if err := d.hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
			return err
		}
		c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionDispatched)
		switch {
		case app.Status.ObservedGeneration != app.Generation || c == nil || c.ObservedGeneration != app.Generation:
			return fmt.Errorf("generation %d not observed yet", app.Generation)
		case c.Status != metav1.ConditionTrue:
			return fmt.Errorf("dispatched: %s %s", c.Reason, c.Message)
		case app.Status.LatestRevision == nil || (app.Status.LatestRevision.Name != revision && app.Name+"-"+app.Status.LatestRevision.RevisionHash != revision):
			// revision is <app>-v<generation> or <app>-<publishVersion>:
			// the status names the version's ApplicationRevision and its
			// publishVersion (revisionHash).
			return fmt.Errorf("revision %+v", app.Status.LatestRevision)
		}
		return nil
	})
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// states maps "cluster Kind name" to the state the tree reports.
func states(tree *readmodel.AppTree) map[string]readmodel.TrackedObject {
	out := map[string]readmodel.TrackedObject{}
	for _, c := range tree.Clusters {
		for _, o := range c.Objects {
			out[c.Cluster+" "+o.Kind+" "+o.Name] = o
		}
	}
	return out
}

func TestReadCommands_ShowWhatTheControllerDelivered(t *testing.T) {
	ctx := context.Background()
	d := deliver(t)

	t.Run("ls", func(t *testing.T) { testLs(t, d) })

	tree := func(t *testing.T) *readmodel.AppTree {
		t.Helper()
		var out bytes.Buffer
		if err := Tree(ctx, d.hubConfig, d.hub, TreeOptions{Namespace: "default", Name: "shop", Output: "json", Out: &out}); err != nil {
			t.Fatal(err)
		}
		var got readmodel.AppTree
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("tree -o json: %v\n%s", err, out.String())
		}
		return &got
	}

	t.Run("tree of compressed trackers, all present", func(t *testing.T) {
		var rts v1beta1.ResourceTrackerList
		if err := d.hub.List(ctx, &rts, client.MatchingLabels{v1beta1.LabelAppName: "shop"}); err != nil {
			t.Fatal(err)
		}
		for _, rt := range rts.Items {
			if rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned && (rt.Spec.Compression.Type != v1beta1.CompressionZstd || len(rt.Spec.ManagedResources) != 0) {
				t.Fatalf("tracker %s is not zstd-compressed: the test would not show decoding", rt.Name)
			}
		}
		got := tree(t)
		if got.Version != "2.0" || len(got.Clusters) != 2 || got.Clusters[0].Cluster != "local" || got.Clusters[1].Cluster != "spoke" {
			t.Fatalf("tree = %+v, want version 2.0 on local then spoke", got)
		}
		s := states(got)
		for _, c := range []string{"local", "spoke"} {
			for _, obj := range []string{"Deployment frontend", "ConfigMap shop-config"} {
				if o := s[c+" "+obj]; o.State != readmodel.StatePresent {
					t.Errorf("%s %s: %+v, want present", c, obj, o)
				}
			}
			// expose is a PostDispatch trait: its Service waits for the
			// Deployment to be healthy, which no pod makes it in envtest.
			if o, ok := s[c+" Service frontend"]; ok {
				t.Errorf("%s Service frontend: %+v before its workload is healthy", c, o)
			}
		}
	})

	// Drift that report mode leaves in place: a Deployment deleted in the
	// spoke, a ConfigMap edited on the hub.
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "frontend"}}
	if err := d.spokeC.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := d.hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "shop-config"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited by hand"
	if err := d.hub.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}

	t.Run("tree shows missing and drifted objects", func(t *testing.T) {
		s := states(tree(t))
		if o := s["spoke Deployment frontend"]; o.State != readmodel.StateMissing {
			t.Errorf("spoke Deployment: %+v, want missing", o)
		}
		if o := s["local ConfigMap shop-config"]; o.State != readmodel.StateDrifted || strings.Join(o.Fields, ",") != "data.greeting" {
			t.Errorf("hub ConfigMap: %+v, want drifted in data.greeting", o)
		}
		for _, k := range []string{"local Deployment frontend", "spoke ConfigMap shop-config"} {
			if s[k].State != readmodel.StatePresent {
				t.Errorf("%s: %+v, want present", k, s[k])
			}
		}
		var out bytes.Buffer
		if err := Tree(ctx, d.hubConfig, d.hub, TreeOptions{Namespace: "default", Name: "shop", Out: &out}); err != nil {
			t.Fatal(err)
		}
		t.Logf("steward tree shop:\n%s", out.String())
		for _, want := range []string{"Application default/shop, version 2.0", "CLUSTER", "├─ Deployment/frontend", "drifted: data.greeting", "missing"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("tree output lacks %q:\n%s", want, out.String())
			}
		}
	})

	t.Run("status", func(t *testing.T) {
		// The controller's own StateKeep finds the same drift.
		eventually(t, 20*time.Second, "the controller to report the drift", func() error {
			app := &v1beta1.Application{}
			if err := d.hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "shop"}, app); err != nil {
				return err
			}
			c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionStateKept)
			if c == nil || c.Reason != v1beta1.ReasonDriftDetected {
				return fmt.Errorf("StateKept = %+v", c)
			}
			return nil
		})
		testStatus(t, d)
	})

	t.Run("completion", func(t *testing.T) {
		apps, err := AppNames(ctx, d.hub, "default", "sh")
		if err != nil || strings.Join(apps, ",") != "shop" {
			t.Errorf("apps = %v, %v; want shop", apps, err)
		}
		if apps, _ := AppNames(ctx, d.hub, "default", "x"); len(apps) != 0 {
			t.Errorf("apps starting with x = %v", apps)
		}
		clusters, err := ClusterNames(ctx, d.hub, "", "", false)
		if err != nil || strings.Join(clusters, ",") != "spoke" {
			t.Errorf("clusters = %v, %v; want spoke (local cannot be detached)", clusters, err)
		}
	})

	t.Run("an unreachable cluster leaves its objects unknown", func(t *testing.T) {
		if err := d.spoke.Stop(); err != nil {
			t.Fatal(err)
		}
		got := tree(t)
		if got.Clusters[1].Error == "" {
			t.Errorf("spoke error not reported: %+v", got.Clusters[1])
		}
		for _, o := range got.Clusters[1].Objects {
			if o.State != readmodel.StateUnknown {
				t.Errorf("spoke %s %s: %s, want unknown", o.Kind, o.Name, o.State)
			}
		}
		for _, o := range got.Clusters[0].Objects {
			if o.State == readmodel.StateUnknown {
				t.Errorf("local %s %s unknown: %s", o.Kind, o.Name, o.Message)
			}
		}
	})
}

func testStatus(t *testing.T, d *delivered) {
	ctx := context.Background()
	var out bytes.Buffer
	if err := Status(ctx, d.hubConfig, d.hub, StatusOptions{Namespace: "default", Name: "shop", Output: "json", Out: &out}); err != nil {
		t.Fatal(err)
	}
	var st readmodel.AppStatus
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out.String())
	}
	if st.Phase == "" || st.PublishVersion != "2.0" || st.Revision != "shop-v2" {
		t.Errorf("status = phase %q, publishVersion %q, revision %q", st.Phase, st.PublishVersion, st.Revision)
	}
	if len(st.Components) != 2 || st.Components[0].Name != "frontend" || strings.Join(st.Components[0].Traits, ",") != "scaler,expose" {
		t.Fatalf("components = %+v", st.Components)
	}
	front := st.Components[0].Placements
	if len(front) != 2 || front[0].Cluster != "local" || front[1].Cluster != "spoke" {
		t.Fatalf("frontend placements = %+v, want local and spoke", front)
	}
	if front[0].Healthy || front[0].Message != "Ready:0/1" || front[0].Objects != 1 {
		t.Errorf("frontend on local = %+v, want unhealthy (no pods run in envtest), Ready:0/1, 1 object (expose waits for health)", front[0])
	}
	versions := map[string]readmodel.TrackerSummary{}
	for _, rt := range st.Trackers {
		versions[string(rt.Type)+" "+rt.Version] = rt
	}
	if !versions["versioned 2.0"].Current || versions["versioned 1.0"].Current || versions["versioned 1.0"].Entries == 0 {
		t.Errorf("trackers = %+v, want 2.0 current and 1.0 kept as history", st.Trackers)
	}
	drift := map[string]readmodel.ObjectState{}
	for _, o := range st.Drift {
		drift[o.Cluster+" "+o.Kind] = o.State
	}
	if len(drift) != 2 || drift["spoke Deployment"] != readmodel.StateMissing || drift["local ConfigMap"] != readmodel.StateDrifted {
		t.Errorf("drift = %+v, want the spoke Deployment missing and the hub ConfigMap drifted", st.Drift)
	}
	reasons := map[string]bool{}
	for _, e := range st.Events {
		reasons[e.Reason] = true
	}
	if !reasons["Applied"] {
		t.Errorf("events = %+v, want Applied", st.Events)
	}

	out.Reset()
	if err := Status(ctx, d.hubConfig, d.hub, StatusOptions{Namespace: "default", Name: "shop", Out: &out}); err != nil {
		t.Fatal(err)
	}
	t.Logf("steward status shop:\n%s", out.String())
	for _, want := range []string{
		"About:", "Phase:", "Publish version:  2.0",
		"Conditions:", "StateKept", "DriftDetected",
		"- frontend (webservice), traits: scaler, expose", "cluster spoke", "unhealthy", "Ready:0/1", "trait expose", "pending", "Waiting for component to be healthy",
		"Trackers:", "shop.default.comprev", "component-revision",
		"Drift:", "Deployment default/frontend", "drifted: data.greeting",
		"Events (last", "Applied",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, out.String())
		}
	}
	if err := Status(ctx, d.hubConfig, d.hub, StatusOptions{Namespace: "default", Name: "nope", Out: &out}); err == nil || !strings.Contains(err.Error(), "application default/nope not found") {
		t.Errorf("status of a missing app: %v", err)
	}
}
