package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/bench/record"
)

// driftKind is a kind of managed object that fleet drift damages: the
// field a hand edit changes and the value it writes there.
type driftKind struct {
	gvk   schema.GroupVersionKind
	field []string
	value any
}

// driftKinds are the three kinds every benchmark component renders
// (bench-service): a Deployment scaled by hand, a Service whose selector
// is pointed elsewhere, a ConfigMap whose data is rewritten.
var driftKinds = []driftKind{
	{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, field: []string{"spec", "replicas"}, value: int64(7)},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, field: []string{"spec", "selector", "app.oam.dev/component"}, value: "drifted"},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, field: []string{"data", "FEATURE_FLAGS"}, value: "drifted"},
}

// driftCase is one change awaiting its repair.
type driftCase struct {
	mu      sync.Mutex
	edit    bool
	oldUID  types.UID
	want    any // an edit's field as the manifest sets it
	field   []string
	afterRV uint64 // an edit's own resourceVersion; 0 until known
	seen    []*unstructured.Unstructured
	done    chan struct{}
	at      time.Time
}

// offer hands the case an event of its object; it is repaired by an
// object of a new UID (a delete) or by a write after the edit that put
// the field back.
func (c *driftCase) offer(o *unstructured.Unstructured, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() {
		return
	}
	if c.edit && c.afterRV == 0 {
		c.seen = append(c.seen, o)
		return
	}
	if c.repairedBy(o) {
		c.at = now
		close(c.done)
	}
}

// arm records an edit's resourceVersion and looks at the events that came
// before it was known.
func (c *driftCase) arm(rv uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.afterRV = rv
	for _, o := range c.seen {
		if c.at.IsZero() && c.repairedBy(o) {
			c.at = now
			close(c.done)
		}
	}
	c.seen = nil
}

func (c *driftCase) repairedBy(o *unstructured.Unstructured) bool {
	if !c.edit {
		return o.GetUID() != c.oldUID
	}
	rv, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64)
	if err != nil || rv <= c.afterRV {
		return false
	}
	got, _, _ := unstructured.NestedFieldNoCopy(o.Object, c.field...)
	return reflect.DeepEqual(got, c.want)
}

// driftWatch follows the objects of the damaged kinds in one namespace
// and hands their events to the pending cases.
type driftWatch struct {
	c         client.WithWatch
	namespace string
	mu        sync.Mutex
	pending   map[string]*driftCase // kind/name
}

func driftKey(kind, name string) string { return kind + "/" + name }

// follow watches one kind from now until ctx ends, watching again from
// the last resourceVersion when the apiserver ends a watch.
func (w *driftWatch) follow(ctx context.Context, gvk schema.GroupVersionKind) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := w.c.List(ctx, list, client.InNamespace(w.namespace), client.Limit(1)); err != nil {
		return fmt.Errorf("listing %s: %w", gvk.Kind, err)
	}
	rv := list.GetResourceVersion()
	for ctx.Err() == nil {
		wi, err := w.c.Watch(ctx, list, client.InNamespace(w.namespace), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watching %s: %w", gvk.Kind, err)
		}
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Error {
				wi.Stop()
				if ctx.Err() != nil {
					return nil // the phase is over
				}
				return fmt.Errorf("watching %s: %v", gvk.Kind, apierrors.FromObject(ev.Object))
			}
			o, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = o.GetResourceVersion()
			if ev.Type == watch.Deleted || ev.Type == watch.Bookmark {
				continue
			}
			w.mu.Lock()
			c := w.pending[driftKey(gvk.Kind, o.GetName())]
			w.mu.Unlock()
			if c != nil {
				c.offer(o, time.Now())
			}
		}
		wi.Stop()
	}
	return nil
}

