package sandbox_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The budget's stories run the whole controller (internal/controller/
// manager/managertest) against one real kube-apiserver and etcd
// (internal/controller/controllertest): what a tenant's definitions that
// no budget affords do to their Applications, their neighbours and the
// controller. The controller's evaluators are this test binary started
// again (the package's init serves them).
func TestMain(m *testing.M) { controllertest.Main(m) }
