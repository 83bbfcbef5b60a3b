package dashboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/readmodel"
)

// RunOptions are the inputs of `steward dashboard`.
type RunOptions struct {
	// Address to listen on; a port of 0 picks a free one.
	Address string
	// AllowRemote lets Address be other than loopback.
	AllowRemote bool
	// Namespace is the kubeconfig's namespace; AllNamespaces asks for every
	// namespace (falling back to Namespace when the identity may not list
	// Applications cluster-wide).
	Namespace     string
	AllNamespaces bool
	// ClusterNamespace holds the cluster Secrets (default vela-system).
	ClusterNamespace string
	// Identity names the kubeconfig user, shown on the pages.
	Identity string
	// Ready receives the URL once the dashboard serves; may be nil.
	Ready func(url string)
	Log   logr.Logger
}

// Run serves the dashboard with the identity of cfg until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, hub client.Client, o RunOptions) error {
	l, hosts, err := Listen(o.Address, o.AllowRemote)
	if err != nil {
		return err
	}
	defer l.Close()
	namespace := o.Namespace
	if o.AllNamespaces {
		namespace, err = visibleNamespace(ctx, hub, o.Namespace)
		if err != nil {
			return err
		}
		if namespace != "" {
			o.Log.Info("this identity may not list Applications in every namespace; the dashboard shows one", "namespace", namespace)
		}
	}
	apps, err := NewAppCache(cfg, hub.Scheme(), namespace)
	if err != nil {
		return err
	}
	clusters, err := readmodel.NewClusterManager(cfg, hub, o.ClusterNamespace)
	if err != nil {
		return err
	}
	s, err := New(Options{Apps: apps, Hub: hub, Clusters: clusters, Namespace: namespace, Identity: o.Identity, Log: o.Log})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cacheErr := make(chan error, 1)
	go func() { cacheErr <- apps.Start(ctx) }()
	if err := s.Start(ctx); err != nil {
		return err
	}
	syncCtx, syncCancel := context.WithTimeout(ctx, 2*time.Minute)
	synced := apps.WaitForCacheSync(syncCtx)
	syncCancel()
	if !synced {
		select {
		case err := <-cacheErr:
			return fmt.Errorf("reading applications: %w", err)
		default:
		}
		return errors.New("reading applications: the list did not arrive within 2 minutes")
	}
	h := guard(s, hosts, o.Log, "this identity")
	url := "http://" + l.Addr().String() + "/"
	o.Log.Info("dashboard serving", "url", url, "namespace", orAll(namespace))
	if o.Ready != nil {
		o.Ready(url)
	}
	return Serve(ctx, l, h)
}

// visibleNamespace is "" when the identity may list Applications in every
// namespace, else fallback.
func visibleNamespace(ctx context.Context, hub client.Client, fallback string) (string, error) {
	var list v1beta1.ApplicationList
	err := hub.List(ctx, &list, client.Limit(1))
	switch {
	case err == nil:
		return "", nil
	case apierrors.IsForbidden(err):
		return fallback, nil
	}
	return "", fmt.Errorf("listing applications: %w", err)
}

// NewAppCache returns an informer cache of Applications (in namespace, or
// all when empty) that keeps only what the list page shows: names,
// creation time, component names, phase, health per component and
// cluster, the Ready condition. Ten thousand Applications then take a few megabytes.
func NewAppCache(cfg *rest.Config, scheme *runtime.Scheme, namespace string) (cache.Cache, error) {
	opts := cache.Options{
		Scheme: scheme,
		ByObject: map[client.Object]cache.ByObject{
			&v1beta1.Application{}: {Transform: listFields},
		},
	}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	return cache.New(cfg, opts)
}

// listFields trims an Application to the list page's fields.
func listFields(obj any) (any, error) {
	a, ok := obj.(*v1beta1.Application)
	if !ok {
		return obj, nil
	}
	out := &v1beta1.Application{
		TypeMeta: a.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace, UID: a.UID, ResourceVersion: a.ResourceVersion,
			CreationTimestamp: a.CreationTimestamp, DeletionTimestamp: a.DeletionTimestamp},
	}
	out.Spec.Components = make([]v1beta1.ApplicationComponent, len(a.Spec.Components))
	for i, c := range a.Spec.Components {
		out.Spec.Components[i] = v1beta1.ApplicationComponent{Name: c.Name, Type: c.Type}
	}
	out.Status.Phase = a.Status.Phase
	if c := v1beta1.FindCondition(a.Status.Conditions, v1beta1.ConditionReady); c != nil {
		out.Status.Conditions = []v1beta1.Condition{{Type: c.Type, Status: c.Status, Reason: c.Reason}}
	}
	out.Status.Services = make([]v1beta1.ApplicationComponentStatus, len(a.Status.Services))
	for i, s := range a.Status.Services {
		out.Status.Services[i] = v1beta1.ApplicationComponentStatus{Name: s.Name, Cluster: s.Cluster, Healthy: s.Healthy}
	}
	return out, nil
}

func orAll(ns string) string {
	if ns == "" {
		return "all"
	}
	return ns
}

// AddToManager serves the dashboard inside the controller's manager at
// addr with the controller's identity: the list from the manager's
// Application cache (with sharding on, this replica's shard), an
// Application's detail straight from the API server, target clusters
// through cluster clients of its own.
func AddToManager(mgr manager.Manager, cfg *rest.Config, addr string, allowRemote bool, clusterSecretNamespace string) error {
	log := mgr.GetLogger().WithName("dashboard")
	hub, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("creating the dashboard's client: %w", err)
	}
	clusters, err := readmodel.NewClusterManager(cfg, hub, clusterSecretNamespace)
	if err != nil {
		return err
	}
	s, err := New(Options{Apps: mgr.GetCache(), Hub: hub, Clusters: clusters, Identity: "the Steward controller", Log: log})
	if err != nil {
		return err
	}
	return mgr.Add(Runnable{Server: s, Address: addr, AllowRemote: allowRemote, Log: log})
}

// Runnable serves the dashboard inside the controller (--dashboard-addr)
// with the controller's identity and its Application cache.
type Runnable struct {
	Server  *Server
	Address string
	// AllowRemote lets Address be other than loopback (in a Pod, reached
	// through a Service or port-forward).
	AllowRemote bool
	Log         logr.Logger
}

// Start serves until ctx ends.
func (r Runnable) Start(ctx context.Context) error {
	l, hosts, err := Listen(r.Address, r.AllowRemote)
	if err != nil {
		return err
	}
	if err := r.Server.Start(ctx); err != nil {
		_ = l.Close()
		return err
	}
	h := guard(r.Server, hosts, r.Log, "the controller")
	r.Log.Info("dashboard serving", "address", l.Addr().String())
	return Serve(ctx, l, h)
}

// NeedLeaderElection is false: every replica can serve it.
func (Runnable) NeedLeaderElection() bool { return false }
