package policy_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The policies' stories run the whole controller (internal/controller/
// manager/managertest) against one real kube-apiserver and etcd
// (internal/controller/controllertest); the package's own table tests
// need neither, and run without starting them.
func TestMain(m *testing.M) { controllertest.Main(m) }
