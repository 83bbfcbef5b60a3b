package cluster

import (
	"context"
	"fmt"
	"sort"

	"github.com/steward-oam/steward/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Registry lists the clusters registered on the hub: one Secret per
// cluster in Namespace, plus the implicit local cluster.
type Registry struct {
	// Reader reads Secrets. Give it a client that reads straight from the
	// API server: an informer would cache every Secret of the hub.
	Reader client.Reader
	// Namespace holds the cluster Secrets; empty means DefaultNamespace.
	Namespace string
}

func (r Registry) namespace() string {
	if r.Namespace == "" {
		return DefaultNamespace
	}
	return r.Namespace
}

// List returns local first, then the registered clusters by name. A
// Secret that cannot be read as a cluster (say, one named "local") is left
// out.
func (r Registry) List(ctx context.Context) ([]Cluster, error) {
	secrets, err := r.secrets(ctx)
	if err != nil {
		return nil, err
	}
	out := []Cluster{LocalCluster()}
	for i := range secrets {
		c, err := ClusterFromSecret(&secrets[i])
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	sort.SliceStable(out[1:], func(i, j int) bool { return out[1+i].Name < out[1+j].Name })
	return out, nil
}

// Get returns one cluster; the error wraps ErrNotRegistered when there is
// no such cluster.
func (r Registry) Get(ctx context.Context, name string) (Cluster, error) {
	if v1beta1.IsLocalCluster(name) {
		return LocalCluster(), nil
	}
	s, err := r.Secret(ctx, name)
	if err != nil {
		return Cluster{}, err
	}
	return ClusterFromSecret(s)
}

// Secret returns the Secret of a cluster; the error wraps ErrNotRegistered
// when it is missing or is not a cluster Secret.
func (r Registry) Secret(ctx context.Context, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: r.namespace(), Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("cluster %q: no secret %s/%s: %w", name, r.namespace(), name, ErrNotRegistered)
	}
	if err != nil {
		return nil, fmt.Errorf("reading secret of cluster %q: %w", name, err)
	}
	if !IsClusterSecret(s) {
		return nil, fmt.Errorf("cluster %q: secret %s/%s has no %s label: %w", name, r.namespace(), name, LabelCredentialType, ErrNotRegistered)
	}
	return s, nil
}

func (r Registry) secrets(ctx context.Context) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.Reader.List(ctx, &list, client.InNamespace(r.namespace()), client.HasLabels{LabelCredentialType}); err != nil {
		return nil, fmt.Errorf("listing cluster secrets in %s: %w", r.namespace(), err)
	}
	return list.Items, nil
}
