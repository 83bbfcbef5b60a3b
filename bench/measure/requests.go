package measure

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/steward-oam/steward/bench/record"
)

// RequestCountsFrom sums apiserver_request_total by RequestKey; requests
// for non-resource paths (/metrics, /healthz, discovery) are left out.
func RequestCountsFrom(ss Samples) record.RequestCounts {
	out := record.RequestCounts{}
	for _, s := range ss {
		if s.Name != "apiserver_request_total" || s.Labels["resource"] == "" {
			continue
		}
		out[record.RequestKey{Verb: s.Labels["verb"], Group: s.Labels["group"],
			Resource: s.Labels["resource"], Subresource: s.Labels["subresource"]}] += s.Value
	}
	return out
}

// isEvent is true for Event objects of either API group.
func isEvent(k record.RequestKey) bool { return k.Resource == "events" }

// IsEventWrite is true for requests that write an Event: the scenarios
// count them apart from a controller's work.
func IsEventWrite(k record.RequestKey) bool {
	return isEvent(k) && (k.Verb == "POST" || k.Verb == "PATCH" || k.Verb == "PUT" || k.Verb == "APPLY")
}

// background are resources the apiserver reads and writes on its own: its
// identity lease and the kubernetes Service's endpoints every few seconds,
// the IPAddress it records for each ClusterIP it allocates when a Service
// is created; and leader election leases.
var background = map[string]bool{"leases": true, "endpoints": true, "endpointslices": true, "ipaddresses": true}

// IsWork is true for requests that do a controller's work: everything but
// events (counted apart) and the apiserver's background traffic.
func IsWork(k record.RequestKey) bool { return !isEvent(k) && !background[k.Resource] }

// RequestCounter counts the requests of one client with the keys the
// apiserver would record, so that the harness can subtract its own
// traffic from apiserver_request_total.
type RequestCounter struct {
	mu     sync.Mutex
	counts record.RequestCounts
}

// Wrap is a rest.Config WrapTransport.
func (rc *RequestCounter) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if k, ok := RequestKeyOf(req); ok {
			rc.mu.Lock()
			if rc.counts == nil {
				rc.counts = record.RequestCounts{}
			}
			rc.counts[k]++
			rc.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

// Snapshot returns a copy of the counts so far.
func (rc *RequestCounter) Snapshot() record.RequestCounts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(record.RequestCounts, len(rc.counts))
	for k, v := range rc.counts {
		out[k] = v
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// RequestKeyOf maps an HTTP request to the verb and resource the apiserver
// records for it; false for non-resource paths.
func RequestKeyOf(req *http.Request) (record.RequestKey, bool) {
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		group, segs = segs[1], segs[3:]
	default:
		return record.RequestKey{}, false
	}
	var resource, name, sub string
	switch {
	case segs[0] == "namespaces" && len(segs) >= 3:
		resource = segs[2]
		segs = segs[3:]
	default:
		resource = segs[0]
		segs = segs[1:]
	}
	if len(segs) > 0 {
		name = segs[0]
	}
	if len(segs) > 1 {
		sub = segs[1]
	}
	verb, err := verbOf(req, name != "")
	if err != nil {
		return record.RequestKey{}, false
	}
	return record.RequestKey{Verb: verb, Group: group, Resource: resource, Subresource: sub}, true
}

// verbOf names the verb as apiserver_request_total does (CleanVerb).
func verbOf(req *http.Request, named bool) (string, error) {
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			return "WATCH", nil
		case named:
			return "GET", nil
		default:
			return "LIST", nil
		}
	case http.MethodPatch:
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			return "APPLY", nil
		}
		return "PATCH", nil
	case http.MethodPost, http.MethodPut, http.MethodDelete:
		return req.Method, nil
	}
	return "", fmt.Errorf("method %s", req.Method)
}
