package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The dashboard has no authentication: it refuses to listen beyond
// loopback unless told to.
func TestListen_RefusesNonLoopbackUnlessAllowed(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "192.0.2.1:0"} {
		if l, _, err := Listen(addr, false); err == nil {
			l.Close()
			t.Errorf("Listen(%q) served; want it refused without --allow-remote", addr)
		} else if !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("Listen(%q): %v; want the error to name --allow-remote", addr, err)
		}
	}
	l, hosts, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if len(hosts) == 0 {
		t.Error("a loopback dashboard must restrict the Host header")
	}
	l, hosts, err = Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if hosts != nil {
		t.Errorf("hosts %v for an allowed remote address; want any", hosts)
	}
}

// A page elsewhere that rebinds its own name to 127.0.0.1 sends that name
// as Host: refused.
func TestHostGuard_RefusesOtherHosts(t *testing.T) {
	h := HostGuard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }), "localhost", "127.0.0.1", "::1")
	for host, want := range map[string]int{
		"127.0.0.1:8090": http.StatusOK, "localhost:8090": http.StatusOK, "[::1]:8090": http.StatusOK,
		"evil.example:8090": http.StatusMisdirectedRequest, "evil.example": http.StatusMisdirectedRequest,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %s: %d, want %d", host, w.Code, want)
		}
	}
}

// Filters, order and pages of the list come from the URL and go back
// into its links unchanged.
func TestListQuery_FiltersSortsAndRoundTrips(t *testing.T) {
	q := parseListQuery(url.Values{"namespace": {"prod"}, "health": {"unhealthy"}, "sort": {"age"}, "order": {"desc"}, "page": {"3"}}, 50)
	if got := parseListQuery(q.values(), 50); got != q {
		t.Errorf("round trip: %+v, want %+v", got, q)
	}
	if parseListQuery(url.Values{"sort": {"<script>"}}, 50).Sort != "name" {
		t.Error("an unknown sort key must fall back to name")
	}
	now := time.Now()
	rows := []appRow{
		{Namespace: "prod", Name: "b", Healthy: 1, Total: 2, Created: now},
		{Namespace: "prod", Name: "a", Healthy: 2, Total: 2, Created: now.Add(-time.Hour)},
		{Namespace: "dev", Name: "c", Healthy: 0, Total: 2, Created: now},
	}
	var kept []appRow
	for _, r := range rows {
		if q.keep(&r) {
			kept = append(kept, r)
		}
	}
	if len(kept) != 1 || kept[0].Name != "b" {
		t.Errorf("namespace prod, unhealthy: %+v, want b only", kept)
	}
	byHealth := listQuery{Sort: "health"}
	if byHealth.compare(&rows[2], &rows[0]) >= 0 || byHealth.compare(&rows[0], &rows[1]) >= 0 {
		t.Error("sorted by health, the least healthy must come first")
	}
}
