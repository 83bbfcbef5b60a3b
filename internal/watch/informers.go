package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
)

// informer is one running reflector of one kind, and its store.
type informer struct {
	store  *store
	cancel context.CancelFunc
	// version is the cluster connection's version it was built from.
	version string
	http    *http.Client
}

// resourceVersion returns the cached resourceVersion of an object, once
// the store holds the whole list.
func (i *informer) resourceVersion(namespace, name string) (version, bool) {
	return i.store.resourceVersion(namespace, name)
}

func (i *informer) stop() {
	i.cancel()
	if i.http != nil {
		i.http.CloseIdleConnections()
	}
}

// Start runs the informers until ctx is done: it implements
// manager.Runnable, and runs on the leader only, like the reconcilers. In
// timer mode it returns at once.
func (w *Watcher) Start(ctx context.Context) error {
	if w.opts.Timer {
		return nil
	}
	t := time.NewTicker(w.opts.Supervise)
	defer t.Stop()
	for {
		w.supervise(ctx)
		select {
		case <-ctx.Done():
			w.mu.Lock()
			for k, inf := range w.informers {
				inf.stop()
				delete(w.informers, k)
			}
			w.mu.Unlock()
			return nil
		case <-t.C:
		case <-w.wake:
		}
	}
}

// Informers lists the kinds informers run for, as "Kind.group@cluster";
// for tests and debugging.
func (w *Watcher) Informers() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.informers))
	for k := range w.informers {
		out = append(out, k.String())
	}
	return out
}

func (k kindKey) String() string {
	s := k.Kind
	if k.Group != "" {
		s += "." + k.Group
	}
	return s + "@" + v1beta1.ClusterDisplay(k.Cluster)
}

// supervise makes the running informers those of the kinds in use, in
// clusters that are registered and reachable, built from their current
// credentials.
func (w *Watcher) supervise(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithName("watch")
	w.mu.Lock()
	want := maps.Clone(w.refs)
	have := maps.Clone(w.informers)
	w.mu.Unlock()

	// A kind still in use keeps what its stopped store held, to seed the
	// next one: objects deleted while no watch ran are then found gone.
	stop := func(k kindKey, why string) {
		if inf := have[k]; inf != nil {
			inf.stop()
			delete(have, k)
			if _, used := want[k]; used {
				w.paused[k] = inf.store.held()
			}
			log.V(1).Info("Stopped informer", "kind", k.String(), "reason", why)
		}
	}
	for k := range have {
		if _, ok := want[k]; !ok {
			stop(k, "no tracker lists the kind")
		}
	}
	for k := range w.paused {
		if _, ok := want[k]; !ok {
			delete(w.paused, k)
		}
	}
	type conn struct {
		c   cluster.Connection
		err error
	}
	conns := map[string]conn{}
	for k := range want {
		c, ok := conns[k.Cluster]
		if !ok {
			c.c, c.err = w.connection(ctx, k.Cluster)
			conns[k.Cluster] = c
		}
		if c.err != nil {
			stop(k, c.err.Error())
			continue
		}
		if inf := have[k]; inf != nil {
			if inf.version == c.c.Version {
				continue
			}
			stop(k, "the cluster's credentials changed")
		}
		inf, err := w.start(ctx, k, c.c, w.paused[k])
		if err != nil {
			log.V(1).Info("Informer not started; StateKeep reads the kind's objects", "kind", k.String(), "reason", err.Error())
			continue
		}
		delete(w.paused, k)
		have[k] = inf
		log.V(1).Info("Started informer", "kind", k.String())
	}
	w.mu.Lock()
	w.informers = have
	w.mu.Unlock()
	perCluster := map[string]int{}
	for k := range have {
		perCluster[k.Cluster]++
	}
	for c := range conns {
		w.opts.Metrics.SetWatchInformers(v1beta1.ClusterDisplay(c), perCluster[c])
	}
	for c, n := range perCluster {
		w.opts.Metrics.SetWatchInformers(v1beta1.ClusterDisplay(c), n)
	}
}

// errUnreachable pauses the informers of a cluster whose last probe failed.
var errUnreachable = errors.New("the cluster is unreachable")

// connection returns how to watch a cluster, or why its informers must
// not run: detached (not registered) or unreachable.
func (w *Watcher) connection(ctx context.Context, name string) (cluster.Connection, error) {
	c, err := w.opts.Clusters.Connection(ctx, name)
	if err != nil {
		return c, err
	}
	if name != "" {
		if p, ok := w.opts.Clusters.LastProbe(name); ok && p.Err != nil {
			return c, fmt.Errorf("%w: %v", errUnreachable, p.Err)
		}
	}
	return c, nil
}

// start runs the reflector of one kind: a metadata-only list and watch
// carrying the label selector, into a store that keeps what events are
// judged by.
func (w *Watcher) start(ctx context.Context, k kindKey, c cluster.Connection, seed map[storeKey]cached) (*informer, error) {
	mapping, err := c.Mapper.RESTMapping(schema.GroupKind{Group: k.Group, Kind: k.Kind})
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfigAndClient(c.Config, hc)
	if err != nil {
		return nil, err
	}
	resource := mc.Resource(mapping.Resource).Namespace(metav1.NamespaceAll)
	s := newStore(w.changed(k), seed)
	r := reflector(s, w.opts.Selector, &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return resource.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watchapi.Interface, error) {
			return resource.Watch(ctx, o)
		},
	}, mc, cache.ReflectorOptions{Name: "watch " + k.String(), TypeDescription: mapping.Resource.String()})
	ictx, cancel := context.WithCancel(ctx)
	go r.RunWithContext(ictx)
	return &informer{store: s, cancel: cancel, version: c.Version, http: hc}, nil
}

// reflector returns a Reflector that lists and watches with lw, selected
// by selector, into s: the store is untrusted from the moment a list (or a
// streaming list) begins until it has been handed over. client tells
// whether the lists may stream (WatchList).
func reflector(s *store, selector string, lw *cache.ListWatch, client any, opts cache.ReflectorOptions) *cache.Reflector {
	list, watch := lw.ListWithContextFunc, lw.WatchFuncWithContext
	return cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			s.listing()
			o.LabelSelector = selector
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watchapi.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				s.listing()
			}
			o.LabelSelector = selector
			return watch(ctx, o)
		},
	}, client), &metav1.PartialObjectMetadata{}, s, opts)
}

// changed turns the store's changes into events.
func (w *Watcher) changed(k kindKey) func(storeKey, version, []types.NamespacedName, bool) {
	kind := unique.Make(k)
	return func(ref storeKey, rv version, apps []types.NamespacedName, gone bool) {
		key := objectKey{kind: kind, namespace: ref.namespace, name: ref.name}
		for _, app := range apps {
			w.event(key, rv, app, gone)
		}
	}
}
