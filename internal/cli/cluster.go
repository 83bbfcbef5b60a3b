package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/readmodel"
	"github.com/steward-oam/steward/internal/tracker"
)

// DefaultProbeTimeout bounds the connectivity checks of join and list.
const DefaultProbeTimeout = 5 * time.Second

// JoinOptions are the inputs of `steward cluster join`.
type JoinOptions struct {
	// KubeconfigPath is the kubeconfig of the cluster to join; its current
	// context is used.
	KubeconfigPath string
	// Name of the cluster; default the current context's cluster name.
	Name string
	// Labels of the cluster, which topology policies select by.
	Labels map[string]string
	// Alias is an optional display name.
	Alias string
	// Namespace of the cluster Secrets on the hub (default vela-system).
	Namespace string
	// Force replaces a cluster already registered under Name.
	Force bool
	// ProbeTimeout bounds the connectivity check (default 5s).
	ProbeTimeout time.Duration
}

// JoinResult says what Join registered.
type JoinResult struct {
	Cluster cluster.Cluster
	// Replaced is true when an existing registration was overwritten.
	Replaced bool
	// ProbeErr is why the cluster did not answer from here; the cluster is
	// registered anyway, since the controller may reach it from elsewhere.
	ProbeErr error
}

// Join registers the cluster of a kubeconfig's current context on the hub,
// as a Secret in KubeVela's format: X509Certificate when the kubeconfig's
// user has a client certificate, ServiceAccountToken when it has a token.
func Join(ctx context.Context, hub client.Client, o JoinOptions) (JoinResult, error) {
	kc, err := readKubeconfig(o.KubeconfigPath)
	if err != nil {
		return JoinResult{}, err
	}
	if o.Name == "" {
		o.Name = kc.Name
	}
	if err := checkJoin(o); err != nil {
		return JoinResult{}, err
	}
	ns := namespaceOr(o.Namespace)
	s := cluster.NewSecret(ns, o.Name, o.Labels, o.Alias, kc.Credentials)
	if _, err := cluster.CredentialsFromSecret(s); err != nil {
		return JoinResult{}, fmt.Errorf("kubeconfig %s: %w", o.KubeconfigPath, err)
	}
	replaced, err := writeClusterSecret(ctx, hub, s, o.Force)
	if err != nil {
		return JoinResult{}, err
	}
	c, _ := cluster.ClusterFromSecret(s)
	res := JoinResult{Cluster: c, Replaced: replaced}
	if cfg, err := kc.Credentials.RESTConfig(); err == nil {
		res.ProbeErr = cluster.ProbeConfig(ctx, cfg, probeTimeout(o.ProbeTimeout))
	}
	return res, nil
}

