package events

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

func distinctEvent(r *Recorder, i int) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default"}}
	r.Eventf(cm, nil, corev1.EventTypeWarning, "Failed", "Reconcile", "attempt %d", i)
}

// However many distinct events are recorded, the recorder remembers at
// most maxSeen of them.
func TestRecorder_RemembersAtMostMaxSeen(t *testing.T) {
	r := New(nil, clientgoscheme.Scheme, "steward", logr.Discard())
	for i := range 3 * maxSeen {
		distinctEvent(r, i)
		<-r.queue // a writer that writes nothing: the queue never fills
	}
	if n := len(r.seen); n != maxSeen {
		t.Errorf("%d events remembered, want the bound %d", n, maxSeen)
	}
}

// Past queueSize, events are dropped, and a dropped event is forgotten:
// its next occurrence is created, not counted on an event never written.
func TestRecorder_QueueIsBoundedAndDroppedEventsAreForgotten(t *testing.T) {
	r := New(nil, clientgoscheme.Scheme, "steward", logr.Discard())
	for i := range 3 * queueSize {
		distinctEvent(r, i)
	}
	if n := len(r.queue); n != queueSize {
		t.Errorf("%d writes queued, want the bound %d", n, queueSize)
	}
	if n := len(r.seen); n != queueSize {
		t.Errorf("%d events remembered, want only the %d queued", n, queueSize)
	}
}
