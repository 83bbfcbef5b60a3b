package application

import (
	"context"
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/tracker"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// eachCluster runs fn for every group, at most ClusterConcurrency at a
// time, so that a slow or unreachable cluster does not hold up the others.
// It returns one pass per group, in group order.
func (r *Reconciler) eachCluster(groups []facts.ClusterGroup, fn func(g facts.ClusterGroup, p *facts.ClusterShare)) []*facts.ClusterShare {
	return r.eachClusterAtMost(0, groups, fn)
}

// eachClusterAtMost is eachCluster with at most limit groups at a time
// when limit is positive and below ClusterConcurrency: a deploy step's
// parallelism.
func (r *Reconciler) eachClusterAtMost(limit int, groups []facts.ClusterGroup, fn func(g facts.ClusterGroup, p *facts.ClusterShare)) []*facts.ClusterShare {
	passes := make([]*facts.ClusterShare, len(groups))
	for i := range groups {
		passes[i] = facts.NewClusterShare()
	}
	if len(groups) == 1 {
		fn(groups[0], passes[0])
		return passes
	}
	var eg errgroup.Group
	n := max(r.Options.ClusterConcurrency, 1)
	if limit > 0 && limit < n {
		n = limit
	}
	eg.SetLimit(n)
	for i, g := range groups {
		eg.Go(func() error {
			fn(g, passes[i])
			return nil
		})
	}
	_ = eg.Wait() // fn reports into its pass, never as an error
	return passes
}

// getClient returns the client of a group's cluster, acting as the
// Application's identity; an error says the cluster cannot be used now
// (not registered, or down at its last probe).
func (r *Reconciler) getClient(ctx context.Context, s *facts.Pass, g facts.ClusterGroup) (client.Client, error) {
	c, err := s.Clients.GetClient(ctx, g.Cluster)
	if err == nil {
		err = cluster.KnownDown(r.Clusters, g.Cluster)
	}
	return c, err
}

// impersonator is implemented by cluster clients that can act as a
// ServiceAccount (cluster.Manager).
type impersonator interface {
	As(id cluster.Identity) cluster.Clients
}

// identityOf returns the ServiceAccount whose permissions an Application
// acts with: its app.oam.dev/service-account-name annotation, else
// --default-service-account, in the Application's namespace. The zero
// identity is Steward's own.
func (r *Reconciler) identityOf(app *v1beta1.Application) cluster.Identity {
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
func (r *Reconciler) bindIdentity(s *facts.Pass) {
	s.Identity = r.identityOf(s.App)
	if err := s.Identity.Validate(); err != nil {
		s.IdentityErr = &facts.ReasonError{Reason: v1beta1.ReasonInvalidServiceAccount,
			Err: fmt.Errorf("annotation %s: %w", v1beta1.AnnotationServiceAccountName, err)}
		return
	}
	if s.Identity.IsZero() {
		s.Clients = r.Clusters
		return
	}
	imp, ok := r.Clusters.(impersonator)
	if !ok {
		s.IdentityErr = &facts.ReasonError{Reason: v1beta1.ReasonInvalidServiceAccount,
			Err: fmt.Errorf("this controller's cluster clients cannot impersonate %s", s.Identity)}
		return
	}
	s.Clients = imp.As(s.Identity)
}

// confirmGone handles a delete the Application's identity was refused
// (typically its read): the object may never have existed, because
// creating it was refused too, and then the entry would be retried
// forever. Steward's own identity reads the object, and only reads it; the
// entry can be dropped when it does not exist. Anything else leaves the
// entry, and the deletion is retried.
func (r *Reconciler) confirmGone(ctx context.Context, s *facts.Pass, e v1beta1.ManagedResource, refused error) bool {
	if s.Identity.IsZero() || !apierrors.IsForbidden(refused) {
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
		"object", tracker.KeyOf(e).String(), "identity", s.Identity.String())
	return true
}

// boundary is the pass's boundary (--no-cross-namespace-objects).
func (r *Reconciler) boundary(s *facts.Pass) boundary.Boundary {
	return facts.BoundaryOf(s.App, s.Identity, r.Options.NoCrossNamespaceObjects)
}
