package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/readmodel"
)

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
// cluster, decoded whatever their compression, with its live state, as
// readmodel.Tree reads it.
func Tree(ctx context.Context, hubConfig *rest.Config, hub client.Client, o TreeOptions) error {
	if err := checkStructured(o.Output); err != nil {
		return err
	}
	clients, err := readmodel.NewClusterManager(hubConfig, hub, o.ClusterNamespace)
	if err != nil {
		return err
	}
	t, err := readmodel.Tree(ctx, hub, clients, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printStructured(o.Out, o.Output, t)
	}
	return printTree(o.Out, t)
}

// printTree writes the tree as a table, one block of rows per cluster.
func printTree(out io.Writer, t *readmodel.AppTree) error {
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
func describeState(o readmodel.TrackedObject) string {
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
