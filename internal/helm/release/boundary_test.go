package release

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/helm/fetch"
)

// readNothing is a reader that fails the test if anything is read.
type readNothing struct {
	client.Reader
	t     *testing.T
	reads atomic.Int32
}

func (r *readNothing) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.reads.Add(1)
	r.t.Errorf("read %T %s although the boundary refuses it", obj, key)
	return nil
}

// Under --no-cross-namespace-objects a release in another namespace, or
// credentials or values of another namespace, are refused before any
// Secret is read or anything fetched: the chart source sees no request.
func TestPrepare_BoundaryBeforeAnyReadOrFetch(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	p := &Provider{Fetcher: fetch.New(fetch.Options{}), Wait: -1}
	confined := boundary.Boundary{Namespace: "team-a", Confined: true}
	for name, params := range map[string]map[string]any{
		"release in vela-system, credentials there": {
			"chart":   map[string]any{"source": srv.URL + "/c.tgz", "auth": map[string]any{"secretRef": map[string]any{"name": "cluster-token", "namespace": "vela-system"}}},
			"release": map[string]any{"namespace": "vela-system"},
		},
		"release in vela-system, credentials of the release namespace": {
			"chart":   map[string]any{"source": srv.URL + "/c.tgz", "auth": map[string]any{"secretRef": map[string]any{"name": "cluster-token"}}},
			"release": map[string]any{"namespace": "vela-system"},
		},
		"values of another namespace": {
			"chart":      map[string]any{"source": srv.URL + "/c.tgz"},
			"valuesFrom": []any{map[string]any{"kind": "Secret", "name": "db", "namespace": "team-b"}},
		},
	} {
		raw, _ := json.Marshal(params)
		reader := &readNothing{t: t}
		_, err := p.Prepare(context.Background(), reader, confined, raw, "v1.30.0")
		be := boundary.As(err)
		if be == nil || be.Reason != v1beta1.ReasonCrossNamespaceObject {
			t.Errorf("%s: want CrossNamespaceObject, got %v", name, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the chart source got %d requests", n)
	}
}

// More valuesFrom entries than MaxValuesFrom are refused before any is
// read: each would be a read of the cluster on every re-sync.
func TestPrepare_ValuesFromBounded(t *testing.T) {
	p := &Provider{Fetcher: fetch.New(fetch.Options{}), Wait: -1}
	var entries []any
	for range MaxValuesFrom + 1 {
		entries = append(entries, map[string]any{"kind": "ConfigMap", "name": "v"})
	}
	raw, _ := json.Marshal(map[string]any{"chart": map[string]any{"source": "https://charts.example/c.tgz"}, "valuesFrom": entries})
	reader := &readNothing{t: t}
	_, err := p.Prepare(context.Background(), reader, boundary.Boundary{Namespace: "team-a"}, raw, "v1.30.0")
	var he *Error
	if !errors.As(err, &he) || he.Reason != ReasonValuesFailed || !strings.Contains(err.Error(), "17 entries") {
		t.Fatalf("err = %v, want %s naming the count", err, ReasonValuesFailed)
	}
}
