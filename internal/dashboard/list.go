package dashboard

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// appRow is one Application on the list page.
type appRow struct {
	Namespace, Name string
	Phase           string
	// Healthy and Total count status.services (components per cluster).
	Healthy, Total int
	Components     []string
	Created        time.Time
	// Reason is the Ready condition's reason when it is not True.
	Reason string
}

// Health is "healthy", "unhealthy" or "unknown" (nothing delivered yet).
func (r appRow) Health() string {
	switch {
	case r.Total == 0:
		return "unknown"
	case r.Healthy == r.Total:
		return "healthy"
	}
	return "unhealthy"
}

func rowOf(a *v1beta1.Application) appRow {
	r := appRow{Namespace: a.Namespace, Name: a.Name, Phase: string(a.Status.Phase), Created: a.CreationTimestamp.Time,
		Total: len(a.Status.Services)}
	for _, s := range a.Status.Services {
		if s.Healthy {
			r.Healthy++
		}
	}
	for _, c := range a.Spec.Components {
		r.Components = append(r.Components, c.Name)
	}
	if c := v1beta1.FindCondition(a.Status.Conditions, v1beta1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
		r.Reason = c.Reason
	}
	return r
}

// listQuery is the list page's filter, order and page, from its URL.
type listQuery struct {
	Namespace string // exact namespace, empty for all
	Phase     string // exact phase, empty for all
	Health    string // healthy, unhealthy, unknown, empty for all
	Name      string // substring of the name
	Sort      string // name, namespace, phase, health, components, age
	Desc      bool
	Page      int // 1-based
	Limit     int
}

var sortKeys = []string{"name", "namespace", "phase", "health", "components", "age"}

func parseListQuery(v url.Values, pageSize int) listQuery {
	q := listQuery{Namespace: v.Get("namespace"), Phase: v.Get("phase"), Health: v.Get("health"), Name: v.Get("q"),
		Sort: v.Get("sort"), Desc: v.Get("order") == "desc", Page: 1, Limit: pageSize}
	if !slices.Contains(sortKeys, q.Sort) {
		q.Sort = "name"
	}
	if p, err := strconv.Atoi(v.Get("page")); err == nil && p > 0 {
		q.Page = p
	}
	if l, err := strconv.Atoi(v.Get("limit")); err == nil && l > 0 {
		q.Limit = min(l, 10000)
	}
	return q
}

// values encodes q, with overrides (key, value pairs) applied.
func (q listQuery) values(overrides ...string) url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("namespace", q.Namespace)
	set("phase", q.Phase)
	set("health", q.Health)
	set("q", q.Name)
	if q.Sort != "name" {
		set("sort", q.Sort)
	}
	if q.Desc {
		set("order", "desc")
	}
	if q.Page > 1 {
		set("page", strconv.Itoa(q.Page))
	}
	for i := 0; i+1 < len(overrides); i += 2 {
		v.Del(overrides[i])
		set(overrides[i], overrides[i+1])
	}
	return v
}

func (q listQuery) keep(r *appRow) bool {
	return (q.Namespace == "" || r.Namespace == q.Namespace) &&
		(q.Phase == "" || r.Phase == q.Phase) &&
		(q.Health == "" || r.Health() == q.Health) &&
		(q.Name == "" || strings.Contains(r.Name, q.Name))
}

func (q listQuery) compare(a, b *appRow) int {
	var c int
	switch q.Sort {
	case "namespace":
		c = cmp.Compare(a.Namespace, b.Namespace)
	case "phase":
		c = cmp.Compare(a.Phase, b.Phase)
	case "health":
		// Unhealthy first: it is what one looks for.
		c = cmp.Compare(healthRank(a), healthRank(b))
	case "components":
		c = cmp.Compare(len(a.Components), len(b.Components))
	case "age":
		// Youngest first.
		c = b.Created.Compare(a.Created)
	}
	if c == 0 {
		c = cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Namespace, b.Namespace))
	}
	if q.Desc {
		return -c
	}
	return c
}

func healthRank(r *appRow) float64 {
	if r.Total == 0 {
		return 2
	}
	return float64(r.Healthy) / float64(r.Total)
}

// listView is what the list page shows.
type listView struct {
	Query      listQuery
	Rows       []appRow
	Total      int // Applications in the cache (in the dashboard's namespace)
	Matching   int // after the filters
	First      int // 1-based index of the first row shown
	Pages      int
	Namespaces []string
	Phases     []string
	Now        time.Time
}

// listApps builds the list page from the Application cache: no request to
// the API server.
func (s *Server) listApps(r *http.Request, q listQuery) (*listView, error) {
	var list v1beta1.ApplicationList
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if s.opts.Namespace != "" {
		opts = append(opts, client.InNamespace(s.opts.Namespace))
	}
	if err := s.opts.Apps.List(r.Context(), &list, opts...); err != nil {
		return nil, fmt.Errorf("listing applications: %w", err)
	}
	v := &listView{Query: q, Total: len(list.Items), Now: time.Now()}
	namespaces, phases := map[string]bool{}, map[string]bool{}
	rows := make([]appRow, 0, len(list.Items))
	for i := range list.Items {
		row := rowOf(&list.Items[i])
		namespaces[row.Namespace] = true
		if row.Phase != "" {
			phases[row.Phase] = true
		}
		if q.keep(&row) {
			rows = append(rows, row)
		}
	}
	slices.SortFunc(rows, func(a, b appRow) int { return q.compare(&a, &b) })
	v.Matching = len(rows)
	v.Pages = max(1, (len(rows)+q.Limit-1)/q.Limit)
	v.Query.Page = min(q.Page, v.Pages)
	start := (v.Query.Page - 1) * q.Limit
	v.Rows = rows[start:min(len(rows), start+q.Limit)]
	v.First = start + 1
	v.Namespaces = sortedKeys(namespaces)
	v.Phases = sortedKeys(phases)
	return v, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// list serves the list page.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q := parseListQuery(r.URL.Query(), s.opts.PageSize)
	v, err := s.listApps(r, q)
	if err != nil {
		s.fail(w, r, http.StatusServiceUnavailable, err)
		return
	}
	s.render(w, r, start, "list", page{Title: "Applications", Nav: "apps", Live: "/live/list?" + q.values().Encode(), Body: v})
}
