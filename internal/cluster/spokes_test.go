package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/testcp"
)

// spokes is a hub and two spoke control planes, the second spoke joined
// with a service account token, and a Manager on the hub.
type spokes struct {
	hub, s1, s2 *testcp.Plane
	hubClient   client.Client
	m           *cluster.Manager
	reg         *prometheus.Registry
}

func startSpokes(t *testing.T) *spokes {
	planes := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{"../../config/crd"}}, "hub", "spoke-1", "spoke-2")
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	hubClient, err := planes[0].Client(client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := cluster.NewManager(planes[0].Config, hubClient, cluster.ManagerOptions{
		QPS: 50, Burst: 100,
		DialTimeout: 2 * time.Second, RequestTimeout: 5 * time.Second, ProbeTimeout: 2 * time.Second,
		RecheckInterval: 50 * time.Millisecond,
		Registerer:      reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &spokes{hub: planes[0], s1: planes[1], s2: planes[2], hubClient: hubClient, m: m, reg: reg}
}

func TestClusters_JoinDeliverStopDetachRejoin(t *testing.T) {
	ctx := context.Background()
	env := startSpokes(t)

	// Join: a client certificate for spoke-1, a token for spoke-2.
	res1 := join(t, env.hubClient, cli.JoinOptions{KubeconfigPath: env.s1.KubeconfigPath, Labels: map[string]string{"region": "eu"}})
	res2 := join(t, env.hubClient, cli.JoinOptions{KubeconfigPath: env.s2.TokenKubeconfigPath})
	if res1.Cluster.Name != "spoke-1" || res1.Cluster.CredentialType != cluster.CredentialX509Certificate {
		t.Fatalf("spoke-1 joined as %+v", res1.Cluster)
	}
	if res2.Cluster.Name != "spoke-2" || res2.Cluster.CredentialType != cluster.CredentialServiceAccountToken {
		t.Fatalf("spoke-2 joined as %+v", res2.Cluster)
	}
	if _, err := cli.Join(ctx, env.hubClient, cli.JoinOptions{KubeconfigPath: env.s1.KubeconfigPath}); err == nil ||
		!strings.Contains(err.Error(), `cluster "spoke-1" is already registered`) {
		t.Fatalf("second join without --force: err = %v", err)
	}
	if _, err := cli.Join(ctx, env.hubClient, cli.JoinOptions{KubeconfigPath: env.s1.KubeconfigPath, Name: "local"}); err == nil {
		t.Fatal("join as local succeeded")
	}
	clusters, err := env.m.Registry().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := clusterNames(clusters); names != "local,spoke-1,spoke-2" || clusters[1].Labels["region"] != "eu" {
		t.Fatalf("registry lists %s %+v", names, clusters)
	}

	// Each client reaches its own cluster.
	for _, p := range []*testcp.Plane{env.s1, env.s2} {
		createConfigMap(t, env.m, p.Name, "hello")
		own, err := p.Client(client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := &corev1.ConfigMap{}
		if err := own.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, got); err != nil || got.Data["cluster"] != p.Name {
			t.Fatalf("ConfigMap in %s: %+v, %v", p.Name, got.Data, err)
		}
		if err := env.m.Probe(ctx, p.Name); err != nil {
			t.Fatalf("probe %s: %v", p.Name, err)
		}
	}
	if hub, _ := env.m.GetClient(ctx, v1beta1.ClusterLocal); hub != env.hubClient {
		t.Fatal("local is not served by the hub client")
	}

	// Spoke 2 goes away: it fails fast, spoke 1 keeps working.
	if err := env.s2.Stop(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := env.m.Probe(ctx, "spoke-2"); err == nil {
		t.Fatal("probe of a stopped cluster succeeded")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Fatalf("probe of a stopped cluster took %s", elapsed)
	}
	createConfigMap(t, env.m, "spoke-1", "after-stop")
	probes, err := env.m.ProbeAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if probes["spoke-1"] != nil || probes["spoke-2"] == nil || probes[v1beta1.ClusterLocal] != nil {
		t.Fatalf("ProbeAll = %v", probes)
	}
	wantGauges(t, env.reg, map[string]float64{"local": 1, "spoke-1": 1, "spoke-2": 0})
	var table bytes.Buffer
	if err := cli.List(ctx, env.hub.Config, env.hubClient, cli.ListOptions{Out: &table, ProbeTimeout: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if !lineHas(table.String(), "spoke-1", "X509Certificate", "region=eu", "yes") ||
		!lineHas(table.String(), "spoke-2", "ServiceAccountToken", "no: ") {
		t.Fatalf("cluster list:\n%s", table.String())
	}

	// Detach is refused while an application has resources there.
	recordOn(t, env.hubClient, "spoke-1", "spoke-2")
	if _, err := cli.Detach(ctx, env.hubClient, cli.DetachOptions{Name: "spoke-2"}); err == nil ||
		!strings.Contains(err.Error(), "default/shop") {
		t.Fatalf("detach of a used cluster: err = %v, want it to name default/shop", err)
	}
	if apps, err := cli.Detach(ctx, env.hubClient, cli.DetachOptions{Name: "spoke-2", Force: true}); err != nil || len(apps) != 1 {
		t.Fatalf("forced detach: %v, %v", apps, err)
	}
	if _, err := env.m.ProbeAll(ctx); err != nil {
		t.Fatal(err)
	}
	wantGauges(t, env.reg, map[string]float64{"local": 1, "spoke-1": 1})
	if _, err := env.m.GetClient(ctx, "spoke-2"); !errors.Is(err, cluster.ErrNotRegistered) {
		t.Fatalf("GetClient of a detached cluster: err = %v", err)
	}

	// Detach and re-join spoke 1: its objects are untouched.
	if err := env.hubClient.DeleteAllOf(ctx, &v1beta1.ResourceTracker{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Detach(ctx, env.hubClient, cli.DetachOptions{Name: "spoke-1"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // past RecheckInterval
	if _, err := env.m.GetClient(ctx, "spoke-1"); !errors.Is(err, cluster.ErrNotRegistered) {
		t.Fatalf("GetClient after detach: err = %v", err)
	}
	join(t, env.hubClient, cli.JoinOptions{KubeconfigPath: env.s1.TokenKubeconfigPath})
	c1, err := env.m.GetClient(ctx, "spoke-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.Get(ctx, client.ObjectKey{Namespace: "default", Name: "after-stop"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("object created before detach: %v", err)
	}
}

func join(t *testing.T, hub client.Client, o cli.JoinOptions) cli.JoinResult {
	t.Helper()
	res, err := cli.Join(context.Background(), hub, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProbeErr != nil {
		t.Fatalf("joined cluster %s does not answer: %v", res.Cluster.Name, res.ProbeErr)
	}
	return res
}

func createConfigMap(t *testing.T, m *cluster.Manager, clusterName, name string) {
	t.Helper()
	c, err := m.GetClient(context.Background(), clusterName)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Data:       map[string]string{"cluster": clusterName},
	}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatalf("creating ConfigMap in %s: %v", clusterName, err)
	}
}

// recordOn writes a tracker of application default/shop with one entry per
// cluster.
func recordOn(t *testing.T, hub client.Client, clusters ...string) {
	t.Helper()
	var entries []v1beta1.ManagedResource
	for _, c := range clusters {
		entries = append(entries, v1beta1.ManagedResource{ClusterObjectReference: v1beta1.ClusterObjectReference{
			Cluster: c, APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "hello",
		}})
	}
	rt := &v1beta1.ResourceTracker{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-default", Labels: map[string]string{
			v1beta1.LabelAppName: "shop", v1beta1.LabelAppNamespace: "default",
		}},
		Spec: v1beta1.ResourceTrackerSpec{Type: v1beta1.ResourceTrackerTypeRoot, ManagedResources: entries},
	}
	if err := hub.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
}

func wantGauges(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "steward_cluster_connected" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("steward_cluster_connected = %s, want %s", gotJSON, wantJSON)
	}
}

func clusterNames(cs []cluster.Cluster) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

// lineHas reports whether a line of out starts with name and contains
// every part in order.
func lineHas(out, name string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, name+" ") {
			continue
		}
		rest := line
		ok := true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}
