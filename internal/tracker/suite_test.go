package tracker_test

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The trackers' stories run the whole controller (internal/controller/
// manager/managertest) against one real kube-apiserver and etcd
// (internal/controller/controllertest): a big Application's tracker
// compressed under etcd's limit, trackers deleted by hand (as a user
// would, or by kubectl --cascade=foreground) and the rescue copy that
// loses nothing when the controller stops halfway.
func TestMain(m *testing.M) { controllertest.Main(m) }
