package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/definition"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/sandbox"
)

// RenderOptions are the inputs of `steward render`.
type RenderOptions struct {
	// DefinitionPaths are definition files or directories (offline).
	DefinitionPaths []string
	// AppFile is the Application manifest.
	AppFile string
	// ClusterVersion is the Kubernetes version definitions see as
	// context.clusterVersion, like "v1.30"; empty means unknown offline
	// and the hub's version when connected.
	ClusterVersion string
	// Clusters are the clusters an offline render assumes registered, as
	// NAME or NAME=KEY=VALUE,... (see ParseClusters); local always is.
	Clusters []string
	// Namespace is where an Application that names none goes when
	// connected ("default" offline).
	Namespace string
	// DefinitionNamespace is the system definition namespace searched
	// after the Application's when connected (default vela-system).
	DefinitionNamespace string
	// ClusterNamespace holds the cluster Secrets (default vela-system).
	ClusterNamespace string
	// Out receives the rendered objects.
	Out io.Writer
	// Budget bounds every CUE evaluation and the render, as the
	// controller's flags of the same names do.
	Budget sandbox.Budget
}

// Render renders an Application offline, with definitions from files,
// through the same code path as the controller: override policies shape
// the components and topology policies place them on the clusters of
// o.Clusters (local when none is given). It writes the objects as YAML
// documents: per placement, per component its workload, then its
// auxiliary objects in render order; each marked with its cluster when any
// goes elsewhere than the hub.
func Render(o RenderOptions) error {
	if len(o.DefinitionPaths) == 0 {
		return fmt.Errorf("no definitions given: pass -d with a definitions file or directory")
	}
	if o.AppFile == "" {
		return fmt.Errorf("no application given: pass -f with an Application file")
	}
	cv, err := ParseClusterVersion(o.ClusterVersion)
	if err != nil {
		return err
	}
	clusters, err := ParseClusters(o.Clusters)
	if err != nil {
		return err
	}
	defs, err := LoadDefinitions(o.DefinitionPaths...)
	if err != nil {
		return err
	}
	app, err := LoadApplication(o.AppFile)
	if err != nil {
		return err
	}
	objs, err := renderPlaced(app, placeInput{
		clusters:    clusters,
		definitions: func(*v1beta1.Application) (render.Definitions, error) { return defs, nil },
		context:     render.AppContext{ClusterVersion: cv},
		actions:     chartActions(context.Background(), nil, cv.GitVersion),
		budget:      o.Budget,
	})
	if err != nil && delivery.UsesTopology(app) {
		return fmt.Errorf("%w (offline, the registered clusters are local and those of --assume-cluster)", err)
	}
	if err != nil {
		return err
	}
	if delivery.UsesTopology(app) {
		if _, err := fmt.Fprintf(o.Out, "# clusters assumed registered (--assume-cluster): %s\n", describeClusters(clusters)); err != nil {
			return err
		}
	}
	return WritePlaced(o.Out, objs)
}

// RenderLive renders an Application the way the controller on the hub
// would: with the definitions it resolves (the Application's namespace,
// then the system namespace), the clusters registered on the hub, the
// generation the file would get and the hub's version.
func RenderLive(ctx context.Context, cfg *rest.Config, hub client.Client, o RenderOptions) error {
	if o.AppFile == "" {
		return fmt.Errorf("no application given: pass -f with an Application file")
	}
	if len(o.Clusters) > 0 {
		return fmt.Errorf("--assume-cluster is for offline rendering (with -d): connected, the clusters registered on the hub are used")
	}
	app, err := loadApplicationIn(o.AppFile, appNamespace(o.Namespace))
	if err != nil {
		return err
	}
	clients, err := newClusterClients(cfg, hub, o.ClusterNamespace)
	if err != nil {
		return err
	}
	live, err := liveApplication(ctx, hub, app)
	if err != nil {
		return fmt.Errorf("%w (without -d, render reads definitions and clusters from the cluster; pass -d DEFINITIONS to render offline)", err)
	}
	gen, err := nextGeneration(live, app)
	if err != nil {
		return err
	}
	cv, err := ParseClusterVersion(o.ClusterVersion)
	if err != nil {
		return err
	}
	if cv == (render.ClusterVersion{}) {
		cv = delivery.ClusterVersion(cfg)
	}
	objs, err := renderConnected(ctx, clients, app, appContext(app, gen, cv), o.DefinitionNamespace, o.Budget)
	if err != nil {
		return err
	}
	return WritePlaced(o.Out, objs)
}

