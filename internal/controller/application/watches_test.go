package application

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/rest"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// requestLog records the requests a controller sends to the API server.
type requestLog struct {
	mu   sync.Mutex
	reqs []string // "VERB path?query"
	// metadata holds the requests that asked for metadata only
	// (PartialObjectMetadata).
	metadata []string
}

func (l *requestLog) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			l.mu.Lock()
			r := req.Method + " " + req.URL.Path + "?" + req.URL.RawQuery
			l.reqs = append(l.reqs, r)
			if strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
				l.metadata = append(l.metadata, r)
			}
			l.mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

// watched returns the resource paths the controller opened watches on.
func (l *requestLog) watched() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.reqs {
		if strings.HasPrefix(r, "GET ") && strings.Contains(r, "watch=true") {
			out = append(out, strings.SplitN(strings.TrimPrefix(r, "GET "), "?", 2)[0])
		}
	}
	return out
}

func (l *requestLog) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return countPrefixed(l.reqs, prefix)
}

// countMetadata counts the metadata-only requests that start with prefix.
func (l *requestLog) countMetadata(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return countPrefixed(l.metadata, prefix)
}

func countPrefixed(reqs []string, prefix string) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestWatches_NoInformerForRenderedKinds(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	startManager(t, log.wrap(testCfg), testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	time.Sleep(3 * time.Second) // at least one StateKeep pass reads the objects

	for _, path := range log.watched() {
		if !strings.HasPrefix(path, "/apis/core.oam.dev/") {
			t.Errorf("the controller watches %s; it must watch only Steward's own kinds", path)
		}
	}
	if len(log.watched()) == 0 {
		t.Fatal("no watches recorded at all; the request log is broken")
	}
	eventually(t, 10*time.Second, "StateKeep passes reading the Deployment from the API server", func() error {
		if n := log.count("GET /apis/apps/v1/namespaces/" + ns + "/deployments/web"); n < 2 {
			return fmt.Errorf("deployment read %d times", n)
		}
		return nil
	})
}

func TestWatches_CachedGVKsOptIn(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	opts := testOptions()
	opts.CachedGVKs = []string{"Deployment.v1.apps"}
	startManager(t, log.wrap(testCfg), opts)
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	// The dispatch creates without reading; the first StateKeep pass reads
	// the Deployment through the cache, which starts its informer.
	eventually(t, 10*time.Second, "a watch on Deployments", func() error {
		for _, path := range log.watched() {
			if strings.HasSuffix(path, "/apis/apps/v1/deployments") {
				return nil
			}
		}
		return errNotYet
	})

	var deployments, others bool
	for _, path := range log.watched() {
		switch {
		case strings.HasSuffix(path, "/apis/apps/v1/deployments"):
			deployments = true
		case !strings.HasPrefix(path, "/apis/core.oam.dev/"):
			others = true
			t.Errorf("unexpected watch on %s", path)
		}
	}
	if !deployments || others {
		t.Errorf("with --optimize-cached-gvks=Deployment.v1.apps only Deployments should be watched; watches: %v", log.watched())
	}
}

func reconcileCount(t *testing.T) float64 {
	t.Helper()
	return controllertest.ReconcileCount(t)
}

func labelValue(m *dto.Metric, name string) string { return controllertest.LabelValue(m, name) }

func TestReconcile_DoesNotLoopOnItsOwnWrites(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.ReSyncPeriod = time.Hour // only events can trigger a reconcile
	startManager(t, testCfg, opts)
	before := reconcileCount(t)
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	settled := reconcileCount(t)
	time.Sleep(5 * time.Second)
	after := reconcileCount(t)

	// The finalizer patch, the status patch and the tracker writes must
	// not wake the controller: one reconcile delivers the app (allow one
	// more for a cache that lagged behind the first write).
	if n := settled - before; n > 2 {
		t.Errorf("%v reconciles to deliver one app; the controller reacts to its own writes", n)
	}
	if after != settled {
		t.Errorf("%v reconciles while nothing changed", after-settled)
	}

	// A spec change is an event that matters.
	app := getApp(t, ns, "web")
	app.Spec.Components[0].Traits = app.Spec.Components[0].Traits[:1]
	if err := testClient.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a reconcile after a spec change", func() error {
		if reconcileCount(t) == after {
			return errNotYet
		}
		return nil
	})
}
