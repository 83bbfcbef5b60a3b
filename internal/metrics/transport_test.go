package metrics_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/steward-oam/steward/internal/metrics"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func okTransport(code int) http.RoundTripper {
	return roundTripper(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: code, Body: http.NoBody}, nil
	})
}

func request(t *testing.T, method, target string) *http.Request {
	t.Helper()
	return httptest.NewRequest(method, "https://api.example"+target, nil)
}

func TestVerb_NamesKubernetesVerbs(t *testing.T) {
	tests := []struct{ method, path, want string }{
		{"GET", "/api/v1/namespaces/prod/configmaps/cfg", "get"},
		{"GET", "/api/v1/namespaces/prod/configmaps", "list"},
		{"GET", "/api/v1/configmaps", "list"},
		{"GET", "/api/v1/namespaces/prod/configmaps?watch=true&resourceVersion=1", "watch"},
		{"GET", "/api/v1/namespaces", "list"},
		{"GET", "/api/v1/namespaces/prod", "get"},
		{"GET", "/apis/apps/v1/namespaces/prod/deployments/web", "get"},
		{"GET", "/apis/core.oam.dev/v1beta1/resourcetrackers", "list"},
		{"GET", "/apis/core.oam.dev/v1beta1/resourcetrackers/shop-v1-prod", "get"},
		{"POST", "/apis/apps/v1/namespaces/prod/deployments", "create"},
		{"PUT", "/apis/core.oam.dev/v1beta1/namespaces/prod/applications/shop/status", "update"},
		{"PATCH", "/apis/apps/v1/namespaces/prod/deployments/web", "patch"},
		{"DELETE", "/apis/apps/v1/namespaces/prod/deployments/web", "delete"},
		{"DELETE", "/apis/apps/v1/namespaces/prod/deployments", "deletecollection"},
		{"DELETE", "/api/v1/namespaces/prod", "delete"},
		{"GET", "/apis", "nonresource"},
		{"GET", "/apis/apps/v1", "nonresource"},
		{"GET", "/api/v1", "nonresource"},
		{"GET", "/version", "nonresource"},
		{"GET", "/openapi/v3", "nonresource"},
	}
	for _, tt := range tests {
		if got := metrics.Verb(request(t, tt.method, tt.path)); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestInstrumentTransport_CountsByVerbAndCode(t *testing.T) {
	m, reg := newMetrics(t)
	ok := m.InstrumentTransport(okTransport(200))
	notFound := m.InstrumentTransport(okTransport(404))
	broken := m.InstrumentTransport(roundTripper(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	}))
	for _, rt := range []http.RoundTripper{ok, ok, notFound} {
		resp, err := rt.RoundTrip(request(t, "GET", "/apis/apps/v1/namespaces/prod/deployments/web"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if _, err := broken.RoundTrip(request(t, "PATCH", "/apis/apps/v1/namespaces/prod/deployments/web")); err == nil {
		t.Fatal("error not passed through")
	}
	const want = `
# HELP steward_api_requests_total Requests to Kubernetes API servers by verb (get, list, watch, create, update, patch, delete, deletecollection, nonresource) and HTTP status code ("error" when no response came back).
# TYPE steward_api_requests_total counter
steward_api_requests_total{code="200",verb="get"} 2
steward_api_requests_total{code="404",verb="get"} 1
steward_api_requests_total{code="error",verb="patch"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "steward_api_requests_total"); err != nil {
		t.Fatal(err)
	}
}

func TestInstrumentTransport_WorksWithARealServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	m, reg := newMetrics(t)
	c := &http.Client{Transport: m.InstrumentTransport(nil)}
	resp, err := c.Post(srv.URL+"/api/v1/namespaces/prod/configmaps", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n, _ := testutil.GatherAndCount(reg, "steward_api_requests_total"); n != 1 {
		t.Fatalf("%d series", n)
	}
}
