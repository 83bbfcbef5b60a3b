package definition_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The definitions' stories run the whole controller (internal/controller/
// manager/managertest): what a definition's status says, and what the
// Applications that use it render, against one real kube-apiserver and
// etcd (internal/controller/controllertest).
func TestMain(m *testing.M) { controllertest.Main(m) }
