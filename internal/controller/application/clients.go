package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/tracker"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterShare collects what one cluster's share of a phase did. The
// shares of different clusters run concurrently, each with its own, and
// are merged into the scope afterwards in cluster order.
type clusterShare struct {
	keep     keepReport
	gc       gcReport
	drop     map[tracker.Key]bool
	retryErr error
}

func newClusterShare() *clusterShare { return &clusterShare{drop: map[tracker.Key]bool{}} }

func (p *clusterShare) setRetry(err error) {
	if p.retryErr == nil {
		p.retryErr = err
	}
}

// merge adds a cluster's share to the scope.
func (s *scope) merge(p *clusterShare) {
	s.keep.applied += p.keep.applied
	s.keep.gated += p.keep.gated
	s.keep.changes = append(s.keep.changes, p.keep.changes...)
	s.keep.failures = append(s.keep.failures, p.keep.failures...)
	s.keep.drifted = append(s.keep.drifted, p.keep.drifted...)
	s.keep.conflicts = append(s.keep.conflicts, p.keep.conflicts...)
	s.keep.unread = append(s.keep.unread, p.keep.unread...)
	for _, w := range p.keep.waiting {
		s.keep.waiting = appendOnce(s.keep.waiting, w)
	}
	for _, w := range p.keep.unhealthyDeps {
		s.keep.unhealthyDeps = appendOnce(s.keep.unhealthyDeps, w)
	}
	for k, v := range p.keep.live {
		s.keep.remember(k, v)
	}
	s.gc.deleted = append(s.gc.deleted, p.gc.deleted...)
	s.gc.pending = append(s.gc.pending, p.gc.pending...)
	s.gc.failures = append(s.gc.failures, p.gc.failures...)
	s.gc.leftBehind = append(s.gc.leftBehind, p.gc.leftBehind...)
	if p.retryErr != nil {
		s.setRetry(p.retryErr)
	}
}

// clusterGroup is the entries of one cluster, in recorded order.
type clusterGroup struct {
	cluster string
	entries []v1beta1.ManagedResource
}

// byCluster groups entries by cluster, clusters in order of first
// appearance.
func byCluster(entries []v1beta1.ManagedResource) []clusterGroup {
	idx := map[string]int{}
	var out []clusterGroup
	for _, e := range entries {
		name := v1beta1.ClusterKey(e.Cluster)
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, clusterGroup{cluster: name})
		}
		out[i].entries = append(out[i].entries, e)
	}
	return out
}

// eachCluster runs fn for every group, at most ClusterConcurrency at a
// time, so that a slow or unreachable cluster does not hold up the others.
// It returns one pass per group, in group order.
func (r *Reconciler) eachCluster(groups []clusterGroup, fn func(g clusterGroup, p *clusterShare)) []*clusterShare {
	return r.eachClusterAtMost(0, groups, fn)
}

// eachClusterAtMost is eachCluster with at most limit groups at a time
// when limit is positive and below ClusterConcurrency: a deploy step's
// parallelism.
func (r *Reconciler) eachClusterAtMost(limit int, groups []clusterGroup, fn func(g clusterGroup, p *clusterShare)) []*clusterShare {
	passes := make([]*clusterShare, len(groups))
	for i := range groups {
		passes[i] = newClusterShare()
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

// clusterFailure records that a whole cluster could not be reached.
func clusterFailure(name string, err error) objectFailure {
	if name == "" {
		name = v1beta1.ClusterLocal
	}
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("cluster %q", name)) {
		err = fmt.Errorf("cluster %q: %w", name, err)
	}
	return objectFailure{Key: tracker.Key{Cluster: name}, Reason: v1beta1.ReasonClusterUnreachable, Err: err}
}

// isUnreachable reports errors that mean a cluster cannot be reached or is
// no longer registered, as opposed to refusals a user must fix.
func isUnreachable(err error) bool {
	return cluster.IsUnreachable(err) || errors.Is(err, cluster.ErrNotRegistered)
}

// getClient returns the client of a group's cluster, acting as the
// Application's identity; an error says the cluster cannot be used now
// (not registered, or down at its last probe).
func (r *Reconciler) getClient(ctx context.Context, s *scope, g clusterGroup) (client.Client, error) {
	c, err := s.clients.GetClient(ctx, g.cluster)
	if err == nil {
		err = cluster.KnownDown(r.Clusters, g.cluster)
	}
	return c, err
}

// detached reports whether err says the cluster is no longer registered:
// its objects were left behind on purpose (steward cluster detach --force).
func detached(err error) bool { return errors.Is(err, cluster.ErrNotRegistered) }

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
func (r *Reconciler) bindIdentity(s *scope) {
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
func (r *Reconciler) confirmGone(ctx context.Context, s *scope, e v1beta1.ManagedResource, refused error) bool {
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
func (r *Reconciler) boundary(s *scope) boundary.Boundary {
	return boundaryOf(s.app, s.identity, r.Options.NoCrossNamespaceObjects)
}