// renderConnected renders app with the hub's definitions and clusters.
func renderConnected(ctx context.Context, clients *clusterClients, app *v1beta1.Application, actx render.AppContext, definitionNamespace string, budget sandbox.Budget) ([]PlacedObject, error) {
	if definitionNamespace == "" {
		definitionNamespace = cluster.DefaultNamespace
	}
	clusters, err := clients.registered(ctx, app)
	if err != nil {
		return nil, err
	}
	return renderPlaced(app, placeInput{
		clusters: clusters,
		definitions: func(shaped *v1beta1.Application) (render.Definitions, error) {
			return definition.Resolve(ctx, clients.hub, shaped, definitionNamespace)
		},
		context:    actx,
		namespaced: namespacedBy(ctx, clients),
		actions:    chartActions(ctx, clients.hub, actx.ClusterVersion.GitVersion),
		budget:     budget,
	})
}

// liveApplication reads the Application of the same name from the hub;
// nil when there is none yet.
func liveApplication(ctx context.Context, hub client.Reader, app *v1beta1.Application) (*v1beta1.Application, error) {
	live := &v1beta1.Application{}
	err := hub.Get(ctx, client.ObjectKeyFromObject(app), live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return live, nil
}

// WritePlaced writes objects as `---`-separated YAML documents, each
// preceded by a `# cluster: NAME` comment when any object goes to a
// cluster other than the hub.
func WritePlaced(w io.Writer, objs []PlacedObject) error {
	marked := false
	for _, o := range objs {
		marked = marked || o.Cluster != ""
	}
	for i, o := range objs {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if marked {
			if _, err := fmt.Fprintf(w, "# cluster: %s\n", v1beta1.ClusterDisplay(o.Cluster)); err != nil {
				return err
			}
		}
		if err := WriteObjects(w, []*unstructured.Unstructured{o.Object}); err != nil {
			return err
		}
	}
	return nil
}

// describeClusters lists clusters for the offline header:
// "local, eu-1 {env=prod}".
func describeClusters(clusters []cluster.Cluster) string {
	parts := []string{v1beta1.ClusterLocal}
	for _, c := range clusters {
		if v1beta1.IsLocalCluster(c.Name) {
			continue
		}
		s := c.Name
		if len(c.Labels) > 0 {
			s += " {" + formatLabels(c.Labels) + "}"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// Objects flattens a render result in output order.
func Objects(res *render.Result) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, c := range res.Components {
		if c.Workload != nil {
			out = append(out, c.Workload)
		}
		for _, a := range c.Auxiliaries {
			out = append(out, a.Object)
		}
	}
	return out
}

// WriteObjects writes objects as `---`-separated YAML documents.
func WriteObjects(w io.Writer, objs []*unstructured.Unstructured) error {
	for i, obj := range objs {
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// ParseClusterVersion reads "v1.30", "1.30" or "v1.30.2" into a
// render.ClusterVersion; empty is unknown.
func ParseClusterVersion(s string) (render.ClusterVersion, error) {
	if s == "" {
		return render.ClusterVersion{}, nil
	}
	v, err := version.ParseGeneric(s)
	if err != nil {
		return render.ClusterVersion{}, fmt.Errorf("cluster version %q: want vMAJOR.MINOR, like v1.30", s)
	}
	git := s
	if !strings.HasPrefix(git, "v") {
		git = "v" + git
	}
	return render.ClusterVersion{Major: strconv.FormatUint(uint64(v.Major()), 10), Minor: strconv.FormatUint(uint64(v.Minor()), 10), GitVersion: git}, nil
}

// appNamespace is where an Application file that names no namespace goes.
func appNamespace(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
