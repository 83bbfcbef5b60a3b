package metrics

import (
	"net/http"
	"strings"
)

// InstrumentTransport wraps a client's transport so that every request
// counts in steward_api_requests_total by Kubernetes verb and status code.
// Install it on the manager's rest.Config before clients are built:
// cfg.Wrap(m.InstrumentTransport). A nil *Metrics returns rt unchanged.
func (m *Metrics) InstrumentTransport(rt http.RoundTripper) http.RoundTripper {
	if m == nil {
		return rt
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &instrumented{next: rt, m: m}
}

type instrumented struct {
	next http.RoundTripper
	m    *Metrics
}

func (t *instrumented) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	code := 0
	if err == nil && resp != nil {
		code = resp.StatusCode
	}
	t.m.observeRequest(Verb(req), code)
	return resp, err
}

// Verb names the Kubernetes verb of an API request from its method and
// path, as the API server's audit log does: get, list, watch, create,
// update, patch, delete, deletecollection, or nonresource for discovery,
// version and health paths.
func Verb(req *http.Request) string {
	hasName, ok := resourcePath(req.URL.Path)
	if !ok {
		return "nonresource"
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			return "watch"
		case hasName:
			return "get"
		default:
			return "list"
		}
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if hasName {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(req.Method)
}

// resourcePath reports whether path names API resources
// (/api/v1/..., /apis/group/version/...) and whether it names one object
// rather than a collection.
func resourcePath(path string) (hasName, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false, false
	}
	// namespaces/<ns>/<resource>... is namespaced; namespaces/<name> is a
	// Namespace itself.
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	return len(parts) >= 2, true
}
