package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/sandbox"
	"github.com/steward-oam/steward/internal/tracker"
)

// DiffOptions are the inputs of `steward diff`.
type DiffOptions struct {
	// AppFile is the Application manifest to compare with the cluster.
	AppFile string
	// Namespace is where an Application that names none goes.
	Namespace string
	// DefinitionNamespace is the system definition namespace searched
	// after the Application's (default vela-system).
	DefinitionNamespace string
	// ClusterNamespace holds the cluster Secrets (default vela-system).
	ClusterNamespace string
	// Out receives the unified diffs.
	Out io.Writer
	// Budget bounds the render, as the controller's flags of the same
	// names do; zero is the controller's defaults.
	Budget sandbox.Budget
	// ApplyMethod is the controller's --apply-method; "" is server-side.
	ApplyMethod string
}

// DiffReport is what applying the file would do, object by object.
type DiffReport struct {
	Created []tracker.Key
	Patched []tracker.Key
	Deleted []tracker.Key
	// Failures are objects an apply would fail on (owned by another
	// Application, say) or that could not be read.
	Failures []error
}

// Differs reports whether applying the file would change anything.
func (r DiffReport) Differs() bool {
	return len(r.Created)+len(r.Patched)+len(r.Deleted) > 0
}

// Summary is one line for people: "1 to create, 2 to patch, 0 to delete".
func (r DiffReport) Summary() string {
	return fmt.Sprintf("%d to create, %d to patch, %d to delete", len(r.Created), len(r.Patched), len(r.Deleted))
}

// Diff shows what applying the Application of o.AppFile would do, as the
// controller would do it: the objects it would create, patch (live object
// against the result of the apply internal/apply would send, applied by
// the API server as a dry run: a server-side apply, or the client-side
// three-way patch) and delete
// (objects of the Application's versioned trackers the new version no
// longer lists, unless its garbage-collect or read-only policies keep
// them),
// as unified diffs on o.Out. Nothing is written to any cluster.
//
// The version delivered is the controller's: a publishVersion whose
// tracker exists, or an unchanged spec, delivers the recorded manifests
// rather than a new render.
func Diff(ctx context.Context, cfg *rest.Config, hub client.Client, o DiffOptions) (DiffReport, error) {
	var report DiffReport
	if o.AppFile == "" {
		return report, fmt.Errorf("no application given: pass -f with an Application file")
	}
	app, err := loadApplicationIn(o.AppFile, appNamespace(o.Namespace))
	if err != nil {
		return report, err
	}
	rules, err := policy.Parse(app)
	if err != nil {
		return report, fmt.Errorf("application %s/%s: %w", app.Namespace, app.Name, err)
	}
	clients, err := newClusterClients(cfg, hub, o.ClusterNamespace)
	if err != nil {
		return report, err
	}
	live, err := liveApplication(ctx, hub, app)
	if err != nil {
		return report, err
	}
	st, err := readState(ctx, hub, live)
	if err != nil {
		return report, err
	}
	method, err := apply.ParseMethod(o.ApplyMethod)
	if err != nil {
		return report, err
	}
	desired, fresh, err := desiredObjects(ctx, cfg, clients, live, app, st, o.DefinitionNamespace, o.Budget)
	if err != nil {
		return report, err
	}
	d := differ{out: o.Out, clients: clients, rules: rules, types: policy.ComponentTypes(app), fresh: fresh,
		applier: apply.Applier{Owner: apply.Owner{Name: app.Name, Namespace: app.Namespace}, Shard: shardOf(app, live), Method: method}, report: &report}
	// StateKeep in report-only drift mode writes nothing; a dispatch
	// writes whatever the drift mode.
	writes := fresh || app.Annotations[v1beta1.AnnotationDriftMode] != v1beta1.DriftModeReport
	wanted := map[tracker.Key]bool{}
	for _, obj := range desired {
		wanted[obj.Key()] = true
		if !writes {
			continue
		}
		if err := d.apply(ctx, obj); err != nil {
			return report, err
		}
	}
	if rules.GC.KeepLegacyResource {
		return report, nil
	}
	for _, e := range st.rootEntries {
		wanted[tracker.KeyOf(e)] = true
	}
	for _, e := range st.versionedEntries {
		if wanted[tracker.KeyOf(e)] {
			continue
		}
		if err := d.collect(ctx, e); err != nil {
			return report, err
		}
	}
	return report, nil
}

// trackedState is what the trackers of the live Application record.
type trackedState struct {
	// versioned are the Application's versioned trackers (its UID),
	// oldest first.
	versioned []v1beta1.ResourceTracker
	// versionedEntries are their entries, each key once.
	versionedEntries []v1beta1.ManagedResource
	rootEntries      []v1beta1.ManagedResource
}

