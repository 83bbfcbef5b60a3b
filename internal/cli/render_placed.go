package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/sandbox"
	"github.com/steward-oam/steward/internal/workflow"
)

// PlacedObject is one object the controller would apply, and where: what
// `steward render` prints and `steward diff` compares with the cluster.
type PlacedObject = delivery.Object

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
	// actions carries out the provider actions (vela/helm) components ask
	// for; nil refuses them.
	actions func(string, *v1beta1.Application, *render.ActionsError) ([]cueeval.ActionResult, error)
	// budget bounds every CUE evaluation, as the controller's flags do;
	// zero is the controller's defaults.
	budget sandbox.Budget
}

// renderPlaced renders app the way the controller's render phase does,
// through the same code: placement.Resolve turns its workflow, topology
// and override policies into deploy steps, and delivery.Objects renders
// every placement of them.
func renderPlaced(app *v1beta1.Application, in placeInput) ([]PlacedObject, error) {
	fail := func(err error) error {
		return fmt.Errorf("render application %s/%s: %w", app.Namespace, app.Name, err)
	}
	steps, err := placement.Resolve(app, delivery.Placeable(in.clusters))
	if err != nil {
		return nil, fail(err)
	}
	budget := in.budget
	if budget.Evaluators == 0 {
		budget = sandbox.DefaultBudget()
	}
	renderer, pool, err := delivery.NewRenderer(budget, nil)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if wf := workflow.Of(app); workflow.Gated(wf) {
		flow, err := workflow.Steps(wf)
		if err == nil {
			flow.Use(pool)
			err = flow.CheckConditions()
		}
		if err != nil {
			return nil, fail(err)
		}
	}
	objs, err := delivery.Objects(app, steps, delivery.Input{
		Renderer: renderer, Definitions: in.definitions, Context: in.context, Namespaced: in.namespaced, Actions: in.actions})
	if errors.As(err, new(*delivery.DefinitionsError)) {
		return nil, err
	}
	if err != nil {
		return nil, fail(err)
	}
	return objs, nil
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
			return false, fmt.Errorf("finding the scope of kind %s %q in cluster %s: %w", gvk.Kind, gvk.GroupVersion(), v1beta1.ClusterDisplay(name), err)
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
	return render.AppContext{AppRevision: delivery.RevisionNameOf(app.Name, pv, gen), AppRevisionNum: gen, PublishVersion: pv, ClusterVersion: cv}
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
	if !delivery.UsesTopology(app) {
		return nil, nil
	}
	return c.m.Registry().List(ctx)
}
