package readmodel

import (
	"context"
	"fmt"
	"sort"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// DefaultStatusEvents is how many events `steward status` shows.
const DefaultStatusEvents = 10

// AppStatus is what `steward status` reports about one Application.
type AppStatus struct {
	Name       string      `json:"name"`
	Namespace  string      `json:"namespace"`
	CreatedAt  metav1.Time `json:"createdAt"`
	Generation int64       `json:"generation"`
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64                    `json:"observedGeneration"`
	PublishVersion     string                   `json:"publishVersion,omitempty"`
	Phase              v1beta1.ApplicationPhase `json:"phase"`
	// Revision is the revision delivered (status.latestRevision).
	Revision   string              `json:"revision,omitempty"`
	Conditions []v1beta1.Condition `json:"conditions,omitempty"`
	Components []ComponentStatus   `json:"components"`
	Trackers   []TrackerSummary    `json:"trackers"`
	// Drift lists the recorded objects that are not as recorded on their
	// cluster: missing, drifted, in conflict or unknown.
	Drift  []TrackedObject `json:"drift"`
	Events []AppEvent      `json:"events"`
}

// ComponentStatus is one component of the spec and where it runs.
type ComponentStatus struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Traits []string `json:"traits,omitempty"`
	// Placements are the clusters the component was delivered to, as
	// status.services reports them.
	Placements []Placement `json:"placements"`
}

// Placement is a component in one cluster.
type Placement struct {
	Cluster   string                           `json:"cluster"`
	Namespace string                           `json:"namespace,omitempty"`
	Healthy   bool                             `json:"healthy"`
	Message   string                           `json:"message,omitempty"`
	Details   map[string]string                `json:"details,omitempty"`
	Traits    []v1beta1.ApplicationTraitStatus `json:"traits,omitempty"`
	// Objects counts the objects the kept trackers record for the
	// component in the cluster.
	Objects int `json:"objects"`
}

// TrackerSummary is one resource tracker of the Application.
type TrackerSummary struct {
	Name string                      `json:"name"`
	Type v1beta1.ResourceTrackerType `json:"type"`
	// Version is the publishVersion or "v<generation>" of a versioned
	// tracker; empty for the others.
	Version    string `json:"version,omitempty"`
	Generation int64  `json:"generation"`
	// Current marks the versioned tracker the controller keeps.
	Current     bool                    `json:"current,omitempty"`
	Entries     int                     `json:"entries"`
	Compression v1beta1.CompressionType `json:"compression,omitempty"`
	CreatedAt   metav1.Time             `json:"createdAt"`
}

// AppEvent is one event about the Application.
type AppEvent struct {
	Type     string      `json:"type"`
	Reason   string      `json:"reason"`
	Note     string      `json:"note"`
	Count    int32       `json:"count,omitempty"`
	LastSeen metav1.Time `json:"lastSeen"`
}

// Status prints the state of one Application: phase and conditions, each
// component per cluster with its traits and health, the trackers with
// Status reads the state of Application namespace/name: phase and
// conditions, each component per cluster with its traits and health, the
// trackers with their versions, drift found on the clusters (through
// clients), and the latest events (at most events; 0 is
// DefaultStatusEvents).
func Status(ctx context.Context, hub client.Client, clients Clients, namespace, name string, events int) (*AppStatus, error) {
	rec, err := readApp(ctx, hub, namespace, name)
	if err != nil {
		return nil, err
	}
	tree, err := liveTree(ctx, clients, rec)
	if err != nil {
		return nil, err
	}
	return statusOf(ctx, hub, rec, tree, events)
}

