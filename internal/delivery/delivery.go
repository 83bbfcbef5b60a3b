package delivery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// Object is one object a version delivers, and where.
type Object struct {
	// Cluster is the target cluster as placements name it, "" for the hub.
	Cluster string
	// Component and Trait say what rendered it; Trait is empty for a
	// component's own objects.
	Component string
	Trait     string
	// Policy names the policy whose template rendered the object
	// (render.RenderPolicies), delivered on the hub whatever the steps
	// place; Component is then the policy's name, as KubeVela labels it.
	Policy string
	// Step is the deploy step that delivers the object.
	Step   string
	Object *unstructured.Unstructured
}

// Key identifies the object in its cluster, as trackers key it.
func (o Object) Key() tracker.Key {
	gvk := o.Object.GroupVersionKind()
	return tracker.Key{Cluster: o.Cluster, Group: gvk.Group, Kind: gvk.Kind, Namespace: o.Object.GetNamespace(), Name: o.Object.GetName()}
}

// Source names what rendered the object, for messages.
func (o Object) Source() string {
	if o.Policy != "" {
		return fmt.Sprintf("policy %q", o.Policy)
	}
	if o.Component == "" && o.Step != "" {
		s := fmt.Sprintf("apply-object step %q", o.Step)
		if o.Cluster != "" {
			s += fmt.Sprintf(" in cluster %q", o.Cluster)
		}
		return s
	}
	s := fmt.Sprintf("component %q", o.Component)
	if o.Trait != "" {
		s += fmt.Sprintf(" trait %q", o.Trait)
	}
	if o.Cluster != "" {
		s += fmt.Sprintf(" in cluster %q", o.Cluster)
	}
	return s
}

// Input is what rendering needs besides the Application and its steps.
type Input struct {
	Renderer *render.Renderer
	// Definitions resolves the definitions of the Application as a step's
	// overrides shaped it.
	Definitions func(app *v1beta1.Application) (render.Definitions, error)
	// Context is the render context (revision, publishVersion, cluster
	// version), the same for every placement.
	Context render.AppContext
	// Namespaced says whether an object's kind is namespaced in the
	// cluster it goes to. Nil keeps the namespace the template gave
	// (offline rendering, where no cluster can say).
	Namespaced func(cluster string, obj *unstructured.Unstructured) (bool, error)
	// Actions carries out the provider actions a component's template asks
	// for before it renders (vela/helm's #Render: fetch the chart, read
	// valuesFrom), for the placement's cluster and the Application (as it
	// is, not as the placement shaped it: its own namespace). Nil refuses
	// such components.
	Actions func(cluster string, app *v1beta1.Application, need *render.ActionsError) ([]cueeval.ActionResult, error)
	// Charts, when set, is told of every component that rendered a Helm
	// chart, with the cluster it renders for, before its objects are
	// placed (a chart's CRDs are created then, so that its objects' kinds
	// are served); an error fails the render.
	Charts func(cluster string, c *render.Component) error
}

// maxActionRounds bounds how often one placement's render goes back for
// provider actions: once per component that asks for them, at most.
const maxActionRounds = 16

// PolicyError is a deploy step whose policies cannot be applied.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// DefinitionsError is a failure to read the definitions.
type DefinitionsError struct{ Err error }

func (e *DefinitionsError) Error() string { return e.Err.Error() }
func (e *DefinitionsError) Unwrap() error { return e.Err }

// ScopeError is a failure to learn a kind's scope: a kind not served yet,
// or a cluster not reachable. Either may pass by itself.
type ScopeError struct{ Err error }

func (e *ScopeError) Error() string { return e.Err.Error() }
func (e *ScopeError) Unwrap() error { return e.Err }

