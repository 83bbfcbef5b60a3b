package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/readmodel"
)

// HistoryOptions are the inputs of `steward history`.
type HistoryOptions struct {
	Name      string
	Namespace string
	// Output is table (default), wide, yaml or json.
	Output string
	Out    io.Writer
}

// History prints the versions of an Application, oldest first.
func History(ctx context.Context, hub client.Client, o HistoryOptions) error {
	app, versions, err := readmodel.Versions(ctx, hub, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	if o.Output == OutputName {
		return unknownFormat(o.Output, []string{OutputTable, OutputWide, OutputYAML, OutputJSON})
	}
	p, err := listPrinter(o.Output, false, nil)
	if err != nil {
		return err
	}
	switch o.Output {
	case "", OutputTable, OutputWide:
		if len(versions) == 0 {
			_, err := fmt.Fprintf(o.Out, "Application %s/%s has no recorded version yet.\n", app.Namespace, app.Name)
			return err
		}
		return p.PrintObj(historyTable(versions, time.Now()), o.Out)
	}
	return p.PrintObj(historyList(versions), o.Out)
}

var historyColumns = []metav1.TableColumnDefinition{
	{Name: "Revision", Type: "string", Description: "The version's name, as status.latestRevision names it."},
	{Name: "Publish-Version", Type: "string", Description: "The app.oam.dev/publishVersion it was published as."},
	{Name: "Generation", Type: "integer", Description: "The Application generation it was last recorded at."},
	{Name: "Objects", Type: "integer", Description: "Objects the version rendered."},
	{Name: "Current", Type: "string", Description: "Whether the controller keeps this version."},
	{Name: "Created", Type: "string", Description: "Time since the version was first recorded."},
	{Name: "Clusters", Type: "string", Priority: 1, Description: "Clusters the version's objects go to."},
	{Name: "Tracker", Type: "string", Priority: 1, Description: "The versioned ResourceTracker."},
}

func historyTable(versions []readmodel.AppVersion, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: historyColumns}
	for _, v := range versions {
		current := ""
		if v.Current {
			current = "yes"
		}
		objects := fmt.Sprint(v.Objects)
		if v.Deleting > 0 {
			objects = fmt.Sprintf("%d (%d deleting)", v.Objects, v.Deleting)
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{
			v.Revision, publishVersionOrNone(v.PublishVersion), v.Generation, objects, current,
			ageSince(v.Created.Time, now), strings.Join(v.Clusters, ","), v.Tracker,
		}})
	}
	return t
}

// historyList is the yaml and json form: a v1 List of versions.
func historyList(versions []readmodel.AppVersion) runtime.Object {
	items := make([]any, 0, len(versions))
	for _, v := range versions {
		clusters := make([]any, len(v.Clusters))
		for i, c := range v.Clusters {
			clusters[i] = c
		}
		item := map[string]any{
			"revision":   v.Revision,
			"generation": v.Generation,
			"tracker":    v.Tracker,
			"created":    v.Created.UTC().Format(time.RFC3339),
			"current":    v.Current,
			"objects":    int64(v.Objects),
			"clusters":   clusters,
		}
		if v.PublishVersion != "" {
			item["publishVersion"] = v.PublishVersion
		}
		if v.Deleting > 0 {
			item["deleting"] = int64(v.Deleting)
		}
		items = append(items, item)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": items}}
}

func publishVersionOrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
