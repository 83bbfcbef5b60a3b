package apply

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Action is what an apply or delete did to one object.
type Action string

// Actions, as users read them in events.
const (
	// Created: the object did not exist and was created.
	Created Action = "created"
	// Configured: the object existed and was patched.
	Configured Action = "configured"
	// Unchanged: the object matched; nothing was written.
	Unchanged Action = "unchanged"
	// Deleted: a delete request was accepted.
	Deleted Action = "deleted"
	// Gone: the object was already absent.
	Gone Action = "gone"
	// Terminating: the object is being deleted already (finalizers).
	Terminating Action = "terminating"
	// Skipped: the object is not ours, so it was left alone.
	Skipped Action = "skipped"
	// Drifted: the object differs from its manifest; nothing was written
	// (report-only).
	Drifted Action = "drifted"
	// Missing: the object does not exist; nothing was written
	// (report-only).
	Missing Action = "missing"
)

// Result is the outcome for one object.
type Result struct {
	Action Action
	// Live is the object as the API server returned it after the
	// operation; nil when it does not exist.
	Live *unstructured.Unstructured
	// Patch is the patch sent for a Configured object (ClientSide).
	Patch []byte
	// Fields names the fields that changed (Configured) or differ
	// (Drifted): "spec.replicas".
	Fields []string
	// Conflicts are the fields Steward took from other field managers
	// (ServerSide).
	Conflicts []Conflict
}

// ErrNotOwned means an object exists that this Application does not own.
var ErrNotOwned = errors.New("object not owned by this application")

// OwnershipError says which object is owned by whom. It matches ErrNotOwned
// with errors.Is.
type OwnershipError struct {
	// Object names the object: "Deployment default/web".
	Object string
	// OwnerName and OwnerNamespace name the other Application; both empty
	// when no Application owns the object.
	OwnerName      string
	OwnerNamespace string
}

func (e *OwnershipError) Error() string {
	if e.OwnerName == "" {
		return fmt.Sprintf("%s already exists and is not managed by any application; adopt it with a take-over policy or delete it", e.Object)
	}
	return fmt.Sprintf("%s is owned by application %s/%s", e.Object, e.OwnerNamespace, e.OwnerName)
}

// Is makes OwnershipError match ErrNotOwned.
func (e *OwnershipError) Is(target error) bool { return target == ErrNotOwned }
