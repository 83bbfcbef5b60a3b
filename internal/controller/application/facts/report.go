package facts

import (
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/tracker"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Change is one object a pass created, patched or deleted.
type Change struct {
	Key    tracker.Key
	Action apply.Action
	// Fields are the fields a patch changed, for drift reports.
	Fields []string
}

// Failure is one object a pass could not apply or delete.
type Failure struct {
	Key       tracker.Key
	Component string
	Reason    string
	Err       error
}

// KeepReport is what applying the current tracker did.
type KeepReport struct {
	// Ran is true when there was a tracker to keep.
	Ran      bool
	Applied  int
	Changes  []Change
	Failures []Failure
	// Waiting lists components skipped because a dependency failed, or,
	// when dispatched, is not healthy yet.
	Waiting []string
	// UnhealthyDeps says, for the Dispatched condition, which
	// dependencies the waiting components wait to become healthy.
	UnhealthyDeps []string
	// Gated counts objects of workflow steps not reached yet.
	Gated int
	// Live are the objects as read or written in this pass, for health.
	Live map[tracker.Key]*unstructured.Unstructured
	// Drifted are the objects report-only mode found drifted.
	Drifted []Change
	// Conflicts are the fields taken from other field managers.
	Conflicts []FieldConflict
	// Unread are objects watch mode found unchanged and did not read;
	// health reads them only when it must evaluate their component again.
	Unread []Unread
}

// FieldConflict is a field of an object Steward took from another field
// manager.
type FieldConflict struct {
	Key tracker.Key
	apply.Conflict
}

// Unread is an object watch mode did not read, at the
// resourceVersion the watch cache has.
type Unread struct {
	Key             tracker.Key
	ResourceVersion string
}

// GCReport is what garbage collection did.
type GCReport struct {
	Deleted  []Change
	Pending  []tracker.Key
	Failures []Failure
	// Skipped is true when the current version is not fully applied, so
	// nothing was collected.
	Skipped bool
	// LeftBehind are objects in clusters that are no longer registered,
	// dropped from the trackers without being deleted.
	LeftBehind []tracker.Key
}

// Remember keeps the live object of key for health evaluation.
func (k *KeepReport) Remember(key tracker.Key, live *unstructured.Unstructured) {
	if k.Live == nil {
		k.Live = map[tracker.Key]*unstructured.Unstructured{}
	}
	k.Live[key] = live
}
