package events_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/steward-oam/steward/internal/events"
	"github.com/steward-oam/steward/internal/testcp"
)

func startRecorder(t *testing.T) (*events.Recorder, client.Client, *corev1.ConfigMap) {
	t.Helper()
	plane := testcp.StartT(t, testcp.Options{}, "hub")[0]
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(plane.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	r := events.New(c, scheme, "steward", zap.New(zap.UseDevMode(true)))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = r.Start(ctx) }()
	return r, c, cm
}

func eventsAbout(t *testing.T, c client.Client, name string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRecorder_WritesTheEventAndFoldsRepeatsIntoASeries(t *testing.T) {
	r, c, cm := startRecorder(t)
	r.Eventf(cm, nil, corev1.EventTypeWarning, "RenderFailed", "Render", "definition %q not found", "web")
	waitFor(t, "the event", func() error {
		evs := eventsAbout(t, c, "web")
		if len(evs) != 1 {
			return fmt.Errorf("%d events", len(evs))
		}
		e := evs[0]
		if e.Reason != "RenderFailed" || e.Action != "Render" || e.Type != corev1.EventTypeWarning ||
			e.Note != `definition "web" not found` || e.ReportingController != "steward" ||
			e.Regarding.Kind != "ConfigMap" || e.Regarding.UID != cm.UID {
			return fmt.Errorf("event %+v", e)
		}
		return nil
	})

	// The same event again: one event with a series, not a second event.
	r.Eventf(cm, nil, corev1.EventTypeWarning, "RenderFailed", "Render", "definition %q not found", "web")
	waitFor(t, "a series of 2", func() error {
		evs := eventsAbout(t, c, "web")
		if len(evs) != 1 || evs[0].Series == nil || evs[0].Series.Count != 2 {
			return fmt.Errorf("events %+v", evs)
		}
		return nil
	})

	// Later repeats are counted and written on the next flush.
	r.Eventf(cm, nil, corev1.EventTypeWarning, "RenderFailed", "Render", "definition %q not found", "web")
	r.Eventf(cm, nil, corev1.EventTypeWarning, "RenderFailed", "Render", "definition %q not found", "web")
	r.Flush()
	waitFor(t, "a series of 4", func() error {
		evs := eventsAbout(t, c, "web")
		if len(evs) != 1 || evs[0].Series == nil || evs[0].Series.Count != 4 {
			return fmt.Errorf("events %+v", evs)
		}
		return nil
	})

	// A different message is a different event.
	r.Eventf(cm, nil, corev1.EventTypeNormal, "Ready", "Reconcile", "rendered, dispatched, kept and healthy")
	waitFor(t, "the second event", func() error {
		if evs := eventsAbout(t, c, "web"); len(evs) != 2 {
			return fmt.Errorf("%d events", len(evs))
		}
		return nil
	})
}
