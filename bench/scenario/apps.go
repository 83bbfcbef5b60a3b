package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// ComponentType is the ComponentDefinition every benchmark Application
// uses (bench/definitions/bench-service.yaml): a Deployment, a Service and
// `configMaps` ConfigMaps per component.
const ComponentType = "bench-service"

// AppShape is the size of one benchmark Application.
type AppShape struct {
	Components int `json:"components"`
	ConfigMaps int `json:"configMapsPerComponent"`
}

// Resources is the number of objects the Application renders to.
func (s AppShape) Resources() int { return s.Components * (2 + s.ConfigMaps) }

// ShapeOf returns a shape of n objects: one component up to 16 objects, as
// in the memory, steady-state and fleet scenarios, else components of four
// objects (the big app). n is rounded up to a whole number of components.
func ShapeOf(n int) AppShape {
	if n <= 16 {
		return AppShape{Components: 1, ConfigMaps: max(n-2, 0)}
	}
	return AppShape{Components: (n + 3) / 4, ConfigMaps: 2}
}

// NewApplication builds an Application of the given shape.
func NewApplication(namespace, name string, shape AppShape, annotations map[string]string) (*v1beta1.Application, error) {
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations}}
	props, err := json.Marshal(map[string]any{"configMaps": shape.ConfigMaps})
	if err != nil {
		return nil, err
	}
	for i := range shape.Components {
		app.Spec.Components = append(app.Spec.Components, v1beta1.ApplicationComponent{
			Name:       fmt.Sprintf("%s-c%d", name, i),
			Type:       ComponentType,
			Properties: &runtime.RawExtension{Raw: props},
		})
	}
	return app, nil
}

// AppName names the i-th Application of a scenario.
func AppName(i int) string { return fmt.Sprintf("app-%04d", i) }

// EnsureNamespace creates a namespace unless it exists.
func EnsureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// CreateApplications creates n Applications of one shape in namespace.
func CreateApplications(ctx context.Context, c client.Client, namespace string, n int, shape AppShape, annotations map[string]string) error {
	if err := EnsureNamespace(ctx, c, namespace); err != nil {
		return err
	}
	return parallel(ctx, n, 16, func(i int) error {
		app, err := NewApplication(namespace, AppName(i), shape, annotations)
		if err != nil {
			return err
		}
		if err := c.Create(ctx, app); err != nil {
			return fmt.Errorf("creating application %s/%s: %w", namespace, app.Name, err)
		}
		return nil
	})
}

// IsReady reports whether a controller finished an Application: Steward's
// Ready condition for the current generation, or KubeVela's running phase.
func IsReady(app *v1beta1.Application) bool {
	if c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady); c != nil {
		return c.Status == metav1.ConditionTrue && app.Status.ObservedGeneration == app.Generation
	}
	return app.Status.Phase == v1beta1.ApplicationRunning
}

// WaitReady watches the Applications of namespace until want of them are
// ready and returns when the last one became ready.
func WaitReady(ctx context.Context, c client.WithWatch, namespace string, want int, timeout time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ready := map[string]bool{}
	for {
		var list v1beta1.ApplicationList
		if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return time.Time{}, fmt.Errorf("listing applications: %w", err)
		}
		for i := range list.Items {
			ready[list.Items[i].Name] = IsReady(&list.Items[i])
		}
		if countTrue(ready) >= want {
			return time.Now(), nil
		}
		w, err := c.Watch(ctx, &v1beta1.ApplicationList{}, client.InNamespace(namespace),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			return time.Time{}, fmt.Errorf("watching applications: %w", err)
		}
		at, done, err := watchUntilReady(ctx, w, ready, want)
		w.Stop()
		if done || err != nil {
			return at, err
		}
	}
}

// watchUntilReady consumes w; false without error means the watch ended
// and the caller lists again.
func watchUntilReady(ctx context.Context, w watch.Interface, ready map[string]bool, want int) (time.Time, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, false, fmt.Errorf("%d of %d applications ready: %w", countTrue(ready), want, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return time.Time{}, false, nil
			}
			app, isApp := ev.Object.(*v1beta1.Application)
			if !isApp {
				continue
			}
			ready[app.Name] = ev.Type != watch.Deleted && IsReady(app)
			if countTrue(ready) >= want {
				return time.Now(), true, nil
			}
		}
	}
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first
// error.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	return context.Cause(ctx)
}
