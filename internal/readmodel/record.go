package readmodel

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/tracker"
)

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

// kept returns the entries of the current tracker, then root's, decoded,
// each object once as StateKeep applies it (inventory.Kept): a version
// records the objects root keeps too, and its manifest is the one applied.
func (r *appRecord) kept() ([]keptEntry, error) {
	var out []keptEntry
	applied := inventory.Set{}
	for _, rt := range []*v1beta1.ResourceTracker{r.current, r.root} {
		if rt == nil {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if rt == r.root && !e.Deleted && applied.Has(tracker.KeyOf(e)) {
				continue
			}
			out = append(out, keptEntry{ManagedResource: e, tracker: rt.Name})
		}
		if rt == r.current {
			applied = inventory.Wanted(entries)
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

// trackerVersion is the publishVersion a versioned tracker was recorded
// for, else "v<generation>".
func trackerVersion(rt *v1beta1.ResourceTracker) string {
	if pv := rt.Annotations[v1beta1.AnnotationPublishVersion]; pv != "" {
		return pv
	}
	return fmt.Sprintf("v%d", rt.Spec.ApplicationGeneration)
}
