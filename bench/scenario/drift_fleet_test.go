package scenario

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func object(uid, rv string, fields map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: fields}
	o.SetUID(types.UID(uid))
	o.SetResourceVersion(rv)
	return o
}

// An edit is repaired by a later write that puts the field back, not by
// the edit's own event nor by an event older than it, even when the
// events arrive before the edit's resourceVersion is known.
func TestDriftCase_EditRepairedByALaterWriteOfTheManifestValue(t *testing.T) {
	now := time.Now()
	c := &driftCase{edit: true, want: int64(1), field: []string{"spec", "replicas"}, done: make(chan struct{})}
	c.offer(object("u", "10", map[string]any{"spec": map[string]any{"replicas": int64(1)}}), now) // before the edit
	c.offer(object("u", "11", map[string]any{"spec": map[string]any{"replicas": int64(7)}}), now) // the edit
	c.arm(11, now)
	select {
	case <-c.done:
		t.Fatal("repaired by an event from before the edit")
	default:
	}
	c.offer(object("u", "12", map[string]any{"spec": map[string]any{"replicas": int64(7)}}), now)
	select {
	case <-c.done:
		t.Fatal("repaired by a write that left the edit")
	default:
	}
	c.offer(object("u", "13", map[string]any{"spec": map[string]any{"replicas": int64(1)}}), now.Add(time.Second))
	select {
	case <-c.done:
	default:
		t.Fatal("not repaired by the write that put spec.replicas back")
	}
	if !c.at.Equal(now.Add(time.Second)) {
		t.Errorf("repaired at %v: want the repairing event's arrival", c.at)
	}
}

// A delete is repaired by an object of the same name and a new UID.
func TestDriftCase_DeleteRepairedByANewObject(t *testing.T) {
	c := &driftCase{oldUID: "old", done: make(chan struct{})}
	c.offer(object("old", "20", map[string]any{}), time.Now())
	select {
	case <-c.done:
		t.Fatal("repaired by the deleted object")
	default:
	}
	c.offer(object("new", "21", map[string]any{}), time.Now())
	select {
	case <-c.done:
	default:
		t.Fatal("not repaired by the re-created object")
	}
}
