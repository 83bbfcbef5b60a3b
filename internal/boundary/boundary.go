package boundary

import (
	"errors"
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Boundary is what one Application may reach.
type Boundary struct {
	// Namespace is the Application's namespace.
	Namespace string
	// Confined is --no-cross-namespace-objects: only Namespace, and
	// cluster-scoped objects only when Impersonating.
	Confined bool
	// Impersonating is true when the Application acts as a ServiceAccount
	// (its RBAC decides what it may do at cluster scope).
	Impersonating bool
}

// Error is something outside the boundary.
type Error struct {
	// Reason is v1beta1.ReasonCrossNamespaceObject or
	// v1beta1.ReasonClusterScopedObject.
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var be *Error
	if errors.As(err, &be) {
		return be
	}
	return nil
}

// CheckNamespace checks a namespaced object, or a namespace an action reads,
// lists or deletes in: what names it for the message ("ConfigMap
// team-b/victim"). An empty ns is the Application's own.
func (b Boundary) CheckNamespace(what, ns string) error {
	if !b.Confined || ns == "" || ns == b.Namespace {
		return nil
	}
	return &Error{Reason: v1beta1.ReasonCrossNamespaceObject,
		Err: fmt.Errorf("%s in namespace %q: only the Application's namespace %q is allowed (--no-cross-namespace-objects)", what, ns, b.Namespace)}
}

// CheckClusterScoped checks a cluster-scoped object: allowed when not confined,
// or when the Application acts as a ServiceAccount, whose RBAC decides.
func (b Boundary) CheckClusterScoped(what string) error {
	if !b.Confined || b.Impersonating {
		return nil
	}
	return &Error{Reason: v1beta1.ReasonClusterScopedObject,
		Err: fmt.Errorf("cluster-scoped %s: only an Application acting as a ServiceAccount (annotation %s) may reach cluster-scoped objects, as far as its RBAC allows (--no-cross-namespace-objects)",
			what, v1beta1.AnnotationServiceAccountName)}
}

// CheckObject checks an object by its scope: ns is its namespace when
// namespaced.
func (b Boundary) CheckObject(what string, namespaced bool, ns string) error {
	if !namespaced {
		return b.CheckClusterScoped(what)
	}
	if ns == "" {
		ns = b.Namespace
	}
	return b.CheckNamespace(what, ns)
}