func readState(ctx context.Context, hub client.Client, live *v1beta1.Application) (trackedState, error) {
	var st trackedState
	if live == nil {
		return st, nil
	}
	all, err := (&tracker.Store{Client: hub}).List(ctx, tracker.RefOf(live))
	if err != nil {
		return st, err
	}
	seen := map[tracker.Key]bool{}
	for i := range all {
		rt := &all[i]
		entries, err := tracker.Entries(rt)
		if err != nil {
			return st, fmt.Errorf("resource tracker %s: %w", rt.Name, err)
		}
		switch {
		case rt.Spec.Type == v1beta1.ResourceTrackerTypeRoot:
			st.rootEntries = entries
		case rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned && rt.Labels[v1beta1.LabelAppUID] == string(live.UID):
			st.versioned = append(st.versioned, *rt)
			for _, e := range entries {
				if k := tracker.KeyOf(e); !seen[k] {
					seen[k] = true
					st.versionedEntries = append(st.versionedEntries, e)
				}
			}
		}
	}
	return st, nil
}

// desiredObjects are the objects the controller would apply for app: the
// recorded manifests of the version app asks for when the controller
// would reuse them (a publishVersion seen before, or an unchanged spec),
// else a fresh render; plus the root tracker's objects, which it keeps
// applying. fresh is false when the version is the one already kept, so
// that applying is StateKeep rather than a dispatch (apply-once rules and
// the drift mode tell them apart); a version recorded before and newer
// ones since is a rollback, dispatched again.
func desiredObjects(ctx context.Context, cfg *rest.Config, clients *clusterClients, live, app *v1beta1.Application,
	st trackedState, definitionNamespace string, budget sandbox.Budget) (objs []PlacedObject, fresh bool, err error) {
	gen, err := nextGeneration(live, app)
	if err != nil {
		return nil, false, err
	}
	at := app.DeepCopy()
	at.Generation = gen
	kind := tracker.VersionOf(at)
	name := tracker.Name(app.Name, app.Namespace, kind)
	i := slices.IndexFunc(st.versioned, func(rt v1beta1.ResourceTracker) bool { return rt.Name == name })
	reuse := i >= 0 && kind.PublishVersion != ""
	if i >= 0 && !reuse && gen == live.Generation {
		// The same generation is rendered again only when the clusters
		// its topology selects moved since it was recorded.
		if reuse, err = samePlacements(ctx, clients, at, &st.versioned[i]); err != nil {
			return nil, false, err
		}
	}
	if reuse {
		rt := &st.versioned[i]
		newest := int64(0)
		for _, v := range st.versioned {
			newest = max(newest, v.Spec.ApplicationGeneration)
		}
		fresh = rt.Spec.ApplicationGeneration < newest || rt.Annotations[tracker.AnnotationDispatchPending] != ""
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, false, err
		}
		if objs, err = recordedObjects(entries); err != nil {
			return nil, false, err
		}
	} else {
		fresh = true
		objs, err = renderConnected(ctx, clients, at, appContext(at, gen, delivery.ClusterVersion(cfg)), definitionNamespace, budget)
		if err != nil {
			return nil, false, err
		}
	}
	seen := map[tracker.Key]bool{}
	for _, o := range objs {
		seen[o.Key()] = true
	}
	root, err := recordedObjects(st.rootEntries)
	if err != nil {
		return nil, false, err
	}
	for _, o := range root {
		if !seen[o.Key()] {
			objs = append(objs, o)
		}
	}
	return objs, fresh, nil
}

