package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// DefaultStatusEvents is how many events `steward status` shows.
const DefaultStatusEvents = 10

// StatusOptions are the inputs of `steward status`.
type StatusOptions struct {
	// Namespace and Name of the Application.
	Namespace string
	Name      string
	// ClusterNamespace holds the cluster Secrets (default vela-system).
	ClusterNamespace string
	// Events is how many of the latest events to show (default 10).
	Events int
	// Output is empty (the readable layout), yaml or json.
	Output string
	Out    io.Writer
}

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
// their versions, drift found on the clusters, and the latest events.
func Status(ctx context.Context, hubConfig *rest.Config, hub client.Client, o StatusOptions) error {
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
	tree, err := liveTree(ctx, clients, rec)
	if err != nil {
		return err
	}
	st, err := statusOf(ctx, hub, rec, tree, o.Events)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printStructured(o.Out, o.Output, st)
	}
	return printStatus(o.Out, st, time.Now())
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
		sort.SliceStable(cs.Placements, func(i, j int) bool { return clusterLess(cs.Placements[i].Cluster, cs.Placements[j].Cluster) })
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

// trackerVersion is the publishVersion a versioned tracker was recorded
// for, else "v<generation>".
func trackerVersion(rt *v1beta1.ResourceTracker) string {
	if pv := rt.Annotations[v1beta1.AnnotationPublishVersion]; pv != "" {
		return pv
	}
	return fmt.Sprintf("v%d", rt.Spec.ApplicationGeneration)
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

// printStatus writes the readable layout of `steward status`.
func printStatus(out io.Writer, st *AppStatus, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "About:")
	fmt.Fprintf(w, "  Name:\t%s\n", st.Name)
	fmt.Fprintf(w, "  Namespace:\t%s\n", st.Namespace)
	fmt.Fprintf(w, "  Created at:\t%s (%s ago)\n", st.CreatedAt.UTC().Format(time.RFC3339), ageSince(st.CreatedAt.Time, now))
	fmt.Fprintf(w, "  Phase:\t%s\n", orDash(string(st.Phase)))
	gen := fmt.Sprintf("%d", st.Generation)
	if st.ObservedGeneration != st.Generation {
		gen += fmt.Sprintf(" (status is of generation %d)", st.ObservedGeneration)
	}
	fmt.Fprintf(w, "  Generation:\t%s\n", gen)
	if st.PublishVersion != "" {
		fmt.Fprintf(w, "  Publish version:\t%s\n", st.PublishVersion)
	}
	fmt.Fprintf(w, "  Revision:\t%s\n", orDash(st.Revision))
	if err := w.Flush(); err != nil {
		return err
	}

	section(out, "Conditions:")
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  TYPE\tSTATUS\tREASON\tMESSAGE")
	for _, c := range st.Conditions {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	if err := w.Flush(); err != nil {
		return err
	}

	section(out, "Components:")
	for _, c := range st.Components {
		head := fmt.Sprintf("  - %s (%s)", c.Name, c.Type)
		if len(c.Traits) > 0 {
			head += ", traits: " + strings.Join(c.Traits, ", ")
		}
		fmt.Fprintln(out, head)
		if len(c.Placements) == 0 {
			fmt.Fprintln(out, "      not delivered yet")
		}
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, p := range c.Placements {
			fmt.Fprintf(w, "      cluster %s\tnamespace %s\t%s\tobjects: %d\t%s\n", p.Cluster, orDash(p.Namespace), health(p.Healthy), p.Objects, p.Message)
			for _, t := range p.Traits {
				state := health(t.Healthy)
				if t.Pending {
					state = "pending"
				}
				fmt.Fprintf(w, "        trait %s\t\t%s\t\t%s\n", t.Type, state, t.Message)
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}

	section(out, "Trackers:")
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  CURRENT\tNAME\tTYPE\tVERSION\tGENERATION\tENTRIES\tCOMPRESSION\tAGE")
	for _, t := range st.Trackers {
		mark := ""
		if t.Current {
			mark = "*"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", mark, t.Name, t.Type, orDash(t.Version), t.Generation, t.Entries,
			orDash(string(t.Compression)), ageSince(t.CreatedAt.Time, now))
	}
	if err := w.Flush(); err != nil {
		return err
	}

	section(out, "Drift:")
	if len(st.Drift) == 0 {
		fmt.Fprintln(out, "  none: every recorded object is on its cluster as recorded")
	} else {
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "  CLUSTER\tRESOURCE\tCOMPONENT\tSTATE")
		for _, o := range st.Drift {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", o.Cluster, objectName(o), objectSource(o.Component, o.Trait), describeState(o))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}

	section(out, fmt.Sprintf("Events (last %d):", len(st.Events)))
	if len(st.Events) == 0 {
		fmt.Fprintln(out, "  none")
		return nil
	}
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  AGE\tTYPE\tREASON\tMESSAGE")
	for _, e := range st.Events {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", ageSince(e.LastSeen.Time, now), e.Type, e.Reason, e.Note)
	}
	return w.Flush()
}

func section(out io.Writer, title string) { fmt.Fprintf(out, "\n%s\n", title) }

func health(ok bool) string {
	if ok {
		return "healthy"
	}
	return "unhealthy"
}

// objectName is "Kind namespace/name", or "Kind name" when cluster-scoped.
func objectName(o TrackedObject) string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}
