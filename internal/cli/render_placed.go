package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// PlacedObject is one object the controller would apply, and where: what
// `steward render` prints and `steward diff` compares with the cluster.
type PlacedObject struct {
	// Cluster is the target cluster, "" for the hub (tracker spelling).
	Cluster string
	// Component and Trait say which part of the Application rendered it;
	// Trait is empty for the component's own objects.
	Component string
	Trait     string
	Object    *unstructured.Unstructured
}

// Key identifies the object in its cluster, as trackers key it.
func (p PlacedObject) Key() tracker.Key {
	gvk := p.Object.GroupVersionKind()
	return tracker.Key{Cluster: p.Cluster, Group: gvk.Group, Kind: gvk.Kind, Namespace: p.Object.GetNamespace(), Name: p.Object.GetName()}
}

// placeInput is what rendering an Application as the controller does
// needs besides the Application.
type placeInput struct {
	// clusters are the registered clusters topology policies choose from
	// (local is always known).
	clusters []cluster.Cluster
	// definitions resolves the definitions of an Application whose
	// components the overrides of a deploy step have shaped.
	definitions func(app *v1beta1.Application) (render.Definitions, error)
	context     render.AppContext
	// namespaced says whether an object's kind is namespaced in the
	// cluster it goes to; nil keeps the namespace render gave (offline).
	namespaced func(cluster string, obj *unstructured.Unstructured) (bool, error)
}