// statusOf gathers the status of rec: its live tree gives the drift and
// the object counts; events are read from the hub.
func statusOf(ctx context.Context, hub client.Reader, rec *appRecord, tree *AppTree, events int) (*AppStatus, error) {
	app := rec.app
	st := &AppStatus{
		Name: app.Name, Namespace: app.Namespace, CreatedAt: app.CreationTimestamp,
		Generation: app.Generation, ObservedGeneration: app.Status.ObservedGeneration,
		PublishVersion: app.Annotations[v1beta1.AnnotationPublishVersion],
		Phase:          app.Status.Phase, Conditions: app.Status.Conditions,
		Drift: []TrackedObject{}, Events: []AppEvent{},
	}
	if app.Status.LatestRevision != nil {
		st.Revision = app.Status.LatestRevision.Name
	}
	counts := map[string]int{}
	for _, c := range tree.Clusters {
		for _, o := range c.Objects {
			if o.State != StateGone && o.State != StateDeleting {
				counts[o.Component+"@"+o.Cluster]++
			}
			if o.State != StatePresent && o.State != StateGone {
				st.Drift = append(st.Drift, o)
			}
		}
	}
	st.Components = componentStatuses(app, counts)
	var err error
	if st.Trackers, err = trackerSummaries(rec); err != nil {
		return nil, err
	}
	if st.Events, err = appEvents(ctx, hub, app, events); err != nil {
		return nil, err
	}
	return st, nil
}

// componentStatuses joins the spec's components with status.services.
func componentStatuses(app *v1beta1.Application, counts map[string]int) []ComponentStatus {
	out := make([]ComponentStatus, 0, len(app.Spec.Components))
	for _, c := range app.Spec.Components {
		cs := ComponentStatus{Name: c.Name, Type: c.Type, Placements: []Placement{}}
		for _, t := range c.Traits {
			cs.Traits = append(cs.Traits, t.Type)
		}
		for _, svc := range app.Status.Services {
			if svc.Name != c.Name {
				continue
			}
			name := svc.Cluster
			name = v1beta1.ClusterDisplay(name)
			cs.Placements = append(cs.Placements, Placement{Cluster: name, Namespace: svc.Namespace, Healthy: svc.Healthy,
				Message: svc.Message, Details: svc.Details, Traits: svc.Traits, Objects: counts[c.Name+"@"+name]})
		}
		sort.SliceStable(cs.Placements, func(i, j int) bool { return ClusterLess(cs.Placements[i].Cluster, cs.Placements[j].Cluster) })
		out = append(out, cs)
	}
	return out
}

// trackerSummaries lists every tracker of the Application: versioned ones
// newest first, then root and component revisions.
func trackerSummaries(rec *appRecord) ([]TrackerSummary, error) {
	out := make([]TrackerSummary, 0, len(rec.trackers))
	for i := len(rec.trackers) - 1; i >= 0; i-- {
		rt := &rec.trackers[i]
		entries, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		s := TrackerSummary{Name: rt.Name, Type: rt.Spec.Type, Generation: rt.Spec.ApplicationGeneration,
			Current: rec.current != nil && rt.Name == rec.current.Name, Entries: len(entries),
			Compression: rt.Spec.Compression.Type, CreatedAt: rt.CreationTimestamp}
		if rt.Spec.Type == v1beta1.ResourceTrackerTypeVersioned {
			s.Version = trackerVersion(rt)
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Type == v1beta1.ResourceTrackerTypeVersioned && out[j].Type != v1beta1.ResourceTrackerTypeVersioned
	})
	return out, nil
}

// appEvents returns the latest n events about app (by UID, so events of an
// earlier Application of the same name are left out), oldest first.
func appEvents(ctx context.Context, hub client.Reader, app *v1beta1.Application, n int) ([]AppEvent, error) {
	if n <= 0 {
		n = DefaultStatusEvents
	}
	var list eventsv1.EventList
	if err := hub.List(ctx, &list, client.InNamespace(app.Namespace)); err != nil {
		return nil, fmt.Errorf("listing events of application %s/%s: %w", app.Namespace, app.Name, err)
	}
	out := []AppEvent{}
	for _, e := range list.Items {
		if e.Regarding.UID != app.UID {
			continue
		}
		ev := AppEvent{Type: e.Type, Reason: e.Reason, Note: e.Note, LastSeen: lastSeen(e)}
		if e.Series != nil {
			ev.Count = e.Series.Count
		} else if e.DeprecatedCount > 0 {
			ev.Count = e.DeprecatedCount
		}
		out = append(out, ev)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastSeen.Before(&out[j].LastSeen) })
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}

// lastSeen is when an event last happened: its series' last observation,
// its event time, or the time of the core/v1 fields.
func lastSeen(e eventsv1.Event) metav1.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return metav1.NewTime(e.Series.LastObservedTime.Time)
	case !e.EventTime.IsZero():
		return metav1.NewTime(e.EventTime.Time)
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp
	}
	return e.CreationTimestamp
}
