package cluster

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/steward-oam/steward/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// apiServer answers /readyz with status, like a healthy or sick API server.
func apiServer(t *testing.T, status *int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(*status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// hangingServer accepts connections and never answers.
func hangingServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	t.Cleanup(func() { close(done); _ = l.Close() })
	return "http://" + l.Addr().String()
}

func tokenSecret(name, endpoint string) *corev1.Secret {
	return NewSecret(DefaultNamespace, name, map[string]string{"env": "test"}, "", Credentials{Endpoint: endpoint, Token: "T"})
}

type testManager struct {
	*Manager
	secrets client.Client
	reg     *prometheus.Registry
	clock   time.Time
}

func newTestManager(t *testing.T, hubURL string, opts ManagerOptions, secrets ...client.Object) *testManager {
	t.Helper()
	fc := fake.NewClientBuilder().WithObjects(secrets...).Build()
	reg := prometheus.NewRegistry()
	opts.Secrets, opts.Registerer = fc, reg
	m, err := NewManager(&rest.Config{Host: hubURL}, fc, opts)
	if err != nil {
		t.Fatal(err)
	}
	tm := &testManager{Manager: m, secrets: fc, reg: reg, clock: time.Now()}
	m.now = func() time.Time { return tm.clock }
	return tm
}

// gauge returns steward_cluster_connected{cluster}, and whether the series exists.
func (tm *testManager) gauge(t *testing.T, cluster string) (float64, bool) {
	t.Helper()
	families, err := tm.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "steward_cluster_connected" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == cluster {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// rotateToken writes a new token into a cluster's Secret.
func (tm *testManager) rotateToken(t *testing.T, cluster, token string) {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{}
	if err := tm.secrets.Get(ctx, client.ObjectKey{Namespace: DefaultNamespace, Name: cluster}, s); err != nil {
		t.Fatal(err)
	}
	s.Data["token"] = []byte(token)
	if err := tm.secrets.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func TestGetClient_LocalIsTheHubClient(t *testing.T) {
	tm := newTestManager(t, "http://127.0.0.1:1", ManagerOptions{})
	for _, name := range []string{"", v1beta1.ClusterLocal} {
		c, err := tm.GetClient(context.Background(), name)
		if err != nil || c != tm.hub {
			t.Fatalf("GetClient(%q) = %v, %v; want the hub client", name, c, err)
		}
	}
}

func TestGetClient_RebuiltWhenSecretChanges(t *testing.T) {
	ctx := context.Background()
	ok := http.StatusOK
	srv := apiServer(t, &ok)
	tm := newTestManager(t, srv.URL, ManagerOptions{}, tokenSecret("eu", srv.URL))

	first, err := tm.GetClient(ctx, "eu")
	if err != nil {
		t.Fatal(err)
	}
	tm.rotateToken(t, "eu", "rotated")
	if again, _ := tm.GetClient(ctx, "eu"); again != first {
		t.Fatal("client rebuilt before the recheck interval passed")
	}
	tm.clock = tm.clock.Add(time.Minute)
	rebuilt, err := tm.GetClient(ctx, "eu")
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt == first {
		t.Fatal("client not rebuilt after the secret changed")
	}
	tm.clock = tm.clock.Add(time.Minute)
	if same, _ := tm.GetClient(ctx, "eu"); same != rebuilt {
		t.Fatal("client rebuilt although the secret did not change")
	}
}

func TestGetClient_BrokenAndMissingSecrets(t *testing.T) {
	ctx := context.Background()
	broken := tokenSecret("broken", "https://k8s")
	delete(broken.Data, "token")
	tm := newTestManager(t, "http://127.0.0.1:1", ManagerOptions{}, broken)

	if _, err := tm.GetClient(ctx, "broken"); err == nil || errors.Is(err, ErrNotRegistered) {
		t.Fatalf("broken secret: err = %v, want a credentials error", err)
	}
	if v, ok := tm.gauge(t, "broken"); !ok || v != 0 {
		t.Fatalf("broken cluster gauge = %v (exists %v), want 0", v, ok)
	}
	if _, err := tm.GetClient(ctx, "nowhere"); !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("missing secret: err = %v, want ErrNotRegistered", err)
	}
}

func TestProbe_GaugeFollowsHealthAndDetachDeletesSeries(t *testing.T) {
	ctx := context.Background()
	status := http.StatusOK
	srv := apiServer(t, &status)
	tm := newTestManager(t, srv.URL, ManagerOptions{}, tokenSecret("eu", srv.URL))

	results, err := tm.ProbeAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[v1beta1.ClusterLocal] != nil || results["eu"] != nil {
		t.Fatalf("ProbeAll = %v, want local and eu healthy", results)
	}
	if v, _ := tm.gauge(t, "eu"); v != 1 {
		t.Fatalf("eu gauge = %v, want 1", v)
	}
	if v, _ := tm.gauge(t, v1beta1.ClusterLocal); v != 1 {
		t.Fatalf("local gauge = %v, want 1", v)
	}

	status = http.StatusInternalServerError
	if err := tm.Probe(ctx, "eu"); err == nil {
		t.Fatal("probe of a failing /readyz succeeded")
	}
	if v, _ := tm.gauge(t, "eu"); v != 0 {
		t.Fatalf("eu gauge = %v after a failed probe, want 0", v)
	}
	if last, ok := tm.LastProbe("eu"); !ok || last.Err == nil {
		t.Fatalf("LastProbe = %+v, %v; want the failure", last, ok)
	}

	if err := tm.secrets.Delete(ctx, tokenSecret("eu", srv.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.ProbeAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := tm.gauge(t, "eu"); ok {
		t.Fatal("series of the detached cluster is still exported")
	}
	if _, ok := tm.LastProbe("eu"); ok {
		t.Fatal("detached cluster is still cached")
	}
}

func TestProbe_HangingClusterFailsFastAndDoesNotDelayOthers(t *testing.T) {
	ctx := context.Background()
	ok := http.StatusOK
	srv := apiServer(t, &ok)
	hang := hangingServer(t)
	tm := newTestManager(t, srv.URL, ManagerOptions{ProbeTimeout: 300 * time.Millisecond, RequestTimeout: 500 * time.Millisecond},
		tokenSecret("healthy", srv.URL), tokenSecret("hung", hang))

	start := time.Now()
	results, err := tm.ProbeAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("ProbeAll took %s with one hung cluster, want about the probe timeout", elapsed)
	}
	if results["healthy"] != nil || results["hung"] == nil {
		t.Fatalf("ProbeAll = %v, want healthy ok and hung failed", results)
	}

	c, err := tm.GetClient(ctx, "hung")
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	err = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{})
	if err == nil || !IsUnreachable(err) {
		t.Fatalf("request to a hung cluster: err = %v, want an unreachable error", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Fatalf("request to a hung cluster took %s, want about the request timeout", elapsed)
	}
}

func TestIsUnreachable(t *testing.T) {
	if IsUnreachable(nil) || IsUnreachable(errors.New("admission webhook denied")) {
		t.Fatal("ordinary errors classified as unreachable")
	}
	if !IsUnreachable(context.DeadlineExceeded) {
		t.Fatal("deadline not classified as unreachable")
	}
}
