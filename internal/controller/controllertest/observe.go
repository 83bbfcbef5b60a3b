package controllertest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Condition returns the Application's condition typ, once the status is
// of its generation.
func Condition(t testing.TB, ns, name, typ string) (*v1beta1.Condition, error) {
	t.Helper()
	app := GetApp(t, ns, name)
	c := v1beta1.FindCondition(app.Status.Conditions, typ)
	if c == nil || app.Status.ObservedGeneration != app.Generation {
		return nil, fmt.Errorf("%s = %+v at generation %d", typ, c, app.Status.ObservedGeneration)
	}
	return c, nil
}

// WaitNotReady waits for Ready=False with reason at the Application's
// generation and returns the condition's message.
func WaitNotReady(t testing.TB, ns, name, reason string) string {
	t.Helper()
	var msg string
	Eventually(t, 30*time.Second, name+" Ready=False "+reason, func() error {
		app := GetApp(t, ns, name)
		c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
		if c == nil || c.Status != "False" || c.Reason != reason || app.Status.ObservedGeneration != app.Generation {
			return fmt.Errorf("ready = %+v", c)
		}
		msg = c.Message
		return nil
	})
	return msg
}

// AppEvents lists the events about an Application.
func AppEvents(t testing.TB, ns, name string) []eventsv1.Event {
	t.Helper()
	c := Client(t)
	var list eventsv1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Application" && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// WaitEvent waits for an event with reason about an Application and
// returns its note.
func WaitEvent(t testing.TB, ns, name, reason string) string {
	t.Helper()
	var note string
	Eventually(t, 15*time.Second, "event "+reason, func() error {
		var reasons []string
		for _, e := range AppEvents(t, ns, name) {
			if e.Reason == reason {
				note = e.Note
				return nil
			}
			reasons = append(reasons, e.Reason)
		}
		return fmt.Errorf("events so far: %s", strings.Join(reasons, ", "))
	})
	return note
}

// TrackersOf lists the trackers of an Application.
func TrackersOf(t testing.TB, ns, name string) []v1beta1.ResourceTracker {
	t.Helper()
	c := Client(t)
	var list v1beta1.ResourceTrackerList
	if err := c.List(context.Background(), &list, client.MatchingLabels{
		v1beta1.LabelAppName: name, v1beta1.LabelAppNamespace: ns,
	}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TrackerNamed returns the tracker of an Application with the given name,
// nil when there is none.
func TrackerNamed(t testing.TB, ns, app, name string) *v1beta1.ResourceTracker {
	t.Helper()
	for _, rt := range TrackersOf(t, ns, app) {
		if rt.Name == name {
			return &rt
		}
	}
	return nil
}

// AnyEntry reports whether any tracker of the app has an entry matching
// match.
func AnyEntry(t testing.TB, ns, app string, match func(v1beta1.ManagedResource) bool) bool {
	t.Helper()
	for _, rt := range TrackersOf(t, ns, app) {
		entries, _ := tracker.Entries(&rt)
		if slices.ContainsFunc(entries, match) {
			return true
		}
	}
	return false
}

// ConfigMapOf reads ConfigMap ns/name in the cluster behind c.
func ConfigMapOf(t testing.TB, c client.Client, ns, name string) (*corev1.ConfigMap, error) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm)
	return cm, err
}

// GetConfigMap reads ConfigMap ns/name in the suite's cluster.
func GetConfigMap(t testing.TB, ns, name string) (*corev1.ConfigMap, error) {
	t.Helper()
	c := Client(t)
	return ConfigMapOf(t, c, ns, name)
}

// ConfigMapExists reports whether ConfigMap ns/name exists.
func ConfigMapExists(t testing.TB, ns, name string) bool {
	t.Helper()
	return Exists(t, &corev1.ConfigMap{}, ns, name)
}

// GetDeployment reads Deployment ns/name in the suite's cluster.
func GetDeployment(t testing.TB, ns, name string) (*appsv1.Deployment, error) {
	t.Helper()
	c := Client(t)
	dep := &appsv1.Deployment{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, dep)
	return dep, err
}

// Exists reports whether an object exists, read into obj with the admin
// client; any error but NotFound fails the test.
func Exists(t testing.TB, obj client.Object, ns, name string) bool {
	t.Helper()
	c := Client(t)
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// ReconcileCount is how many passes the Application reconcilers of this
// process have run, all managers together (controller-runtime's
// controller_runtime_reconcile_total of controller "application").
func ReconcileCount(t testing.TB) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if LabelValue(m, "controller") == "application" {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// LabelValue is the value of a metric's label name, "" without it.
func LabelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// PokeAndWaitPass wakes an Application with an annotation change, which
// Steward reconciles on, and waits for the pass to finish.
func PokeAndWaitPass(t testing.TB, ns, name string, i int) {
	t.Helper()
	c := Client(t)
	before := ReconcileCount(t)
	app := GetApp(t, ns, name)
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations["example.com/poke"] = fmt.Sprint(i)
	if err := c.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "a pass", func() error {
		if ReconcileCount(t) == before {
			return ErrNotYet
		}
		return nil
	})
}

// HeapAfterGC is the test process's heap, the controller's included, once
// collected.
func HeapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
