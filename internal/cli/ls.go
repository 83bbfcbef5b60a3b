package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/readmodel"
)

// LsOptions are the inputs of `steward ls`.
type LsOptions struct {
	// Namespace to list; ignored with AllNamespaces.
	Namespace string
	// AllNamespaces lists every namespace and adds a NAMESPACE column.
	AllNamespaces bool
	// Output is one of ListFormats; empty is table.
	Output string
	// Out receives the list.
	Out io.Writer
}

// Ls prints the Applications of a namespace (or all) through cli-runtime's
// printers: a table (NAME, PHASE, HEALTHY, COMPONENTS, AGE; wide adds
// VERSION, CLUSTERS, TRACKERS and REASON), or the objects as yaml, json or
// names. Only the wide table reads the resource trackers.
func Ls(ctx context.Context, hub client.Client, o LsOptions) error {
	printer, err := listPrinter(o.Output, o.AllNamespaces, hub.Scheme())
	if err != nil {
		return err
	}
	var list v1beta1.ApplicationList
	var opts []client.ListOption
	if !o.AllNamespaces {
		opts = append(opts, client.InNamespace(o.Namespace))
	}
	if err := hub.List(ctx, &list, opts...); err != nil {
		return fmt.Errorf("listing applications: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	switch o.Output {
	case OutputYAML, OutputJSON, OutputName:
		for i := range list.Items {
			list.Items[i].ManagedFields = nil
			list.Items[i].SetGroupVersionKind(v1beta1.GroupVersion.WithKind("Application"))
		}
		if o.Output != OutputName {
			return printer.PrintObj(&list, o.Out)
		}
		// The name printer takes one object at a time.
		for i := range list.Items {
			if err := printer.PrintObj(&list.Items[i], o.Out); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list.Items) == 0 {
		where := "in namespace " + o.Namespace
		if o.AllNamespaces {
			where = "in any namespace"
		}
		_, err := fmt.Fprintf(o.Out, "No applications found %s.\n", where)
		return err
	}
	var trackers map[string]int
	if o.Output == OutputWide {
		trackers = trackersPerApp(ctx, hub)
	}
	return printer.PrintObj(appTable(list.Items, trackers, time.Now()), o.Out)
}

// appColumns are the columns of `steward ls`; priority 1 shows with -o wide.
var appColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the Application."},
	{Name: "Phase", Type: "string", Description: "status.status: running, unhealthy, rendering, workflowFailed, ..."},
	{Name: "Healthy", Type: "string", Description: "Healthy components over all components, counted per cluster."},
	{Name: "Components", Type: "string", Description: "Names of the components in the spec."},
	{Name: "Age", Type: "string", Description: "Time since the Application was created."},
	{Name: "Version", Type: "string", Priority: 1, Description: "app.oam.dev/publishVersion, else the generation."},
	{Name: "Clusters", Type: "string", Priority: 1, Description: "Clusters the components were delivered to."},
	{Name: "Trackers", Type: "string", Priority: 1, Description: "Number of resource trackers of the Application."},
	{Name: "Reason", Type: "string", Priority: 1, Description: "Reason of the Ready condition when it is not True."},
}

// appTable builds the table of Applications. trackers counts trackers per
// "namespace/name"; nil when not read (narrow table) or not readable.
func appTable(apps []v1beta1.Application, trackers map[string]int, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: appColumns}
	for i := range apps {
		app := &apps[i]
		comps := make([]string, 0, len(app.Spec.Components))
		for _, c := range app.Spec.Components {
			comps = append(comps, c.Name)
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{
				app.Name,
				orDash(string(app.Status.Phase)),
				healthyCount(app.Status.Services),
				orDash(strings.Join(comps, ",")),
				ageSince(app.CreationTimestamp.Time, now),
				appVersion(app),
				orDash(strings.Join(servedClusters(app.Status.Services), ",")),
				trackerCount(trackers, app),
				notReadyReason(app),
			},
			Object: runtime.RawExtension{Object: app},
		})
	}
	return t
}

// healthyCount is "healthy/all" over the components of status.services,
// each cluster of a component counted once.
func healthyCount(services []v1beta1.ApplicationComponentStatus) string {
	if len(services) == 0 {
		return "-"
	}
	n := 0
	for _, s := range services {
		if s.Healthy {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(services))
}

// appVersion is the Application's publishVersion, else its generation.
func appVersion(app *v1beta1.Application) string {
	if pv := app.Annotations[v1beta1.AnnotationPublishVersion]; pv != "" {
		return pv
	}
	return "generation " + strconv.FormatInt(app.Generation, 10)
}

// servedClusters are the clusters of status.services, local first.
func servedClusters(services []v1beta1.ApplicationComponentStatus) []string {
	var out []string
	for _, s := range services {
		name := s.Cluster
		name = v1beta1.ClusterDisplay(name)
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return readmodel.ClusterLess(out[i], out[j]) })
	return out
}

func trackerCount(trackers map[string]int, app *v1beta1.Application) string {
	if trackers == nil {
		return "?"
	}
	return strconv.Itoa(trackers[app.Namespace+"/"+app.Name])
}

func notReadyReason(app *v1beta1.Application) string {
	c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
	switch {
	case c == nil:
		return "-"
	case c.Status == metav1.ConditionTrue:
		return ""
	}
	return c.Reason
}

// trackersPerApp counts the resource trackers of every Application by
// their labels. Trackers are cluster-scoped: a user who may not list them
// gets nil, shown as "?".
func trackersPerApp(ctx context.Context, hub client.Client) map[string]int {
	var list v1beta1.ResourceTrackerList
	if err := hub.List(ctx, &list); err != nil {
		return nil
	}
	out := map[string]int{}
	for _, rt := range list.Items {
		out[rt.Labels[v1beta1.LabelAppNamespace]+"/"+rt.Labels[v1beta1.LabelAppName]]++
	}
	return out
}
