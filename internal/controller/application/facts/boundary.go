package facts

import (
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/tracker"
)

// CheckBoundary enforces --no-cross-namespace-objects on the entries of a
// new version, before anything is recorded: a namespaced object must be in
// the Application's namespace, and a cluster-scoped one needs an
// Application that acts as a ServiceAccount, whose RBAC then decides (the
// API server refuses what the ServiceAccount may not create). Acting as
// Steward itself, an Application could otherwise reach every namespace
// and the whole cluster with Steward's permissions.
func CheckBoundary(app *v1beta1.Application, id cluster.Identity, entries []v1beta1.ManagedResource) error {
	for _, e := range entries {
		if err := OutsideBoundary(app, id, e); err != nil {
			by := DescribeSource(e.Component, e.Trait, e.Step)
			if !v1beta1.IsLocalCluster(e.Cluster) {
				by += fmt.Sprintf(" in cluster %q", e.Cluster)
			}
			return &ReasonError{Reason: ReasonOf(err, ""), Err: fmt.Errorf("%s renders %w", by, err)}
		}
	}
	return nil
}

// OutsideBoundary says why one entry is outside what
// --no-cross-namespace-objects allows the Application, or nil.
func OutsideBoundary(app *v1beta1.Application, id cluster.Identity, e v1beta1.ManagedResource) error {
	b := BoundaryOf(app, id, true)
	return b.CheckObject(tracker.KeyOf(e).String(), e.Namespace != "", e.Namespace)
}

// BoundaryOf is what an Application acting as id may reach: the boundary
// rendered objects, provider actions and chart sources are all held to.
func BoundaryOf(app *v1beta1.Application, id cluster.Identity, confined bool) boundary.Boundary {
	return boundary.Boundary{Namespace: app.Namespace, Confined: confined, Impersonating: !id.IsZero()}
}

// DescribeSource names where an object comes from, for messages.
func DescribeSource(component, trait, step string) string {
	if component == "" && step != "" {
		return fmt.Sprintf("workflow step %q", step)
	}
	if trait == "" {
		return fmt.Sprintf("component %q", component)
	}
	return fmt.Sprintf("component %q trait %q", component, trait)
}
