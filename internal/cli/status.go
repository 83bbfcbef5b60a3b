package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/readmodel"
)

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

// Status prints the state of one Application, as readmodel.Status reads
// it: phase and conditions, each component per cluster with its traits
// and health, the trackers with their versions, drift found on the
// clusters, and the latest events.
func Status(ctx context.Context, hubConfig *rest.Config, hub client.Client, o StatusOptions) error {
	if err := checkStructured(o.Output); err != nil {
		return err
	}
	clients, err := readmodel.NewClusterManager(hubConfig, hub, o.ClusterNamespace)
	if err != nil {
		return err
	}
	st, err := readmodel.Status(ctx, hub, clients, o.Namespace, o.Name, o.Events)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printStructured(o.Out, o.Output, st)
	}
	return printStatus(o.Out, st, time.Now())
}

// printStatus writes the readable layout of `steward status`.
func printStatus(out io.Writer, st *readmodel.AppStatus, now time.Time) error {
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
func objectName(o readmodel.TrackedObject) string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}
