package application

import (
	"testing"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// appEvents lists the events about an Application.
func appEvents(t *testing.T, ns, name string) []eventsv1.Event {
	t.Helper()
	return controllertest.AppEvents(t, ns, name)
}

// waitEvent waits for an event with reason about an Application and
// returns its note.
func waitEvent(t *testing.T, ns, name, reason string) string {
	t.Helper()
	return controllertest.WaitEvent(t, ns, name, reason)
}