// Objects renders app once per placement of steps, each with its step's
// overrides and in the placement's namespace when it names one, and
// returns the objects in delivery order: placements in step order, and
// within one placement components after those they depend on. An object
// rendered twice is an error: each object must come from one place.
func Objects(app *v1beta1.Application, steps []placement.Step, in Input) ([]Object, error) {
	renderer := in.Renderer
	if renderer == nil {
		renderer = render.NewRenderer()
	}
	var out []Object
	seen := map[tracker.Key]string{}
	// Every placement's render counts toward the version's limits.
	var usage render.Usage
	// Policies rendering objects come first, as KubeVela applies them
	// before its workflow runs.
	pobjs, err := policyObjects(renderer, app, in, &usage)
	if err != nil {
		return nil, err
	}
	for _, o := range pobjs {
		seen[o.Key()] = o.Source()
	}
	out = append(out, pobjs...)
	for _, step := range steps {
		if step.Object != nil {
			// An apply-object step: its object, no component.
			for _, p := range step.Placements {
				o, err := placedObject(app, p, step, in.Namespaced)
				if err != nil {
					return nil, err
				}
				if first, dup := seen[o.Key()]; dup {
					return nil, fmt.Errorf("%s renders %s, which %s renders too; each object must come from one place", o.Source(), o.Key(), first)
				}
				seen[o.Key()] = o.Source()
				out = append(out, o)
			}
			continue
		}
		comps, err := step.Components(app)
		if err != nil {
			return nil, &PolicyError{err}
		}
		for _, p := range step.Placements {
			shaped := app.DeepCopy()
			shaped.Spec.Components = comps
			// Definitions come from the Application's namespace, wherever
			// its objects go.
			defs, err := in.Definitions(shaped)
			if err != nil {
				return nil, &DefinitionsError{err}
			}
			if p.Namespace != "" {
				shaped.Namespace = p.Namespace
			}
			res, err := renderWithActions(renderer, app, shaped, defs, p.Cluster, in, &usage)
			if err != nil {
				if p.Cluster != "" {
					err = fmt.Errorf("cluster %q: %w", p.Cluster, err)
				}
				return nil, err
			}
			if in.Charts != nil {
				for i := range res.Components {
					if len(res.Components[i].Charts) == 0 {
						continue
					}
					if err := in.Charts(p.Cluster, &res.Components[i]); err != nil {
						return nil, err
					}
				}
			}
			objs, err := placed(app, p.Cluster, shaped.Namespace, res, in.Namespaced)
			if err != nil {
				return nil, err
			}
			for i := range objs {
				objs[i].Step = step.Name
			}
			for _, o := range objs {
				if first, dup := seen[o.Key()]; dup {
					return nil, fmt.Errorf("%s renders %s, which %s renders too; each object must come from one place", o.Source(), o.Key(), first)
				}
				seen[o.Key()] = o.Source()
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

// policyObjects renders the objects app's policies deliver
// (render.RenderPolicies), on the hub in the Application's namespace,
// applied whatever step the workflow is at.
func policyObjects(renderer *render.Renderer, app *v1beta1.Application, in Input, usage *render.Usage) ([]Object, error) {
	rendering := false
	for _, p := range app.Spec.Policies {
		rendering = rendering || !policy.Native(p.Type)
	}
	if !rendering {
		return nil, nil
	}
	defs, err := in.Definitions(app)
	if err != nil {
		return nil, &DefinitionsError{err}
	}
	pobjs, err := renderer.RenderPolicies(app, defs, in.Context, usage)
	if err != nil {
		return nil, err
	}
	out := make([]Object, 0, len(pobjs))
	for _, p := range pobjs {
		o, err := settle(app, Object{Component: p.Policy, Policy: p.Policy, Object: p.Object}, app.Namespace, in.Namespaced)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// renderWithActions renders a placement, carrying out the provider
// actions its components ask for and rendering again with their results.
func renderWithActions(renderer *render.Renderer, app, shaped *v1beta1.Application, defs render.Definitions, cluster string,
	in Input, usage *render.Usage) (*render.Result, error) {
	actx := in.Context
	for range maxActionRounds {
		res, err := renderer.RenderCounted(shaped, defs, actx, usage)
		var need *render.ActionsError
		if !errors.As(err, &need) || in.Actions == nil {
			return res, err
		}
		results, err := in.Actions(cluster, app, need)
		if err != nil {
			return nil, err
		}
		actx.Actions = maps.Clone(actx.Actions)
		if actx.Actions == nil {
			actx.Actions = map[string][]cueeval.ActionResult{}
		}
		actx.Actions[need.Component] = results
	}
	return nil, fmt.Errorf("the components' provider actions did not settle after %d rounds", maxActionRounds)
}

// placedObject is an apply-object step's object in its placement, with
// the ownership labels; without a namespace, a namespaced object goes to
// the placement's namespace or the Application's.
func placedObject(app *v1beta1.Application, p placement.Placement, step placement.Step,
	namespaced func(string, *unstructured.Unstructured) (bool, error)) (Object, error) {
	namespace := p.Namespace
	if namespace == "" {
		namespace = app.Namespace
	}
	return settle(app, Object{Cluster: p.Cluster, Step: step.Name, Object: step.Object.DeepCopy()}, namespace, namespaced)
}

// Settle is settle for an object a workflow step applies at run time
// (cluster, step): its namespace and the Application's ownership labels,
// exactly as the objects rendered for the Application get them.
func Settle(app *v1beta1.Application, cluster, step string, obj *unstructured.Unstructured,
	namespaced func(string, *unstructured.Unstructured) (bool, error)) (*unstructured.Unstructured, error) {
	o, err := settle(app, Object{Cluster: cluster, Step: step, Object: obj}, app.Namespace, namespaced)
	if err != nil {
		return nil, err
	}
	return o.Object, nil
}

// settle gives an object its namespace (none for a cluster-scoped kind,
// namespace when it has none) and the ownership labels: the Application's
// own namespace, not the placement's, and its component when it has one.
// Offline (namespaced nil), an object without a namespace gets namespace,
// as the renderer gives the objects of components.
func settle(app *v1beta1.Application, o Object, namespace string,
	namespaced func(string, *unstructured.Unstructured) (bool, error)) (Object, error) {
	ok := true
	if namespaced != nil {
		var err error
		if ok, err = namespaced(o.Cluster, o.Object); err != nil {
			return Object{}, &ScopeError{fmt.Errorf("%s: %w", o.Source(), err)}
		}
	}
	switch {
	case !ok:
		o.Object.SetNamespace("")
	case o.Object.GetNamespace() == "":
		o.Object.SetNamespace(namespace)
	}
	labels := o.Object.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1beta1.LabelAppName] = app.Name
	labels[v1beta1.LabelAppNamespace] = app.Namespace
	if o.Component != "" {
		labels[v1beta1.LabelAppComponent] = o.Component
	}
	o.Object.SetLabels(labels)
	return o, nil
}

// placed turns the render of one placement into objects carrying the
// ownership labels, namespaced in the placement's namespace, cluster-scoped
// kinds without one.
func placed(app *v1beta1.Application, clusterName, namespace string, res *render.Result,
	namespaced func(string, *unstructured.Unstructured) (bool, error)) ([]Object, error) {
	var out []Object
	add := func(component, trait string, obj *unstructured.Unstructured) error {
		o, err := settle(app, Object{Cluster: clusterName, Component: component, Trait: trait, Object: obj.DeepCopy()}, namespace, namespaced)
		if err != nil {
			return err
		}
		out = append(out, o)
		return nil
	}
	for _, c := range orderByDependencies(res.Components) {
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

// orderByDependencies returns components so that each comes after the
// components it depends on; otherwise the declared order is kept. A cycle
// keeps the declared order for the components in it.
//
// The copies of a replicated component share its name: they go together,
// in their order, where the component would.
func orderByDependencies(comps []render.Component) []render.Component {
	done := make(map[string]bool, len(comps))
	byName := make(map[string][]render.Component, len(comps))
	for _, c := range comps {
		byName[c.Name] = append(byName[c.Name], c)
	}
	out := make([]render.Component, 0, len(comps))
	visiting := map[string]bool{}
	var visit func(c render.Component)
	visit = func(c render.Component) {
		if done[c.Name] || visiting[c.Name] {
			return
		}
		visiting[c.Name] = true
		for _, dep := range c.DependsOn {
			if d, ok := byName[dep]; ok {
				visit(d[0])
			}
		}
		visiting[c.Name] = false
		done[c.Name] = true
		out = append(out, byName[c.Name]...)
	}
	for _, c := range comps {
		visit(c)
	}
	return out
}

// UsesTopology reports whether the Application places components with a
// topology policy, listed or inline in a deploy step, or names a cluster
// in an apply-component or apply-object step: only then does the cluster
// registry matter.
func UsesTopology(app *v1beta1.Application) bool {
	for _, p := range app.Spec.Policies {
		if p.Type == v1beta1.PolicyTypeTopology {
			return true
		}
	}
	if app.Spec.Workflow != nil {
		for _, st := range app.Spec.Workflow.Steps {
			if st.Properties == nil {
				continue
			}
			if bytes.Contains(st.Properties.Raw, []byte(`"topology"`)) {
				return true
			}
			if st.Type == v1beta1.WorkflowStepTypeApplyComponent || st.Type == v1beta1.WorkflowStepTypeApplyObject {
				var props struct {
					Cluster string `json:"cluster"`
				}
				if json.Unmarshal(st.Properties.Raw, &props) == nil && props.Cluster != "" && !v1beta1.IsLocalCluster(props.Cluster) {
					return true
				}
			}
		}
	}
	return false
}

// PlacementsOf renders the placements of steps as "cluster/namespace"
// items, sorted and comma-separated: the value of
// tracker.AnnotationPlacements.
func PlacementsOf(steps []placement.Step) string {
	var items []string
	for _, st := range steps {
		for _, p := range st.Placements {
			items = append(items, p.String())
		}
	}
	slices.Sort(items)
	return strings.Join(slices.Compact(items), ",")
}

// ParallelismOf returns the smallest parallelism the deploy steps set,
// 0 when none does: how many clusters of the version are worked on at
// once, at most.
func ParallelismOf(steps []placement.Step) int {
	out := 0
	for _, st := range steps {
		if st.ParallelismSet && (out == 0 || st.Parallelism < out) {
			out = st.Parallelism
		}
	}
	return out
}

// RevisionName names a version as KubeVela does: "<app>-v<generation>",
// or "<app>-<publishVersion>".
func RevisionName(app *v1beta1.Application, gen int64) string {
	return RevisionNameOf(app.Name, app.Annotations[v1beta1.AnnotationPublishVersion], gen)
}

// RevisionNameOf is RevisionName from the parts.
func RevisionNameOf(app, publishVersion string, gen int64) string {
	if publishVersion != "" {
		return app + "-" + publishVersion
	}
	return fmt.Sprintf("%s-v%d", app, gen)
}

// ClusterVersion reads a cluster's version for context.clusterVersion;
// unknown (empty) when the server does not answer.
func ClusterVersion(cfg *rest.Config) render.ClusterVersion {
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
