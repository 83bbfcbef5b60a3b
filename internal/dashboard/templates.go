package dashboard

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/readmodel"
)

// parseTemplates parses the embedded pages. html/template escapes every
// value by its context: nothing read from the cluster becomes markup.
func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{
		"age":       age,
		"join":      strings.Join,
		"appURL":    appURL,
		"listURL":   listURL,
		"sortURL":   sortURL,
		"ariaSort":  ariaSort,
		"pageURL":   func(q listQuery, p int) string { return listURL(q.values("page", strconv.Itoa(p))) },
		"add":       func(a, b int) int { return a + b },
		"objectID":  objectID,
		"compID":    func(name string) string { return "component-" + name },
		"stepTime":  stepTime,
		"stepTook":  stepTook,
		"condClass": condClass,
		"source":    source,
		"lastRow":   func(v *listView) int { return v.First + len(v.Rows) - 1 },
		"strs":      func(s ...string) []string { return s },
	}).ParseFS(assets, "assets/templates/*.html")
}

// age says how long ago t was, at minute resolution past the first
// minute, so a page re-rendered unchanged is byte-identical and not sent.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < time.Minute {
		return "<1m"
	}
	return duration.HumanDuration(d.Truncate(time.Minute))
}

func appURL(namespace, name string) string {
	return "/apps/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}

func listURL(v url.Values) string {
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// sortURL sorts by key; sorting again by the current key flips the order.
func sortURL(q listQuery, key string) string {
	order := ""
	if q.Sort == key && !q.Desc {
		order = "desc"
	}
	sortKey := key
	if key == "name" {
		sortKey = ""
	}
	return listURL(q.values("sort", sortKey, "order", order, "page", ""))
}

func ariaSort(q listQuery, key string) string {
	switch {
	case q.Sort != key:
		return "none"
	case q.Desc:
		return "descending"
	}
	return "ascending"
}

// objectID is the anchor of a tracked object on its Application's page.
func objectID(o readmodel.TrackedObject) string {
	return "object-" + o.Cluster + "-" + o.Kind + "-" + o.Namespace + "-" + o.Name
}

// source names where an object comes from: its component, and trait.
func source(o readmodel.TrackedObject) string {
	if o.Trait != "" {
		return o.Component + " / " + o.Trait
	}
	return o.Component
}

func stepTime(t metav1.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("15:04:05")
}

func stepTook(s v1beta1.StepStatus) string {
	if s.FirstExecuteTime.IsZero() || s.LastExecuteTime.IsZero() {
		return "-"
	}
	return s.LastExecuteTime.Sub(s.FirstExecuteTime.Time).Round(time.Second).String()
}

func condClass(c v1beta1.Condition) string {
	if c.Status == metav1.ConditionTrue {
		return "ok"
	}
	if c.Status == metav1.ConditionFalse {
		return "bad"
	}
	return "unknown"
}
