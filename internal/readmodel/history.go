package readmodel

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/tracker"
)

// AppVersion is one version of an Application, as its versioned
// ResourceTracker records it.
type AppVersion struct {
	// Revision names the version as status.latestRevision does:
	// "<app>-v<generation>", or "<app>-<publishVersion>".
	Revision string `json:"revision"`
	// PublishVersion is the app.oam.dev/publishVersion the version was
	// published as; empty for a version named by generation.
	PublishVersion string `json:"publishVersion,omitempty"`
	// Generation is the Application generation the version was last
	// recorded (or rolled back) at.
	Generation int64 `json:"generation"`
	// Tracker is the versioned ResourceTracker's name.
	Tracker string `json:"tracker"`
	// Created is when the version was first recorded.
	Created metav1.Time `json:"created"`
	// Current is true for the version the controller keeps.
	Current bool `json:"current"`
	// Objects counts the objects the version rendered; Deleting those of
	// them garbage collection is deleting now.
	Objects  int `json:"objects"`
	Deleting int `json:"deleting,omitempty"`
	// Clusters are the clusters its objects go to ("local" is the hub).
	Clusters []string `json:"clusters"`
}

// Versions reads the versions of Application namespace/name from its
// versioned trackers, oldest first. Current is the tracker the controller
// keeps: the one of the version the Application asks for (its
// publishVersion, else its generation) when it exists, else the newest
// one; trackers left by an earlier Application of the same name are not
// its history.
func Versions(ctx context.Context, hub client.Reader, namespace, name string) (*v1beta1.Application, []AppVersion, error) {
	app := &v1beta1.Application{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, app); err != nil {
		return nil, nil, readError(namespace, name, err)
	}
	var list v1beta1.ResourceTrackerList
	if err := hub.List(ctx, &list, client.MatchingLabels{
		v1beta1.LabelAppName:      app.Name,
		v1beta1.LabelAppNamespace: app.Namespace,
		v1beta1.LabelTrackerType:  string(v1beta1.ResourceTrackerTypeVersioned),
	}); err != nil {
		return nil, nil, fmt.Errorf("listing resource trackers of %s/%s: %w", namespace, name, err)
	}
	// The controller's order (tracker.Store.List): oldest generation
	// first, so that "the last one listed" is the newest.
	slices.SortStableFunc(list.Items, func(a, b v1beta1.ResourceTracker) int {
		return cmp.Compare(a.Spec.ApplicationGeneration, b.Spec.ApplicationGeneration)
	})
	versions, err := versionsOf(app, list.Items)
	if err != nil {
		return nil, nil, err
	}
	return app, versions, nil
}

// versionsOf returns the versions of app, oldest first, from its trackers
// in the controller's order (oldest generation first); trackers of other
// types or of an earlier Application of the same name are skipped.
func versionsOf(app *v1beta1.Application, trackers []v1beta1.ResourceTracker) ([]AppVersion, error) {
	currentName := ""
	if i := tracker.Current(trackers, app); i >= 0 {
		currentName = trackers[i].Name
	}
	var out []AppVersion
	for i := range trackers {
		rt := &trackers[i]
		if rt.Spec.Type != v1beta1.ResourceTrackerTypeVersioned || rt.Labels[v1beta1.LabelAppUID] != string(app.UID) {
			continue
		}
		v, err := versionOf(app.Name, rt)
		if err != nil {
			return nil, err
		}
		v.Current = rt.Name == currentName
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(a, b AppVersion) int {
		if c := cmp.Compare(a.Generation, b.Generation); c != 0 {
			return c
		}
		return a.Created.Compare(b.Created.Time)
	})
	return out, nil
}

func versionOf(appName string, rt *v1beta1.ResourceTracker) (AppVersion, error) {
	entries, err := tracker.Entries(rt)
	if err != nil {
		return AppVersion{}, fmt.Errorf("resource tracker %s: %w", rt.Name, err)
	}
	pv := rt.Annotations[v1beta1.AnnotationPublishVersion]
	v := AppVersion{PublishVersion: pv, Generation: rt.Spec.ApplicationGeneration, Tracker: rt.Name, Created: rt.CreationTimestamp}
	v.Revision = delivery.RevisionNameOf(appName, pv, rt.Spec.ApplicationGeneration)
	for _, e := range entries {
		if e.Data == nil {
			continue
		}
		v.Objects++
		if e.Deleted {
			v.Deleting++
		}
		if c := v1beta1.ClusterDisplay(e.Cluster); !slices.Contains(v.Clusters, c) {
			v.Clusters = append(v.Clusters, c)
		}
	}
	slices.Sort(v.Clusters)
	return v, nil
}
