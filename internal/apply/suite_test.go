package apply_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The server-side apply stories run the whole controller
// (internal/controller/manager/managertest) against the test binary's
// real kube-apiserver and etcd (internal/controller/controllertest), which
// the applier's own tests (serverside_test.go) share: objects over the
// annotation limit, objects an earlier client-side Steward applied, other
// field managers' fields, in the hub and in a spoke.
func TestMain(m *testing.M) { controllertest.Main(m) }
