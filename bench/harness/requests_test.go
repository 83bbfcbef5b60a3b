package harness

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRequestKeyOf_NamesVerbsAndResourcesAsTheAPIServer(t *testing.T) {
	cases := []struct {
		method, url, contentType string
		want                     RequestKey
		ok                       bool
	}{
		{"GET", "/api/v1/namespaces/bench/configmaps/web", "", RequestKey{Verb: "GET", Resource: "configmaps"}, true},
		{"GET", "/api/v1/namespaces/bench/configmaps", "", RequestKey{Verb: "LIST", Resource: "configmaps"}, true},
		{"GET", "/api/v1/configmaps?watch=true", "", RequestKey{Verb: "WATCH", Resource: "configmaps"}, true},
		{"GET", "/api/v1/namespaces/unrelated", "", RequestKey{Verb: "GET", Resource: "namespaces"}, true},
		{"POST", "/api/v1/namespaces", "", RequestKey{Verb: "POST", Resource: "namespaces"}, true},
		{"POST", "/apis/apps/v1/namespaces/bench/deployments", "", RequestKey{Verb: "POST", Group: "apps", Resource: "deployments"}, true},
		{"PUT", "/apis/core.oam.dev/v1beta1/resourcetrackers/app-v1", "", RequestKey{Verb: "PUT", Group: "core.oam.dev", Resource: "resourcetrackers"}, true},
		{"PATCH", "/apis/core.oam.dev/v1beta1/namespaces/bench/applications/a/status", "application/merge-patch+json",
			RequestKey{Verb: "PATCH", Group: "core.oam.dev", Resource: "applications", Subresource: "status"}, true},
		{"PATCH", "/api/v1/namespaces/bench/services/web", "application/apply-patch+yaml", RequestKey{Verb: "APPLY", Resource: "services"}, true},
		{"DELETE", "/apis/apps/v1/namespaces/bench/deployments/web", "", RequestKey{Verb: "DELETE", Group: "apps", Resource: "deployments"}, true},
		{"DELETE", "/apis/apps/v1/namespaces/bench/deployments", "", RequestKey{Verb: "DELETE", Group: "apps", Resource: "deployments"}, true},
		{"GET", "/metrics", "", RequestKey{}, false},
		{"GET", "/apis", "", RequestKey{}, false},
		{"OPTIONS", "/api/v1/pods", "", RequestKey{}, false},
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
	if _, ok := before[RequestKey{Verb: "GET", Resource: ""}]; ok {
		t.Errorf("non-resource requests are counted")
	}
	after := RequestCounts{}
	for k, v := range before {
		after[k] = v
	}
	get := RequestKey{Verb: "GET", Resource: "configmaps"}
	event := RequestKey{Verb: "POST", Group: "events.k8s.io", Resource: "events"}
	lease := RequestKey{Verb: "PUT", Group: "coordination.k8s.io", Resource: "leases"}
	after[get] += 10
	after[event] = 2
	after[lease] = 7

	d := after.Sub(before)
	if len(d) != 3 || d[get] != 10 {
		t.Fatalf("diff = %v, want only the three changes", d)
	}
	if got := d.Filter(isWork); len(got) != 1 || got[get] != 10 {
		t.Errorf("work = %v, want only the GETs", got)
	}
	if got := d.Filter(isEventWrite).Total(); got != 2 {
		t.Errorf("event writes = %v, want 2", got)
	}
	if got := d.ByVerb(); got["GET"] != 10 || got["POST"] != 2 || got["PUT"] != 7 {
		t.Errorf("by verb = %v", got)
	}
	if round := CountsOf(d.List()); len(round) != len(d) || round[lease] != 7 {
		t.Errorf("List/CountsOf round trip = %v, want %v", round, d)
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
	want := RequestCounts{{Verb: "GET", Resource: "configmaps"}: 2, {Verb: "POST", Resource: "configmaps"}: 1}
	if len(got) != len(want) || got[RequestKey{Verb: "GET", Resource: "configmaps"}] != 2 {
		t.Errorf("counted %v, want %v", got, want)
	}
}

func TestBusiestKind_BoundsByTheKindWithMostRequests(t *testing.T) {
	work := RequestCounts{
		{Verb: "GET", Resource: "configmaps"}:                                                   600,
		{Verb: "POST", Resource: "configmaps"}:                                                  600,
		{Verb: "POST", Group: "apps", Resource: "deployments"}:                                  100,
		{Verb: "PATCH", Group: "core.oam.dev", Resource: "applications", Subresource: "status"}: 100,
	}
	kind, bound := busiestKind(work, 100, 200)
	if kind != "configmaps" || bound.Seconds() != 10 {
		t.Errorf("busiestKind = %s, %s; want configmaps, 10s", kind, bound)
	}
	if _, bound := busiestKind(RequestCounts{{Verb: "GET", Resource: "x"}: 50}, 100, 200); bound != 0 {
		t.Errorf("bound under the burst = %s, want 0", bound)
	}
}
