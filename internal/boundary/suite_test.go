package boundary_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The namespace boundary's stories run the whole controller
// (internal/controller/manager/managertest) against one real
// kube-apiserver and etcd (internal/controller/controllertest), which
// authorises with RBAC: what an Application acting as a ServiceAccount may
// deliver, what --no-cross-namespace-objects refuses, and the same in a
// joined spoke cluster.
func TestMain(m *testing.M) { controllertest.Main(m) }
