package admission_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The webhook's stories run the whole controller (internal/controller/
// manager/managertest) against one real kube-apiserver and etcd
// (internal/controller/controllertest), which calls the webhook as it
// would in a cluster.
func TestMain(m *testing.M) { controllertest.Main(m) }
