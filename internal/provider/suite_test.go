package provider_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The trust stories run the whole controller (internal/controller/
// manager/managertest) against one real kube-apiserver and etcd
// (internal/controller/controllertest): what a tenant can make Steward do
// through the step providers and Helm chart sources, tried as a hostile
// tenant would.
func TestMain(m *testing.M) { controllertest.Main(m) }