// samePlacements reports whether app places its components where rt was
// rendered for (the controller's app.oam.dev/placements record); always
// true without a topology policy.
func samePlacements(ctx context.Context, clients *clusterClients, app *v1beta1.Application, rt *v1beta1.ResourceTracker) (bool, error) {
	if !delivery.UsesTopology(app) {
		return true, nil
	}
	clusters, err := clients.registered(ctx, app)
	if err != nil {
		return false, err
	}
	steps, err := placement.Resolve(app, delivery.Placeable(clusters))
	if err != nil {
		return false, fmt.Errorf("application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return delivery.PlacementsOf(steps) == rt.Annotations[tracker.AnnotationPlacements], nil
}

// recordedObjects are the manifests of entries still wanted.
func recordedObjects(entries []v1beta1.ManagedResource) ([]PlacedObject, error) {
	var out []PlacedObject
	for _, e := range entries {
		if e.Deleted || e.Data == nil {
			continue
		}
		obj, err := tracker.Manifest(e)
		if err != nil {
			return nil, err
		}
		out = append(out, PlacedObject{Cluster: e.Cluster, Component: e.Component, Trait: e.Trait, Object: obj})
	}
	return out, nil
}

// differ compares objects with their clusters and writes the diffs.
type differ struct {
	out     io.Writer
	clients *clusterClients
	rules   *policy.Rules
	types   map[string]string
	// fresh: the apply is a dispatch, not StateKeep.
	fresh   bool
	applier apply.Applier
	report  *DiffReport
}

// apply runs internal/apply against a dry-run client: once in report-only
// mode to learn whether the object is missing or would be patched, and
// for a patch once more to have the API server compute the result. Fields
// the apply would take from other field managers are listed above the
// object's diff.
func (d differ) apply(ctx context.Context, obj PlacedObject) error {
	key := obj.Key()
	res := policy.Resource{Component: obj.Component, ComponentType: d.types[obj.Component], Trait: obj.Trait,
		Kind: obj.Object.GetKind(), Name: obj.Object.GetName()}
	if d.rules.ReadOnly(res) {
		// Read-only objects are never written.
		return nil
	}
	c, err := d.clients.get(ctx, obj.Cluster)
	if err != nil {
		d.fail(key, err)
		return nil
	}
	dry := client.NewDryRunClient(c)
	opts := apply.Options{
		TakeOver:       d.rules.TakeOver(res),
		Shared:         d.rules.Shared(res),
		KeepLiveFields: d.rules.ApplyOncePaths(res, d.fresh),
		ReportOnly:     true,
	}
	r, err := d.applier.Apply(ctx, dry, obj.Object, opts)
	if err != nil {
		d.fail(key, err)
		return nil
	}
	switch r.Action {
	case apply.Missing:
		d.report.Created = append(d.report.Created, key)
		_, err := writeDiff(d.out, key, obj.Object.GetAPIVersion(), nil, obj.Object)
		return err
	case apply.Drifted:
		before := r.Live.DeepCopy()
		opts.ReportOnly = false
		after, err := d.applier.Apply(ctx, dry, obj.Object, opts)
		if err != nil {
			d.fail(key, err)
			return nil
		}
		for _, c := range after.Conflicts {
			if _, err := fmt.Fprintf(d.out, "# %s: takes %s from field manager %q\n", key, c.Field, c.Manager); err != nil {
				return err
			}
		}
		// A patch of the last-applied annotation alone changes nothing
		// anyone reads: not reported.
		changed, err := writeDiff(d.out, key, obj.Object.GetAPIVersion(), before, after.Live)
		if changed {
			d.report.Patched = append(d.report.Patched, key)
		}
		return err
	case apply.Configured:
		// Joining the sharers of an object another Application owns.
		d.report.Patched = append(d.report.Patched, key)
		_, err := fmt.Fprintf(d.out, "# %s: joins the Applications sharing it (%s)\n", key, v1beta1.AnnotationSharedBy)
		return err
	}
	return nil
}

// shardOf returns the shard the controller applies an Application's
// objects for, as the live Application's shard label says (the master
// shard assigns it); the file's, for an Application not yet created.
func shardOf(file, live *v1beta1.Application) string {
	if live != nil {
		return live.Labels[v1beta1.LabelScheduledShardID]
	}
	return file.Labels[v1beta1.LabelScheduledShardID]
}

// collect reports the object of an entry the new version drops when the
// controller's garbage collection would delete it: the policies do not
// keep it, and it exists, is this Application's and is shared with no
// other.
func (d differ) collect(ctx context.Context, e v1beta1.ManagedResource) error {
	key := tracker.KeyOf(e)
	res := policy.Resource{Component: e.Component, ComponentType: d.types[e.Component], Trait: e.Trait, Kind: e.Kind, Name: e.Name}
	strategy := d.rules.GCStrategy(res)
	if e.SkipGC || d.rules.ReadOnly(res) || strategy == policy.Never || strategy == policy.OnAppDelete {
		return nil
	}
	c, err := d.clients.get(ctx, e.Cluster)
	if err != nil {
		d.fail(key, err)
		return nil
	}
	live := tracker.Ref(e)
	err = c.Get(ctx, client.ObjectKeyFromObject(live), live)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		d.fail(key, fmt.Errorf("reading %s: %w", key, err))
		return nil
	}
	if !d.applier.Owns(live) || live.GetDeletionTimestamp() != nil || sharedWithOthers(live, d.applier.Owner) {
		return nil
	}
	d.report.Deleted = append(d.report.Deleted, key)
	_, err = writeDiff(d.out, key, e.APIVersion, live, nil)
	return err
}

func (d differ) fail(key tracker.Key, err error) {
	d.report.Failures = append(d.report.Failures, fmt.Errorf("%s: %w", key, err))
}

// sharedWithOthers reports whether other Applications share live, so
// that dropping it only hands it over.
func sharedWithOthers(live *unstructured.Unstructured, owner apply.Owner) bool {
	for _, s := range strings.Split(live.GetAnnotations()[v1beta1.AnnotationSharedBy], ",") {
		if s != "" && s != owner.Namespace+"/"+owner.Name {
			return true
		}
	}
	return false
}
