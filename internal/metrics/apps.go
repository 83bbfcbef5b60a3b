package metrics

import (
	"sync"
	"unique"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// appGauges holds the per-Application gauges (steward_tracked_resources,
// steward_tracker_size_bytes) as plain numbers and builds the series only
// when scraped. A GaugeVec keeps a metric with its label pairs per series,
// about 2 KiB per Application for these three series, which at thousands
// of Applications was a tenth of the controller's heap; here an
// Application costs one map entry, whose key is the interned name the
// watch and the work queue already hold.
type appGauges struct {
	tracked *prometheus.Desc
	size    *prometheus.Desc

	mu   sync.Mutex
	apps map[unique.Handle[types.NamespacedName]]appSizes
}

type appSizes struct {
	tracked     int64
	raw, stored int64
	// hasTracked and hasSize say which series the Application has: an
	// Application whose pass stopped before it had a tracker has no size.
	hasTracked, hasSize bool
}

func newAppGauges() *appGauges {
	return &appGauges{
		tracked: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "tracked_resources"),
			"Objects recorded in an Application's resource trackers.", []string{"namespace", "app"}, nil),
		size: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "tracker_size_bytes"),
			"Size of an Application's resource trackers: the manifests as JSON (raw) and as stored after compression (stored).",
			[]string{"namespace", "app", "encoding"}, nil),
		apps: map[unique.Handle[types.NamespacedName]]appSizes{},
	}
}

func appKey(namespace, app string) unique.Handle[types.NamespacedName] {
	return unique.Make(types.NamespacedName{Namespace: namespace, Name: app})
}

func (g *appGauges) update(namespace, app string, set func(*appSizes)) {
	k := appKey(namespace, app)
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.apps[k]
	set(&s)
	g.apps[k] = s
}

func (g *appGauges) delete(namespace, app string) {
	k := appKey(namespace, app)
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.apps, k)
}

// Describe implements prometheus.Collector.
func (g *appGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.tracked
	ch <- g.size
}

// Collect implements prometheus.Collector. The values are copied under
// the lock and the series built after it, so a scrape of many
// Applications does not hold up the reconcilers.
func (g *appGauges) Collect(ch chan<- prometheus.Metric) {
	type row struct {
		key unique.Handle[types.NamespacedName]
		appSizes
	}
	g.mu.Lock()
	rows := make([]row, 0, len(g.apps))
	for k, s := range g.apps {
		rows = append(rows, row{k, s})
	}
	g.mu.Unlock()
	for _, r := range rows {
		n := r.key.Value()
		if r.hasTracked {
			ch <- prometheus.MustNewConstMetric(g.tracked, prometheus.GaugeValue, float64(r.tracked), n.Namespace, n.Name)
		}
		if r.hasSize {
			ch <- prometheus.MustNewConstMetric(g.size, prometheus.GaugeValue, float64(r.raw), n.Namespace, n.Name, EncodingRaw)
			ch <- prometheus.MustNewConstMetric(g.size, prometheus.GaugeValue, float64(r.stored), n.Namespace, n.Name, EncodingStored)
		}
	}
}
