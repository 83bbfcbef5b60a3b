package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
)

// ObjectState is the live state of one tracked object, compared with its
// recorded manifest the way the controller's StateKeep compares them.
type ObjectState string

// Object states, as `steward tree` and `steward status` show them.
const (
	// StatePresent: the object exists and the controller would not patch
	// it (or, for a read-only or metadata-only entry, it exists).
	StatePresent ObjectState = "present"
	// StateMissing: the object does not exist; StateKeep would create it.
	StateMissing ObjectState = "missing"
	// StateDrifted: the object exists but differs from its manifest;
	// StateKeep would patch the fields listed.
	StateDrifted ObjectState = "drifted"
	// StateConflict: the object exists and another Application, or none,
	// owns it; the controller leaves it alone.
	StateConflict ObjectState = "conflict"
	// StateDeleting: the entry is marked deleted (garbage collection) and
	// the object still exists.
	StateDeleting ObjectState = "deleting"
	// StateGone: the entry is marked deleted and the object is gone; the
	// next pass drops the entry.
	StateGone ObjectState = "gone"
	// StateUnknown: the object could not be read (cluster unreachable,
	// kind not served, access denied).
	StateUnknown ObjectState = "unknown"
)

// TrackedObject is one object a tracker records, with its live state.
type TrackedObject struct {
	Cluster    string `json:"cluster"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Component  string `json:"component,omitempty"`
	Trait      string `json:"trait,omitempty"`
	// Tracker is the resource tracker recording the object.
	Tracker string      `json:"tracker"`
	State   ObjectState `json:"state"`
	// Fields are the fields StateKeep would patch, for a drifted object.
	Fields []string `json:"fields,omitempty"`
	// Message says why the state is conflict or unknown.
	Message string `json:"message,omitempty"`
	// MetadataOnly is true for an entry without a manifest: an object no
	// longer rendered that stays until the Application is deleted. Only
	// its existence is checked.
	MetadataOnly bool `json:"metadataOnly,omitempty"`
	// ReadOnly is true for an object under a read-only policy: only its
	// existence is checked.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// ClusterObjects are the tracked objects of one cluster.
type ClusterObjects struct {
	Cluster string `json:"cluster"`
	// Error says why the cluster could not be read; its objects are then
	// unknown.
	Error   string          `json:"error,omitempty"`
	Objects []TrackedObject `json:"objects"`
}

// AppTree is every object the kept trackers of an Application record (the
// current version's and root), per cluster, with its live state.
type AppTree struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Version is the publishVersion or generation of the current tracker.
	Version string `json:"version"`
	// Trackers are the trackers read: the current version's, then root.
	Trackers []string         `json:"trackers"`
	Clusters []ClusterObjects `json:"clusters"`
}

// TreeOptions are the inputs of `steward tree`.
type TreeOptions struct {
	// Namespace and Name of the Application.
	Namespace string
	Name      string
	// ClusterNamespace holds the cluster Secrets (default vela-system).
	ClusterNamespace string
	// Output is empty (the tree), yaml or json.
	Output string
	Out    io.Writer
}

// Tree prints every object the Application's trackers record, per
// cluster, decoded whatever their compression, with its live state.
func Tree(ctx context.Context, hubConfig *rest.Config, hub client.Client, o TreeOptions) error {
	if err := checkStructured(o.Output); err != nil {
		return err
	}
	rec, err := readApp(ctx, hub, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	clients, err := NewClusterManager(hubConfig, hub, o.ClusterNamespace)
	if err != nil {
		return err
	}
	t, err := liveTree(ctx, clients, rec)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printStructured(o.Out, o.Output, t)
	}
	return printTree(o.Out, t)
}

// Clients reaches the clusters an Application is delivered to; a
// *cluster.Manager is one.
type Clients interface {
	GetClient(ctx context.Context, cluster string) (client.Client, error)
}

// NewClusterManager reaches target clusters the way the controller does:
// through a cluster.Manager over the cluster Secrets on the hub. Its
// metrics go to a registry of its own.
func NewClusterManager(hubConfig *rest.Config, hub client.Client, namespace string) (*cluster.Manager, error) {
	return cluster.NewManager(hubConfig, hub, cluster.ManagerOptions{
		Namespace:  namespaceOr(namespace),
		Secrets:    hub,
		Registerer: prometheus.NewRegistry(),
		UserAgent:  "steward-cli",
	})
}

// appRecord is an Application and its trackers, split as the controller
// splits them.
type appRecord struct {
	app      *v1beta1.Application
	trackers []v1beta1.ResourceTracker
	// current is the versioned tracker being kept: the one of the version
	// the Application asks for (publishVersion, else generation) when it
	// exists, else the newest of this Application (see the controller's
	// loadTrackers).
	current *v1beta1.ResourceTracker
	root    *v1beta1.ResourceTracker
}

// readApp reads an Application and its trackers.
func readApp(ctx context.Context, hub client.Client, namespace, name string) (*appRecord, error) {
	app := &v1beta1.Application{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, app); err != nil {
		return nil, readError(namespace, name, err)
	}
	store := tracker.Store{Client: hub}
	all, err := store.List(ctx, tracker.RefOf(app))
	if err != nil {
		return nil, err
	}
	rec := &appRecord{app: app, trackers: all}
	current := tracker.Current(all, app)
	for i := range all {
		rt := &all[i]
		switch {
		case rt.Spec.Type == v1beta1.ResourceTrackerTypeRoot:
			rec.root = rt
		case i == current:
			rec.current = rt
		}
	}
	return rec, nil
}

// keptEntry is an entry of a kept tracker.
type keptEntry struct {
	v1beta1.ManagedResource
	tracker string
}

// kept returns the entries of the current tracker, then root's, decoded.
func (r *appRecord) kept() ([]keptEntry, error) {
	var out []keptEntry
	for _, rt := range []*v1beta1.ResourceTracker{r.current, r.root} {
		if rt == nil {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			out = append(out, keptEntry{ManagedResource: e, tracker: rt.Name})
		}
	}
	return out, nil
}

// version names the kept version: the current tracker's publishVersion,
// else its generation.
func (r *appRecord) version() string {
	if r.current == nil {
		return "-"
	}
	return trackerVersion(r.current)
}

// liveTree reads the live state of every object the kept trackers of rec
// record, cluster by cluster (local first). A cluster that cannot be
// reached is reported once and its objects are unknown.
func liveTree(ctx context.Context, clients Clients, rec *appRecord) (*AppTree, error) {
	entries, err := rec.kept()
	if err != nil {
		return nil, err
	}
	rules, err := policy.Parse(rec.app)
	if err != nil {
		// The controller touches nothing while the policies are invalid;
		// existence is all that can be told.
		rules = &policy.Rules{}
	}
	t := &AppTree{Name: rec.app.Name, Namespace: rec.app.Namespace, Version: rec.version()}
	for _, rt := range []*v1beta1.ResourceTracker{rec.current, rec.root} {
		if rt != nil {
			t.Trackers = append(t.Trackers, rt.Name)
		}
	}
	byCluster := map[string][]keptEntry{}
	var names []string
	for _, e := range entries {
		name := e.Cluster
		name = v1beta1.ClusterDisplay(name)
		if _, ok := byCluster[name]; !ok {
			names = append(names, name)
		}
		byCluster[name] = append(byCluster[name], e)
	}
	sort.Slice(names, func(i, j int) bool { return clusterLess(names[i], names[j]) })
	c := checker{
		applier: apply.Applier{Owner: apply.Owner{Name: rec.app.Name, Namespace: rec.app.Namespace}, Shard: rec.app.Labels[v1beta1.LabelScheduledShardID]},
		rules:   rules,
		types:   map[string]string{},
	}
	for _, comp := range rec.app.Spec.Components {
		c.types[comp.Name] = comp.Type
	}
	for _, name := range names {
		t.Clusters = append(t.Clusters, c.cluster(ctx, clients, name, byCluster[name]))
	}
	return t, nil
}

// checker compares recorded objects with live ones for one Application.
type checker struct {
	applier apply.Applier
	rules   *policy.Rules
	types   map[string]string
}

// cluster checks the entries of one cluster; after the first error that
// says the cluster is unreachable the rest are unknown without trying.
func (c checker) cluster(ctx context.Context, clients Clients, name string, entries []keptEntry) ClusterObjects {
	out := ClusterObjects{Cluster: name}
	cl, err := clients.GetClient(ctx, name)
	for _, e := range entries {
		obj := TrackedObject{Cluster: name, APIVersion: e.APIVersion, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name,
			Component: e.Component, Trait: e.Trait, Tracker: e.tracker, MetadataOnly: e.Data == nil && !e.Deleted}
		if err != nil {
			obj.State = StateUnknown
			out.Error = err.Error()
			out.Objects = append(out.Objects, obj)
			continue
		}
		var checkErr error
		obj, checkErr = c.object(ctx, readOnlyClient{cl}, e, obj)
		if checkErr != nil && cluster.IsUnreachable(checkErr) {
			err = checkErr
			out.Error = err.Error()
		}
		out.Objects = append(out.Objects, obj)
	}
	return out
}

// object fills the state of one entry: an entry marked deleted is
// deleting or gone, a read-only or metadata-only entry present or
// missing, any other goes through apply's report-only mode with the
// options StateKeep would use, so that drifted means StateKeep would
// patch. The error is returned only to spot an unreachable cluster.
func (c checker) object(ctx context.Context, cl client.Client, e keptEntry, obj TrackedObject) (TrackedObject, error) {
	res := policy.Resource{Component: e.Component, ComponentType: c.types[e.Component], Trait: e.Trait, Kind: e.Kind, Name: e.Name}
	manifest, err := tracker.Manifest(e.ManagedResource)
	if err != nil {
		obj.State, obj.Message = StateUnknown, err.Error()
		return obj, nil
	}
	obj.ReadOnly = c.rules.ReadOnly(res)
	if e.Deleted || manifest == nil || obj.ReadOnly {
		exists, err := objectExists(ctx, cl, e.ManagedResource)
		switch {
		case err != nil:
			obj.State, obj.Message = StateUnknown, err.Error()
		case e.Deleted && exists:
			obj.State = StateDeleting
		case e.Deleted:
			obj.State = StateGone
		case exists:
			obj.State = StatePresent
		default:
			obj.State = StateMissing
		}
		return obj, err
	}
	result, err := c.applier.Apply(ctx, cl, manifest, apply.Options{
		ReportOnly:     true,
		TakeOver:       c.rules.TakeOver(res),
		Shared:         c.rules.Shared(res),
		KeepLiveFields: c.rules.ApplyOncePaths(res, false),
	})
	switch {
	case errors.Is(err, errReadOnly):
		// Only joining a shared object's sharers would be written.
		obj.State = StatePresent
	case errors.Is(err, apply.ErrNotOwned):
		obj.State, obj.Message = StateConflict, err.Error()
	case err != nil:
		obj.State, obj.Message = StateUnknown, err.Error()
		return obj, err
	case result.Action == apply.Missing:
		obj.State = StateMissing
	case result.Action == apply.Drifted:
		obj.State, obj.Fields = StateDrifted, result.Fields
	default:
		obj.State = StatePresent
	}
	return obj, nil
}

func objectExists(ctx context.Context, c client.Client, e v1beta1.ManagedResource) (bool, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(schema.FromAPIVersionAndKind(e.APIVersion, e.Kind))
	err := c.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: e.Name}, live)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", tracker.KeyOf(e), err)
	}
	return true, nil
}

// errReadOnly is what readOnlyClient answers to a write.
var errReadOnly = errors.New("the steward CLI does not write to clusters")

// readOnlyClient refuses every write, so that nothing the read-only
// commands call can change a cluster, whatever apply's report-only mode
// does.
type readOnlyClient struct{ client.Client }

func (readOnlyClient) Create(context.Context, client.Object, ...client.CreateOption) error {
	return errReadOnly
}
func (readOnlyClient) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return errReadOnly
}
func (readOnlyClient) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errReadOnly
}
func (readOnlyClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return errReadOnly
}
func (readOnlyClient) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return errReadOnly
}
func (readOnlyClient) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return errReadOnly
}
func (readOnlyClient) Status() client.SubResourceWriter { return readOnlyStatus{} }
func (readOnlyClient) SubResource(string) client.SubResourceClient {
	return readOnlyStatus{}
}

type readOnlyStatus struct{}

func (readOnlyStatus) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return errReadOnly
}
func (readOnlyStatus) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return errReadOnly
}
func (readOnlyStatus) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return errReadOnly
}
func (readOnlyStatus) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return errReadOnly
}
func (readOnlyStatus) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return errReadOnly
}

// printTree writes the tree as a table, one block of rows per cluster.
func printTree(out io.Writer, t *AppTree) error {
	fmt.Fprintf(out, "Application %s/%s, version %s (trackers: %s)\n\n", t.Namespace, t.Name, t.Version, orDash(strings.Join(t.Trackers, ", ")))
	if len(t.Clusters) == 0 {
		_, err := fmt.Fprintln(out, "No objects recorded.")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tNAMESPACE\tRESOURCE\tCOMPONENT\tSTATE")
	for _, c := range t.Clusters {
		first := c.Cluster
		if c.Error != "" {
			first += " (" + c.Error + ")"
		}
		for i, o := range c.Objects {
			branch := "├─ "
			if i == len(c.Objects)-1 {
				branch = "└─ "
			}
			fmt.Fprintf(w, "%s\t%s\t%s%s/%s\t%s\t%s\n", first, orDash(o.Namespace), branch, o.Kind, o.Name, objectSource(o.Component, o.Trait), describeState(o))
			first = ""
		}
	}
	return w.Flush()
}

// objectSource names where an object comes from: "frontend", or
// "frontend/expose" for a trait's object.
func objectSource(component, trait string) string {
	if trait != "" {
		return component + "/" + trait
	}
	return orDash(component)
}

// describeState is the state with what explains it.
func describeState(o TrackedObject) string {
	s := string(o.State)
	switch {
	case len(o.Fields) > 0:
		s += ": " + strings.Join(o.Fields, ", ")
	case o.Message != "":
		s += ": " + o.Message
	}
	if o.ReadOnly {
		s += " (read-only)"
	}
	if o.MetadataOnly {
		s += " (kept until the app is deleted)"
	}
	return s
}
