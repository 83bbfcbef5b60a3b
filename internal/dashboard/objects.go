package dashboard

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/readmodel"
)

// objectWatch watches the objects of one Application while its page is
// open: one metadata-only watch per cluster, kind and namespace, selected
// by Steward's ownership labels, so a hand edit or delete shows within a
// moment. A watch the identity may not open is left to the page's poll.
type objectWatch struct {
	clusters *cluster.Manager
	selector string
	log      logr.Logger
	changed  chan struct{}

	mu      sync.Mutex
	running map[string]bool
	cancel  []context.CancelFunc
}

// newObjectWatch signals changed (without blocking) on every change it
// sees.
func newObjectWatch(m *cluster.Manager, namespace, name string, changed chan struct{}, log logr.Logger) *objectWatch {
	sel := labels.SelectorFromSet(labels.Set{v1beta1.LabelAppName: name, v1beta1.LabelAppNamespace: namespace}).String()
	return &objectWatch{clusters: m, selector: sel, log: log, changed: changed, running: map[string]bool{}}
}

// ensure starts the watches the tree's objects need that are not running.
func (o *objectWatch) ensure(ctx context.Context, tree *readmodel.AppTree) {
	if tree == nil {
		return
	}
	for _, c := range tree.Clusters {
		if c.Error != "" {
			continue
		}
		for _, obj := range c.Objects {
			gv, err := schema.ParseGroupVersion(obj.APIVersion)
			if err != nil {
				continue
			}
			key := c.Cluster + "|" + obj.APIVersion + "|" + obj.Kind + "|" + obj.Namespace
			o.mu.Lock()
			started := o.running[key]
			o.running[key] = true
			o.mu.Unlock()
			if !started {
				o.start(ctx, c.Cluster, gv.WithKind(obj.Kind), obj.Namespace)
			}
		}
	}
}

func (o *objectWatch) start(ctx context.Context, clusterName string, gvk schema.GroupVersionKind, namespace string) {
	conn, err := o.clusters.Connection(ctx, clusterName)
	if err != nil {
		return
	}
	mapping, err := conn.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return
	}
	mc, err := metadata.NewForConfig(conn.Config)
	if err != nil {
		return
	}
	res := mc.Resource(mapping.Resource)
	var iface metadata.ResourceInterface = res
	if namespace != "" {
		iface = res.Namespace(namespace)
	}
	wctx, cancel := context.WithCancel(ctx)
	o.mu.Lock()
	o.cancel = append(o.cancel, cancel)
	o.mu.Unlock()
	go o.run(wctx, iface, gvk)
}

// run keeps one watch open, reopening it after an error with a pause.
// The first events of a watch list what exists; they are not changes.
func (o *objectWatch) run(ctx context.Context, iface metadata.ResourceInterface, gvk schema.GroupVersionKind) {
	for ctx.Err() == nil {
		list, err := iface.List(ctx, metav1.ListOptions{LabelSelector: o.selector})
		var w watch.Interface
		if err == nil {
			w, err = iface.Watch(ctx, metav1.ListOptions{LabelSelector: o.selector, ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: false})
		}
		if err != nil {
			o.log.V(2).Info("dashboard cannot watch objects; the page polls them", "kind", gvk.String(), "error", err.Error())
			select {
			case <-ctx.Done():
				return
			case <-time.After(30 * time.Second):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type != watch.Bookmark {
				notify(o.changed)
			}
		}
		w.Stop()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (o *objectWatch) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range o.cancel {
		c()
	}
	o.cancel = nil
}