// renderPlaced renders app the way the controller's render phase does:
// placement.Resolve turns its workflow, topology and override policies
// into deploy steps; each step's components get its overrides
// (Step.Components); each placement renders them with the Application's
// definitions, in the placement's namespace when the topology names one.
// Objects keep the Application's ownership labels (its own namespace, not
// the placement's) and lose the namespace of cluster-scoped kinds.
func renderPlaced(app *v1beta1.Application, in placeInput) ([]PlacedObject, error) {
	fail := func(err error) error {
		return fmt.Errorf("render application %s/%s: %w", app.Namespace, app.Name, err)
	}
	steps, err := placement.Resolve(app, in.clusters)
	if err != nil {
		return nil, fail(err)
	}
	renderer := render.NewRenderer()
	var out []PlacedObject
	seen := map[tracker.Key]bool{}
	for _, step := range steps {
		comps, err := step.Components(app)
		if err != nil {
			return nil, fail(err)
		}
		for _, p := range step.Placements {
			shaped := app.DeepCopy()
			shaped.Spec.Components = comps
			defs, err := in.definitions(shaped)
			if err != nil {
				return nil, err
			}
			if p.Namespace != "" {
				shaped.Namespace = p.Namespace
			}
			res, err := renderer.Render(shaped, defs, in.context)
			if err != nil {
				if p.Cluster != "" {
					err = fmt.Errorf("cluster %q: %w", p.Cluster, err)
				}
				return nil, fail(err)
			}
			objs, err := placedObjects(app, p, res, in.namespaced)
			if err != nil {
				return nil, fail(err)
			}
			for _, o := range objs {
				if seen[o.Key()] {
					return nil, fail(fmt.Errorf("%s is rendered twice; each object must come from one place", o.Key()))
				}
				seen[o.Key()] = true
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func placedObjects(app *v1beta1.Application, p placement.Placement, res *render.Result,
	namespaced func(string, *unstructured.Unstructured) (bool, error)) ([]PlacedObject, error) {
	var out []PlacedObject
	add := func(component, trait string, obj *unstructured.Unstructured) error {
		obj = obj.DeepCopy()
		if namespaced != nil {
			ok, err := namespaced(p.Cluster, obj)
			if err != nil {
				return fmt.Errorf("component %q: %w", component, err)
			}
			switch {
			case !ok:
				obj.SetNamespace("")
			case obj.GetNamespace() == "":
				obj.SetNamespace(app.Namespace)
			}
		}
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[v1beta1.LabelAppName] = app.Name
		labels[v1beta1.LabelAppNamespace] = app.Namespace
		labels[v1beta1.LabelAppComponent] = component
		obj.SetLabels(labels)
		out = append(out, PlacedObject{Cluster: p.Cluster, Component: component, Trait: trait, Object: obj})
		return nil
	}
	for _, c := range res.Components {
		if c.Workload != nil {
			if err := add(c.Name, "", c.Workload); err != nil {
				return nil, err
			}
		}
		for _, a := range c.Auxiliaries {
			if err := add(c.Name, a.Trait, a.Object); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// usesTopology reports whether the Application places components with a
// topology policy, listed or inline in a deploy step (the controller's
// test for when the cluster registry matters).
func usesTopology(app *v1beta1.Application) bool {
	for _, p := range app.Spec.Policies {
		if p.Type == placement.TypeTopology {
			return true
		}
	}
	if app.Spec.Workflow != nil {
		for _, st := range app.Spec.Workflow.Steps {
			if st.Properties != nil && bytes.Contains(st.Properties.Raw, []byte(`"topology"`)) {
				return true
			}
		}
	}
	return false
}

// namespacedBy answers an object's scope as the controller does: a kind
// of a Kubernetes API group (no dot, or *.k8s.io) has the same scope
// everywhere and is looked up on the hub; any other kind in the cluster
// it goes to.
func namespacedBy(ctx context.Context, clients *clusterClients) func(string, *unstructured.Unstructured) (bool, error) {
	return func(name string, obj *unstructured.Unstructured) (bool, error) {
		gvk := obj.GroupVersionKind()
		c := clients.hub
		if strings.Contains(gvk.Group, ".") && !strings.HasSuffix(gvk.Group, ".k8s.io") {
			var err error
			if c, err = clients.get(ctx, name); err != nil {
				return false, err
			}
		}
		m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, fmt.Errorf("finding the scope of kind %s %q in cluster %s: %w", gvk.Kind, gvk.GroupVersion(), displayCluster(name), err)
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
}

// loadApplicationIn reads the Application of a file; one that names no
// namespace goes to namespace, as `kubectl apply -n` would put it.
func loadApplicationIn(path, namespace string) (*v1beta1.Application, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read application: %w", err)
	}
	docs, err := splitYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, doc := range docs {
		app := &v1beta1.Application{}
		if err := yaml.Unmarshal(doc, app); err != nil {
			return nil, fmt.Errorf("%s: decode application: %w", path, err)
		}
		if app.Kind != "Application" {
			continue
		}
		if app.Namespace == "" {
			app.Namespace = namespace
		}
		return app, nil
	}
	return nil, fmt.Errorf("%s: no Application found", path)
}

// nextGeneration is the generation app would get when applied over live
// (nil when it does not exist yet): the same as live's when the spec is
// unchanged, else one more, as the API server counts.
func nextGeneration(live, app *v1beta1.Application) (int64, error) {
	if live == nil {
		return 1, nil
	}
	same, err := sameJSON(live.Spec, app.Spec)
	if err != nil {
		return 0, err
	}
	if same {
		return live.Generation, nil
	}
	return live.Generation + 1, nil
}

func sameJSON(a, b any) (bool, error) {
	var va, vb any
	for _, x := range []struct {
		in  any
		out *any
	}{{a, &va}, {b, &vb}} {
		raw, err := json.Marshal(x.in)
		if err != nil {
			return false, fmt.Errorf("encoding application spec: %w", err)
		}
		if err := json.Unmarshal(raw, x.out); err != nil {
			return false, fmt.Errorf("decoding application spec: %w", err)
		}
	}
	return reflect.DeepEqual(va, vb), nil
}

// appContext is the render context of app at generation gen, as the
// controller builds it.
func appContext(app *v1beta1.Application, gen int64, cv render.ClusterVersion) render.AppContext {
	pv := app.Annotations[v1beta1.AnnotationPublishVersion]
	return render.AppContext{AppRevision: revisionName(app.Name, pv, gen), AppRevisionNum: gen, PublishVersion: pv, ClusterVersion: cv}
}

// revisionName names a version as KubeVela does: "<app>-v<generation>",
// or "<app>-<publishVersion>".
func revisionName(app, publishVersion string, gen int64) string {
	if publishVersion != "" {
		return app + "-" + publishVersion
	}
	return fmt.Sprintf("%s-v%d", app, gen)
}

// serverVersion is the hub's version for context.clusterVersion, as the
// controller reads it; unknown when the server does not say.
func serverVersion(cfg *rest.Config) render.ClusterVersion {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return render.ClusterVersion{}
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return render.ClusterVersion{}
	}
	return render.ClusterVersion{Major: v.Major, Minor: v.Minor, GitVersion: v.GitVersion}
}

// displayCluster names a cluster for output: "local" for the hub.
func displayCluster(name string) string {
	if cluster.IsLocal(name) {
		return cluster.Local
	}
	return name
}

// ParseClusters reads --assume-cluster values, NAME or NAME=KEY=VALUE,KEY=VALUE,
// into the clusters an offline render assumes are registered.
func ParseClusters(specs []string) ([]cluster.Cluster, error) {
	out := []cluster.Cluster{}
	for _, s := range specs {
		name, labels, _ := strings.Cut(s, "=")
		if name == "" {
			return nil, fmt.Errorf("--assume-cluster %q: want NAME or NAME=KEY=VALUE,...", s)
		}
		c := cluster.Cluster{Name: name, Labels: map[string]string{}}
		if labels != "" {
			for _, kv := range strings.Split(labels, ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return nil, fmt.Errorf("--assume-cluster %q: label %q: want KEY=VALUE", s, kv)
				}
				c.Labels[k] = v
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// clusterClients reaches the hub and the registered clusters, for the
// commands that read what is live.
type clusterClients struct {
	hub client.Client
	m   *cluster.Manager
}

// newClusterClients serves hub for local and builds clients of the other
// clusters from their Secrets in secretsNamespace (default vela-system).
func newClusterClients(cfg *rest.Config, hub client.Client, secretsNamespace string) (*clusterClients, error) {
	m, err := cluster.NewManager(cfg, hub, cluster.ManagerOptions{
		Namespace:  secretsNamespace,
		Secrets:    hub,
		Registerer: prometheus.NewRegistry(),
		UserAgent:  "steward-cli",
	})
	if err != nil {
		return nil, err
	}
	return &clusterClients{hub: hub, m: m}, nil
}

func (c *clusterClients) get(ctx context.Context, name string) (client.Client, error) {
	return c.m.GetClient(ctx, name)
}

// registered lists the registered clusters when app has a topology
// policy; placement needs none otherwise.
func (c *clusterClients) registered(ctx context.Context, app *v1beta1.Application) ([]cluster.Cluster, error) {
	if !usesTopology(app) {
		return nil, nil
	}
	return c.m.Registry().List(ctx)
}