func checkJoin(o JoinOptions) error {
	if v1beta1.IsLocalCluster(o.Name) {
		return fmt.Errorf("the name %q is reserved for the hub cluster: pass another --name", v1beta1.ClusterLocal)
	}
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return fmt.Errorf("cluster name %q: %s", o.Name, strings.Join(errs, "; "))
	}
	for k, v := range o.Labels {
		if cluster.IsReservedLabel(k) {
			return fmt.Errorf("label %q: the cluster.core.oam.dev prefix is reserved", k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("label %s=%q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	return nil
}

// writeClusterSecret creates the Secret (and its namespace), or replaces an
// existing registration when force is set. It never touches a Secret that
// is not a cluster Secret.
func writeClusterSecret(ctx context.Context, hub client.Client, s *corev1.Secret, force bool) (bool, error) {
	existing := &corev1.Secret{}
	err := hub.Get(ctx, client.ObjectKeyFromObject(s), existing)
	switch {
	case apierrors.IsNotFound(err):
		if err := ensureNamespace(ctx, hub, s.Namespace); err != nil {
			return false, err
		}
		if err := hub.Create(ctx, s); err != nil {
			return false, fmt.Errorf("creating secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading secret %s/%s: %w", s.Namespace, s.Name, err)
	case !cluster.IsClusterSecret(existing):
		return false, fmt.Errorf("secret %s/%s exists and is not a cluster secret: pass another --name", s.Namespace, s.Name)
	case !force:
		return false, fmt.Errorf("cluster %q is already registered (endpoint %s): pass --force to replace it",
			s.Name, existing.Data["endpoint"])
	}
	existing.Labels, existing.Annotations, existing.Data = s.Labels, s.Annotations, s.Data
	if err := hub.Update(ctx, existing); err != nil {
		return false, fmt.Errorf("replacing secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return true, nil
}

func ensureNamespace(ctx context.Context, hub client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// ListOptions are the inputs of `steward cluster list`.
type ListOptions struct {
	// Namespace of the cluster Secrets (default vela-system).
	Namespace string
	// ProbeTimeout bounds each cluster's connectivity check (default 5s).
	ProbeTimeout time.Duration
	// Out receives the table.
	Out io.Writer
}

// List prints the registered clusters, local first, with whether each
// answers from here. Clusters are probed concurrently.
func List(ctx context.Context, hubConfig *rest.Config, hub client.Client, o ListOptions) error {
	m, err := cluster.NewManager(hubConfig, hub, cluster.ManagerOptions{
		Namespace:    namespaceOr(o.Namespace),
		ProbeTimeout: probeTimeout(o.ProbeTimeout),
		Secrets:      hub,
		Registerer:   prometheus.NewRegistry(),
	})
	if err != nil {
		return err
	}
	rows, err := readmodel.Clusters(ctx, m)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tENDPOINT\tCREDENTIAL\tLABELS\tCONNECTED")
	for _, c := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", displayName(c.Cluster), orDash(c.Endpoint), c.CredentialType, formatLabels(c.Labels), connected(c))
	}
	return w.Flush()
}

func displayName(c cluster.Cluster) string {
	if c.Alias != "" {
		return fmt.Sprintf("%s (%s)", c.Name, c.Alias)
	}
	return c.Name
}

func connected(c readmodel.ClusterRow) string {
	switch {
	case c.Connected:
		return "yes"
	case !c.Probed:
		return "unknown"
	}
	return "no: " + c.Error
}

func formatLabels(labels map[string]string) string {
	if len(labels) == 0 {
		return "-"
	}
	out := make([]string, 0, len(labels))
	for k, v := range labels {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// DetachOptions are the inputs of `steward cluster detach`.
type DetachOptions struct {
	Name string
	// Namespace of the cluster Secrets (default vela-system).
	Namespace string
	// Force detaches although applications still have resources recorded
	// on the cluster; those resources are then left behind.
	Force bool
}

// Detach removes a cluster's registration. It refuses while any
// ResourceTracker entry still names the cluster, listing the applications
// (namespace/name), unless Force is set; it returns those applications.
// Nothing on the cluster itself is touched.
func Detach(ctx context.Context, hub client.Client, o DetachOptions) ([]string, error) {
	if v1beta1.IsLocalCluster(o.Name) {
		return nil, fmt.Errorf("%q is the hub cluster and cannot be detached", v1beta1.ClusterLocal)
	}
	reg := cluster.Registry{Reader: hub, Namespace: namespaceOr(o.Namespace)}
	s, err := reg.Secret(ctx, o.Name)
	if err != nil {
		return nil, err
	}
	apps, err := AppsOnCluster(ctx, hub, o.Name)
	if err != nil {
		return nil, err
	}
	if len(apps) > 0 && !o.Force {
		return apps, fmt.Errorf("cluster %q still holds resources of %d application(s): %s; "+
			"remove the cluster from their topology and let them be garbage-collected, or pass --force to leave the resources behind",
			o.Name, len(apps), strings.Join(apps, ", "))
	}
	if err := hub.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) {
		return apps, fmt.Errorf("deleting secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return apps, nil
}

// AppsOnCluster returns the applications (namespace/name, sorted) whose
// resource trackers record at least one object on the cluster.
func AppsOnCluster(ctx context.Context, hub client.Client, name string) ([]string, error) {
	var list v1beta1.ResourceTrackerList
	if err := hub.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing resource trackers: %w", err)
	}
	set := map[string]bool{}
	for i := range list.Items {
		rt := &list.Items[i]
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Cluster == name {
				set[rt.Labels[v1beta1.LabelAppNamespace]+"/"+rt.Labels[v1beta1.LabelAppName]] = true
				break
			}
		}
	}
	apps := make([]string, 0, len(set))
	for a := range set {
		apps = append(apps, a)
	}
	sort.Strings(apps)
	return apps, nil
}

func namespaceOr(ns string) string {
	if ns == "" {
		return cluster.DefaultNamespace
	}
	return ns
}

func probeTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultProbeTimeout
	}
	return d
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
