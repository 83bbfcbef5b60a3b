package record

import "sort"

// RequestKey is one series of apiserver_request_total, less the labels a
// benchmark does not compare (code, version, scope, component). Verbs are
// the apiserver's: GET, LIST, WATCH, POST (create), PUT (update), PATCH,
// APPLY (server-side apply) and DELETE (of one object or a collection).
type RequestKey struct {
	Verb        string `json:"verb"`
	Group       string `json:"group,omitempty"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
}

func (k RequestKey) String() string {
	r := k.Resource
	if k.Group != "" {
		r += "." + k.Group
	}
	if k.Subresource != "" {
		r += "/" + k.Subresource
	}
	return k.Verb + " " + r
}

// RequestCounts are request totals by verb and resource.
type RequestCounts map[RequestKey]float64

// Sub returns c minus base, dropping keys that did not change.
func (c RequestCounts) Sub(base RequestCounts) RequestCounts {
	out := RequestCounts{}
	for k, v := range c {
		if d := v - base[k]; d != 0 {
			out[k] = d
		}
	}
	for k, v := range base {
		if _, ok := c[k]; !ok && v != 0 {
			out[k] = -v
		}
	}
	return out
}

// Filter keeps the keys keep accepts.
func (c RequestCounts) Filter(keep func(RequestKey) bool) RequestCounts {
	out := RequestCounts{}
	for k, v := range c {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

// Total adds every count.
func (c RequestCounts) Total() float64 {
	t := 0.0
	for _, v := range c {
		t += v
	}
	return t
}

// ByVerb adds the counts of each verb.
func (c RequestCounts) ByVerb() map[string]float64 {
	out := map[string]float64{}
	for k, v := range c {
		out[k.Verb] += v
	}
	return out
}

// Sorted lists the keys in a stable order for reports.
func (c RequestCounts) Sorted() []RequestKey {
	keys := make([]RequestKey, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

// RequestCount is one RequestCounts entry in JSON.
type RequestCount struct {
	RequestKey
	Count float64 `json:"count"`
}

// List turns counts into a sorted list for JSON.
func (c RequestCounts) List() []RequestCount {
	out := make([]RequestCount, 0, len(c))
	for _, k := range c.Sorted() {
		out = append(out, RequestCount{RequestKey: k, Count: c[k]})
	}
	return out
}

// CountsOf turns a list back into counts.
func CountsOf(list []RequestCount) RequestCounts {
	out := RequestCounts{}
	for _, r := range list {
		out[r.RequestKey] += r.Count
	}
	return out
}