// driftFleet damages cfg.Changes random objects of the apps (named
// AppName(0..apps-1), one component each, shape's ConfigMaps) and times
// each repair; the changes overlap when repairs take longer than
// cfg.Every. progress gets one line per ten changes.
func driftFleet(ctx context.Context, c client.WithWatch, namespace string, apps int, shape AppShape, cfg record.FleetDriftConfig,
	rng *rand.Rand, progress func(string, ...any)) (record.FleetDrift, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &driftWatch{c: c, namespace: namespace, pending: map[string]*driftCase{}}
	watchErr := make(chan error, len(driftKinds))
	for _, k := range driftKinds {
		go func() { watchErr <- w.follow(ctx, k.gvk) }()
	}
	// The watches start from a resourceVersion read before the first
	// change; let them open.
	if err := sleep(ctx, time.Second); err != nil {
		return record.FleetDrift{}, err
	}
	res := record.FleetDrift{ByKind: map[string]int{}}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		failures []error
	)
	for i := range cfg.Changes {
		k := driftKinds[rng.IntN(len(driftKinds))]
		comp := AppName(rng.IntN(apps)) + "-c0"
		name := comp
		if k.gvk.Kind == "ConfigMap" {
			name = fmt.Sprintf("%s-config-%d", comp, rng.IntN(max(shape.ConfigMaps, 1)))
		}
		edit := rng.IntN(2) == 0
		key := driftKey(k.gvk.Kind, name)
		w.mu.Lock()
		busy := w.pending[key] != nil
		w.mu.Unlock()
		if busy {
			continue // the same object drawn twice while it is still being repaired
		}
		if edit {
			res.Edits++
		} else {
			res.Deletes++
		}
		res.ByKind[k.gvk.Kind]++
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := w.damage(ctx, k, name, edit, cfg.Timeout.D())
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, errNotRepaired):
				res.Unrepaired++ // a result, not a failure of the harness
			case err != nil:
				failures = append(failures, fmt.Errorf("%s: %w", key, err))
			default:
				res.Repairs = append(res.Repairs, d.Seconds())
			}
		}()
		if (i+1)%10 == 0 {
			progress("drift: %d changes made", i+1)
		}
		if err := sleep(ctx, cfg.Every.D()); err != nil {
			return res, err
		}
	}
	wg.Wait()
	cancel()
	select {
	case err := <-watchErr:
		if err != nil {
			failures = append(failures, err)
		}
	default:
	}
	return res, errors.Join(failures...)
}

// errNotRepaired: the object was not back within the timeout.
var errNotRepaired = errors.New("not repaired in time")

// damage edits or deletes one object and waits for its repair.
func (w *driftWatch) damage(ctx context.Context, k driftKind, name string, edit bool, timeout time.Duration) (time.Duration, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(k.gvk)
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.namespace, Name: name}, obj); err != nil {
		return 0, fmt.Errorf("reading it before the change: %w", err)
	}
	want, found, _ := unstructured.NestedFieldCopy(obj.Object, k.field...)
	if edit && !found {
		return 0, fmt.Errorf("no field %v to edit", k.field)
	}
	c := &driftCase{edit: edit, oldUID: obj.GetUID(), want: want, field: k.field, done: make(chan struct{})}
	key := driftKey(k.gvk.Kind, name)
	w.mu.Lock()
	w.pending[key] = c
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.pending, key)
		w.mu.Unlock()
	}()
	var changed time.Time
	if edit {
		patch := map[string]any{}
		if err := unstructured.SetNestedField(patch, k.value, k.field...); err != nil {
			return 0, err
		}
		body, err := json.Marshal(patch)
		if err != nil {
			return 0, err
		}
		if err := w.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body)); err != nil {
			return 0, fmt.Errorf("editing: %w", err)
		}
		changed = time.Now()
		rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("resourceVersion %q: %w", obj.GetResourceVersion(), err)
		}
		c.arm(rv, changed)
	} else {
		if err := w.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("deleting: %w", err)
		}
		changed = time.Now()
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-c.done:
		return max(c.at.Sub(changed), 0), nil
	case <-t.C:
		return 0, errNotRepaired
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
