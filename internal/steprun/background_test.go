package steprun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An action runs once per run, in the background: asked for again while
// it runs it is not started twice, its Application is told when it ends,
// its result is served until the run is released, and a released run
// sends it anew.
func TestBackground_OneResultPerRunUntilReleased(t *testing.T) {
	var done atomic.Int32
	b := &Background{Done: func(types.NamespacedName) { done.Add(1) }}
	run := RunID{App: types.NamespacedName{Namespace: "team-a", Name: "app"}, Run: "uid/rev/step"}
	var calls atomic.Int32
	release := make(chan struct{})
	do := func(context.Context) (json.RawMessage, error) {
		calls.Add(1)
		<-release
		return json.RawMessage(`{"n":1}`), nil
	}
	if _, _, ready := b.Result(run, "a", "http.do", json.RawMessage(`{}`), do); ready {
		t.Fatal("ready before it ran")
	}
	if _, _, ready := b.Result(run, "a", "http.do", json.RawMessage(`{}`), do); ready {
		t.Fatal("ready while it runs")
	}
	close(release)
	waitFor(t, "the Application told", func() bool { return done.Load() == 1 })
	for range 2 {
		got, err, ready := b.Result(run, "a", "http.do", json.RawMessage(`{}`), do)
		if !ready || err != nil || string(got) != `{"n":1}` {
			t.Fatalf("result %s %v %v", got, err, ready)
		}
	}
	if calls.Load() != 1 || b.Held() != int64(len(`{"n":1}`)) {
		t.Fatalf("calls %d, held %d", calls.Load(), b.Held())
	}
	b.Release(run)
	if b.Held() != 0 || b.Pending(run.App) {
		t.Fatalf("held %d after release", b.Held())
	}
	if _, _, ready := b.Result(run, "a", "http.do", json.RawMessage(`{}`), do); ready {
		t.Fatal("a released run's action is served from memory")
	}
	waitFor(t, "the action sent anew", func() bool { return calls.Load() == 2 })
}

// One namespace holds at most PerNamespace workers; another namespace's
// actions run meanwhile; a namespace's queue is bounded.
func TestBackground_NamespacesShareTheWorkers(t *testing.T) {
	b := &Background{Workers: 4, PerNamespace: 2, MaxQueued: 5}
	block := make(chan struct{})
	var mu sync.Mutex
	running := map[string]int{}
	peak := map[string]int{}
	do := func(ns string) func(context.Context) (json.RawMessage, error) {
		return func(context.Context) (json.RawMessage, error) {
			mu.Lock()
			running[ns]++
			peak[ns] = max(peak[ns], running[ns])
			mu.Unlock()
			<-block
			mu.Lock()
			running[ns]--
			mu.Unlock()
			return nil, nil
		}
	}
	for i := range 5 {
		run := RunID{App: types.NamespacedName{Namespace: "tarpit", Name: fmt.Sprint(i)}, Run: "r"}
		_, err, ready := b.Result(run, "a", "http.do", nil, do("tarpit"))
		if ready || err != nil {
			t.Fatalf("action %d refused: %v", i, err)
		}
	}
	// The sixth waits beyond the queue's bound: refused, tried later.
	_, err, ready := b.Result(RunID{App: types.NamespacedName{Namespace: "tarpit", Name: "x"}, Run: "r"}, "a", "http.do", nil, do("tarpit"))
	if !ready || err == nil {
		t.Fatalf("want the queue bound, got ready %v err %v", ready, err)
	}
	other := RunID{App: types.NamespacedName{Namespace: "team-b", Name: "app"}, Run: "r"}
	b.Result(other, "a", "http.do", nil, do("team-b"))
	waitFor(t, "team-b's action runs beside the tarpit's", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return running["team-b"] == 1 && running["tarpit"] == 2
	})
	close(block)
	waitFor(t, "all ran", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return running["tarpit"] == 0 && running["team-b"] == 0
	})
	if peak["tarpit"] > 2 {
		t.Fatalf("one namespace ran %d actions at once, more than its 2", peak["tarpit"])
	}
}

// Results held over all runs are bounded: one past the bound is dropped
// and its action fails, so that it is tried again later.
func TestBackground_HeldResultsAreBounded(t *testing.T) {
	b := &Background{MaxHeldBytes: 100}
	big := json.RawMessage(fmt.Sprintf("%q", strings.Repeat("a", 60)))
	for i := range 2 {
		run := RunID{App: types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}, Run: "r"}
		b.Result(run, "a", "http.do", nil, func(context.Context) (json.RawMessage, error) { return big, nil })
		var err error
		waitFor(t, "the result", func() bool {
			var ready bool
			_, err, ready = b.Result(run, "a", "http.do", nil, nil)
			return ready
		})
		if i == 0 && err != nil || i == 1 && err == nil {
			t.Fatalf("result %d: err %v", i, err)
		}
	}
	if b.Held() > 100 {
		t.Fatalf("held %d bytes", b.Held())
	}
}
