package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/tracker"
)

// impersonator is implemented by cluster clients that can act as a
// ServiceAccount (cluster.Manager).
type impersonator interface {
	As(id cluster.Identity) cluster.Clients
}

// identityOf returns the ServiceAccount whose permissions an Application
// acts with: its app.oam.dev/service-account-name annotation, else
// --default-service-account, in the Application's namespace. The zero
// identity is Steward's own.
func (r *ApplicationReconciler) identityOf(app *v1beta1.Application) cluster.Identity {
	name := app.Annotations[v1beta1.AnnotationServiceAccountName]
	if name == "" {
		name = r.Options.DefaultServiceAccount
	}
	return cluster.Identity{Namespace: app.Namespace, Name: name}
}

// bindIdentity gives a pass the clients of its Application's identity.
// Every request for the Application's objects goes through them; trackers,
// definitions and the Application itself are read and written with
// Steward's own identity. An identity that cannot be impersonated leaves
// the pass without clients: identityErr says why, and nothing is applied or
// deleted.
func (r *ApplicationReconciler) bindIdentity(s *scope) {
	s.identity = r.identityOf(s.app)
	if err := s.identity.Validate(); err != nil {
		s.identityErr = &reasonError{reason: v1beta1.ReasonInvalidServiceAccount,
			err: fmt.Errorf("annotation %s: %w", v1beta1.AnnotationServiceAccountName, err)}
		return
	}
	if s.identity.IsZero() {
		s.clients = r.Clusters
		return
	}
	imp, ok := r.Clusters.(impersonator)
	if !ok {
		s.identityErr = &reasonError{reason: v1beta1.ReasonInvalidServiceAccount,
			err: fmt.Errorf("this controller's cluster clients cannot impersonate %s", s.identity)}
		return
	}
	s.clients = imp.As(s.identity)
}

// confirmGone handles a delete the Application's identity was refused
// (typically its read): the object may never have existed, because
// creating it was refused too, and then the entry would be retried
// forever. Steward's own identity reads the object, and only reads it; the
// entry can be dropped when it does not exist. Anything else leaves the
// entry, and the deletion is retried.
func (r *ApplicationReconciler) confirmGone(ctx context.Context, s *scope, e v1beta1.ManagedResource, refused error) bool {
	if s.identity.IsZero() || !apierrors.IsForbidden(refused) {
		return false
	}
	own, err := r.Clusters.GetClient(ctx, e.Cluster)
	if err != nil {
		return false
	}
	ref := tracker.Ref(e)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(ref.GroupVersionKind())
	if err := own.Get(ctx, client.ObjectKeyFromObject(ref), live); !apierrors.IsNotFound(err) {
		return false
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Dropped entry: the object does not exist, though the application's identity may not read it",
		"object", tracker.KeyOf(e).String(), "identity", s.identity.String())
	return true
}

// checkBoundary enforces --no-cross-namespace-objects on the entries of a
// new version, before anything is recorded: a namespaced object must be in
// the Application's namespace, and a cluster-scoped one needs an
// Application that acts as a ServiceAccount, whose RBAC then decides (the
// API server refuses what the ServiceAccount may not create). Acting as
// Steward itself, an Application could otherwise reach every namespace
// and the whole cluster with Steward's permissions.
func checkBoundary(app *v1beta1.Application, id cluster.Identity, entries []v1beta1.ManagedResource) error {
	for _, e := range entries {
		if err := outsideBoundary(app, id, e); err != nil {
			by := describeSource(e.Component, e.Trait, e.Step)
			if !v1beta1.IsLocalCluster(e.Cluster) {
				by += fmt.Sprintf(" in cluster %q", e.Cluster)
			}
			return &reasonError{reason: reasonOf(err, ""), err: fmt.Errorf("%s renders %w", by, err)}
		}
	}
	return nil
}

// outsideBoundary says why one entry is outside what
// --no-cross-namespace-objects allows the Application, or nil.
func outsideBoundary(app *v1beta1.Application, id cluster.Identity, e v1beta1.ManagedResource) error {
	b := boundaryOf(app, id, true)
	return b.CheckObject(tracker.KeyOf(e).String(), e.Namespace != "", e.Namespace)
}

// boundaryOf is what an Application acting as id may reach: the boundary
// rendered objects, provider actions and chart sources are all held to.
func boundaryOf(app *v1beta1.Application, id cluster.Identity, confined bool) boundary.Boundary {
	return boundary.Boundary{Namespace: app.Namespace, Confined: confined, Impersonating: !id.IsZero()}
}

// boundary is the pass's boundary (--no-cross-namespace-objects).
func (r *ApplicationReconciler) boundary(s *scope) boundary.Boundary {
	return boundaryOf(s.app, s.identity, r.Options.NoCrossNamespaceObjects)
}
