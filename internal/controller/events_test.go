package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// appEvents lists the events about an Application.
func appEvents(t *testing.T, ns, name string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := testClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
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

// waitEvent waits for an event with reason about an Application and
// returns its note.
func waitEvent(t *testing.T, ns, name, reason string) string {
	t.Helper()
	var note string
	eventually(t, 15*time.Second, "event "+reason, func() error {
		var reasons []string
		for _, e := range appEvents(t, ns, name) {
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
