package events

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// However many distinct events are recorded, the recorder remembers at
// most maxSeen of them and queues at most queueSize.
func TestRecorder_MemoryIsBounded(t *testing.T) {
	r := New(nil, clientgoscheme.Scheme, "steward", logr.Discard())
	for i := range 3 * maxSeen {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default"}}
		r.Eventf(cm, nil, corev1.EventTypeWarning, "Failed", "Reconcile", "attempt %d", i)
	}
	if n := len(r.seen); n != maxSeen {
		t.Errorf("%d events remembered, want the bound %d", n, maxSeen)
	}
	if n := len(r.queue); n != queueSize {
		t.Errorf("%d writes queued, want the bound %d", n, queueSize)
	}
}
