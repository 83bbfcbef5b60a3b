package measure

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/steward-oam/steward/bench/record"
)

func TestRequestKeyOf_NamesVerbsAndResourcesAsTheAPIServer(t *testing.T) {
	cases := []struct {
		method, url, contentType string
		want                     record.RequestKey
		ok                       bool
	}{
		{"GET", "/api/v1/namespaces/bench/configmaps/web", "", record.RequestKey{Verb: "GET", Resource: "configmaps"}, true},
		{"GET", "/api/v1/namespaces/bench/configmaps", "", record.RequestKey{Verb: "LIST", Resource: "configmaps"}, true},
		{"GET", "/api/v1/configmaps?watch=true", "", record.RequestKey{Verb: "WATCH", Resource: "configmaps"}, true},
		{"GET", "/api/v1/namespaces/unrelated", "", record.RequestKey{Verb: "GET", Resource: "namespaces"}, true},
		{"POST", "/api/v1/namespaces", "", record.RequestKey{Verb: "POST", Resource: "namespaces"}, true},
		{"POST", "/apis/apps/v1/namespaces/bench/deployments", "", record.RequestKey{Verb: "POST", Group: "apps", Resource: "deployments"}, true},
		{"PUT", "/apis/core.oam.dev/v1beta1/resourcetrackers/app-v1", "", record.RequestKey{Verb: "PUT", Group: "core.oam.dev", Resource: "resourcetrackers"}, true},
		{"PATCH", "/apis/core.oam.dev/v1beta1/namespaces/bench/applications/a/status", "application/merge-patch+json",
			record.RequestKey{Verb: "PATCH", Group: "core.oam.dev", Resource: "applications", Subresource: "status"}, true},
		{"PATCH", "/api/v1/namespaces/bench/services/web", "application/apply-patch+yaml", record.RequestKey{Verb: "APPLY", Resource: "services"}, true},
		{"DELETE", "/apis/apps/v1/namespaces/bench/deployments/web", "", record.RequestKey{Verb: "DELETE", Group: "apps", Resource: "deployments"}, true},
		{"DELETE", "/apis/apps/v1/namespaces/bench/deployments", "", record.RequestKey{Verb: "DELETE", Group: "apps", Resource: "deployments"}, true},
		{"GET", "/metrics", "", record.RequestKey{}, false},
		{"GET", "/apis", "", record.RequestKey{}, false},
		{"OPTIONS", "/api/v1/pods", "", record.RequestKey{}, false},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, c.url, nil)
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		got, ok := RequestKeyOf(req)
		if got != c.want || ok != c.ok {
			t.Errorf("%s %s = %+v, %v; want %+v, %v", c.method, c.url, got, ok, c.want, c.ok)
		}
	}
}

func TestRequestCounts_SubtractFilterAndGroup(t *testing.T) {
	ss, err := ParseText([]byte(metricsPage))
	if err != nil {
		t.Fatal(err)
	}
	before := RequestCountsFrom(ss)
	if _, ok := before[record.RequestKey{Verb: "GET", Resource: ""}]; ok {
		t.Errorf("non-resource requests are counted")
	}
	after := record.RequestCounts{}
	for k, v := range before {
		after[k] = v
	}
	get := record.RequestKey{Verb: "GET", Resource: "configmaps"}
	event := record.RequestKey{Verb: "POST", Group: "events.k8s.io", Resource: "events"}
	lease := record.RequestKey{Verb: "PUT", Group: "coordination.k8s.io", Resource: "leases"}
	after[get] += 10
	after[event] = 2
	after[lease] = 7

	d := after.Sub(before)
	if len(d) != 3 || d[get] != 10 {
		t.Fatalf("diff = %v, want only the three changes", d)
	}
	if got := d.Filter(IsWork); len(got) != 1 || got[get] != 10 {
		t.Errorf("work = %v, want only the GETs", got)
	}
	if got := d.Filter(IsEventWrite).Total(); got != 2 {
		t.Errorf("event writes = %v, want 2", got)
	}
	if got := d.ByVerb(); got["GET"] != 10 || got["POST"] != 2 || got["PUT"] != 7 {
		t.Errorf("by verb = %v", got)
	}
	if round := record.CountsOf(d.List()); len(round) != len(d) || round[lease] != 7 {
		t.Errorf("List/record.CountsOf round trip = %v, want %v", round, d)
	}
}

func TestRequestCounter_CountsWhatTheClientSends(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	rc := &RequestCounter{}
	hc := &http.Client{Transport: rc.Wrap(http.DefaultTransport)}
	for _, path := range []string{"/api/v1/namespaces/a/configmaps/x", "/api/v1/namespaces/a/configmaps/y", "/healthz"} {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := hc.Post(srv.URL+"/api/v1/namespaces/a/configmaps", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := rc.Snapshot()
	want := record.RequestCounts{{Verb: "GET", Resource: "configmaps"}: 2, {Verb: "POST", Resource: "configmaps"}: 1}
	if len(got) != len(want) || got[record.RequestKey{Verb: "GET", Resource: "configmaps"}] != 2 {
		t.Errorf("counted %v, want %v", got, want)
	}
}
