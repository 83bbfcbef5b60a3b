package admission

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func createApplication(name string) admission.Request {
	raw := []byte(`{"apiVersion":"core.oam.dev/v1beta1","kind":"Application","metadata":{"name":"` + name + `","namespace":"default"},"spec":{"components":[]}}`)
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create,
		Kind:      metav1.GroupVersionKind{Group: "core.oam.dev", Version: "v1beta1", Kind: "Application"},
		Namespace: "default",
		Name:      name,
		Object:    runtime.RawExtension{Raw: raw},
	}}
}

// slowCheck blocks every check until release is closed, counting the
// checks running and the most that ever ran at once.
type slowCheck struct {
	release          chan struct{}
	running, maxSeen atomic.Int32
	started          chan struct{}
}

func newSlowCheck() *slowCheck {
	return &slowCheck{release: make(chan struct{}), started: make(chan struct{}, 100)}
}

func (s *slowCheck) check(ctx context.Context, _ client.Object) Result {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		m := s.maxSeen.Load()
		if n <= m || s.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	s.started <- struct{}{}
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return Result{}
}

func busyWarning(resp admission.Response) bool {
	for _, w := range resp.Warnings {
		if strings.Contains(w, "checks are already running") && strings.Contains(w, "status conditions") {
			return true
		}
	}
	return false
}

// A flood of writes must not queue checks without bound: beyond
// MaxChecks, a request is admitted at once with a warning, and no more
// than MaxChecks checks ever run at once.
func TestHandle_BoundsChecksRunningAtOnce(t *testing.T) {
	const bound, total = 3, 12
	slow := newSlowCheck()
	h := newHandler(nil, Options{Timeout: time.Minute, MaxChecks: bound})
	h.check = slow.check

	var wg sync.WaitGroup
	resps := make(chan admission.Response, total)
	for i := range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps <- h.Handle(context.Background(), createApplication("app-"+string(rune('a'+i))))
		}()
	}
	// The extra requests answer while the bound's checks are still
	// blocked: they never wait for a slot.
	deadline := time.After(10 * time.Second)
	for range total - bound {
		select {
		case resp := <-resps:
			if !resp.Allowed || !busyWarning(resp) {
				t.Errorf("extra request answered %+v; want admitted with the busy warning", resp.AdmissionResponse)
			}
			if w := resp.Warnings[0]; !strings.Contains(w, "3 checks") {
				t.Errorf("warning %q does not name the bound", w)
			}
		case <-deadline:
			t.Fatal("extra requests waited for a running check; want an immediate answer")
		}
	}
	for range bound {
		<-slow.started
	}
	if got := slow.running.Load(); got != bound {
		t.Errorf("%d checks running; want %d", got, bound)
	}
	close(slow.release)
	wg.Wait()
	close(resps)
	for resp := range resps {
		if !resp.Allowed || busyWarning(resp) {
			t.Errorf("checked request answered %+v; want admitted without the busy warning", resp.AdmissionResponse)
		}
	}
	if got := slow.maxSeen.Load(); got > bound {
		t.Errorf("%d checks ran at once; want at most %d", got, bound)
	}
}

// A check that outlives its answer (the timeout) keeps its slot until it
// ends; then the slot is free again.
func TestHandle_TimedOutCheckHoldsItsSlot(t *testing.T) {
	slow := newSlowCheck()
	h := newHandler(nil, Options{Timeout: 20 * time.Millisecond, MaxChecks: 1})
	h.check = slow.check

	resp := h.Handle(context.Background(), createApplication("first"))
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "not checked within") {
		t.Fatalf("first request answered %+v; want the timeout warning", resp.AdmissionResponse)
	}
	resp = h.Handle(context.Background(), createApplication("second"))
	if !resp.Allowed || !busyWarning(resp) {
		t.Fatalf("second request answered %+v; want the busy warning while the first check runs", resp.AdmissionResponse)
	}
	close(slow.release)
	// The first check's goroutine gives its slot back once it returns.
	deadline := time.Now().Add(10 * time.Second)
	for len(h.running) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slot of a finished check was never given back")
		}
		time.Sleep(time.Millisecond)
	}
	resp = h.Handle(context.Background(), createApplication("third"))
	if !resp.Allowed || len(resp.Warnings) != 0 {
		t.Errorf("third request answered %+v; want checked and admitted", resp.AdmissionResponse)
	}
}
