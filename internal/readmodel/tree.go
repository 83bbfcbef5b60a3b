package readmodel

import (
	"context"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/policy"
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

// Tree reads every object the kept trackers of Application
// namespace/name record, per cluster, decoded whatever their compression,
// with its live state: the hub with hub, the target clusters with
// clients.
func Tree(ctx context.Context, hub client.Client, clients Clients, namespace, name string) (*AppTree, error) {
	rec, err := readApp(ctx, hub, namespace, name)
	if err != nil {
		return nil, err
	}
	return liveTree(ctx, clients, rec)
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
	sort.Slice(names, func(i, j int) bool { return ClusterLess(names[i], names[j]) })
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
