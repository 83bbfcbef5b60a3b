package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// seen is what a fake API server saw of one request.
type seen struct{ path, user, auth string }

// recordingServer answers discovery for ConfigMaps and GETs of ConfigMaps,
// and records who each GET of a ConfigMap was made as.
func recordingServer(t *testing.T) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case r.URL.Path == "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case r.URL.Path == "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[`+
				`{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get"]}]}`)
		case strings.Contains(r.URL.Path, "/configmaps/"):
			mu.Lock()
			got = append(got, seen{path: r.URL.Path, user: r.Header.Get("Impersonate-User"), auth: r.Header.Get("Authorization")})
			mu.Unlock()
			name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"team-a"}}`, name)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

func getConfigMap(t *testing.T, c Clients, cluster, name string) {
	t.Helper()
	cc, err := c.GetClient(context.Background(), cluster)
	if err != nil {
		t.Fatal(err)
	}
	if err := cc.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: name}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("get through %s: %v", cluster, err)
	}
}

func TestAs_RequestsImpersonateTheServiceAccountOnHubAndSpokes(t *testing.T) {
	srv, requests := recordingServer(t)
	tm := newTestManager(t, srv.URL, ManagerOptions{}, tokenSecret("eu", srv.URL))
	// The hub's client maps kinds with the hub's RESTMapper.
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	tm.hub = fake.NewClientBuilder().WithRESTMapper(mapper).Build()
	deployer := tm.As(Identity{Namespace: "team-a", Name: "deployer"})

	getConfigMap(t, deployer, v1beta1.ClusterLocal, "on-hub")
	getConfigMap(t, deployer, "eu", "on-spoke")
	getConfigMap(t, tm.Manager, "eu", "as-steward")

	want := map[string]string{
		"/api/v1/namespaces/team-a/configmaps/on-hub":     "system:serviceaccount:team-a:deployer",
		"/api/v1/namespaces/team-a/configmaps/on-spoke":   "system:serviceaccount:team-a:deployer",
		"/api/v1/namespaces/team-a/configmaps/as-steward": "",
	}
	got := requests()
	if len(got) != len(want) {
		t.Fatalf("requests %+v, want %d", got, len(want))
	}
	for _, r := range got {
		if r.user != want[r.path] {
			t.Errorf("%s made as %q, want %q", r.path, r.user, want[r.path])
		}
		if strings.Contains(r.path, "spoke") && r.auth != "Bearer T" {
			t.Errorf("%s sent credentials %q, want the cluster Secret's token", r.path, r.auth)
		}
	}
	if tm.As(Identity{}) != Clients(tm.Manager) {
		t.Error("the zero identity must be Steward's own clients")
	}
}

func TestAs_ClientsAreCachedBoundedAndRebuiltWithNewCredentials(t *testing.T) {
	ctx := context.Background()
	srv, requests := recordingServer(t)
	tm := newTestManager(t, srv.URL, ManagerOptions{IdentityClients: 2}, tokenSecret("eu", srv.URL))
	a := tm.As(Identity{Namespace: "team-a", Name: "a"})
	first, err := a.GetClient(ctx, "eu")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := a.GetClient(ctx, "eu"); again != first {
		t.Fatal("the identity's client was not reused")
	}

	// Two more identities: the least recently used (a) is dropped.
	for _, name := range []string{"b", "c"} {
		if _, err := tm.As(Identity{Namespace: "team-a", Name: name}).GetClient(ctx, "eu"); err != nil {
			t.Fatal(err)
		}
	}
	if n := tm.identities.Len(); n != 2 {
		t.Fatalf("%d identity clients cached, want the bound 2", n)
	}
	if gauge := gaugeValue(t, tm, "steward_identity_clients"); gauge != 2 {
		t.Errorf("steward_identity_clients = %v, want 2", gauge)
	}
	evicted, err := a.GetClient(ctx, "eu")
	if err != nil {
		t.Fatal(err)
	}
	if evicted == first {
		t.Fatal("an evicted identity client was served again")
	}

	// New credentials in the Secret: the identity's client is rebuilt
	// with them.
	tm.rotateToken(t, "eu", "rotated")
	tm.clock = tm.clock.Add(time.Minute)
	getConfigMap(t, a, "eu", "after-rotation")
	got := requests()
	if last := got[len(got)-1]; last.auth != "Bearer rotated" || last.user != "system:serviceaccount:team-a:a" {
		t.Fatalf("after rotation the request went with %q as %q", last.auth, last.user)
	}
}

func TestIdentity_Validate(t *testing.T) {
	for name, ok := range map[string]bool{"": true, "deployer": true, "team.deployer": true, "Deployer": false, "a/b": false, "-x": false} {
		if err := (Identity{Namespace: "ns", Name: name}).Validate(); (err == nil) != ok {
			t.Errorf("Validate(%q) = %v", name, err)
		}
	}
}

func gaugeValue(t *testing.T, tm *testManager, name string) float64 {
	t.Helper()
	families, err := tm.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}
