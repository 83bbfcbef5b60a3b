package controller

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// entriesOf turns a render result into tracker entries, components in
// dependency order, each object carrying the ownership labels. Objects a
// garbage-collect rule keeps for the Application's lifetime (onAppDelete,
// never) go to the root tracker; never and read-only objects are marked
// skipGC so that Steward never deletes them.
func entriesOf(app *v1beta1.Application, placed []placedResult, rules *policy.Rules, namespaced scopeFunc) (versioned, root []v1beta1.ManagedResource, err error) {
	types := componentTypes(app)
	seen := map[tracker.Key]string{}
	for _, pr := range placed {
		v, rt, err := placedEntries(app, pr, rules, namespaced, types, seen)
		if err != nil {
			return nil, nil, err
		}
		versioned, root = append(versioned, v...), append(root, rt...)
	}
	return versioned, root, nil
}

// placedResult is the render of one placement.
type placedResult struct {
	cluster   string
	namespace string
	result    *render.Result
}

func placedEntries(app *v1beta1.Application, pr placedResult, rules *policy.Rules, namespaced scopeFunc,
	types map[string]string, seen map[tracker.Key]string) (versioned, root []v1beta1.ManagedResource, err error) {
	for _, comp := range orderByDependencies(pr.result.Components) {
		objs := make([]*unstructured.Unstructured, 0, len(comp.Auxiliaries)+1)
		traits := make([]string, 0, cap(objs))
		if comp.Workload != nil {
			objs = append(objs, comp.Workload)
			traits = append(traits, "")
		}
		for _, aux := range comp.Auxiliaries {
			objs = append(objs, aux.Object)
			traits = append(traits, aux.Trait)
		}
		for i, obj := range objs {
			obj = obj.DeepCopy()
			isNamespaced, err := namespaced(pr.cluster, obj)
			if err != nil {
				return nil, nil, &scopeError{fmt.Errorf("%s: %w", describeSource(comp.Name, traits[i]), err)}
			}
			switch {
			case !isNamespaced:
				obj.SetNamespace("")
			case obj.GetNamespace() == "":
				obj.SetNamespace(pr.namespace)
			}
			labels := obj.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[v1beta1.LabelAppName] = app.Name
			labels[v1beta1.LabelAppNamespace] = app.Namespace
			labels[v1beta1.LabelAppComponent] = comp.Name
			obj.SetLabels(labels)
			e, err := tracker.Entry(pr.cluster, comp.Name, traits[i], obj)
			if err != nil {
				return nil, nil, fmt.Errorf("component %q: %w", comp.Name, err)
			}
			key := tracker.KeyOf(e)
			by := describeSource(comp.Name, traits[i])
			if pr.cluster != "" {
				by += fmt.Sprintf(" in cluster %q", pr.cluster)
			}
			if first, dup := seen[key]; dup {
				return nil, nil, fmt.Errorf("%s renders %s, which %s renders too; each object must come from one place", by, key, first)
			}
			seen[key] = by
			res := resourceOf(e, types)
			strategy := rules.GCStrategy(res)
			e.SkipGC = strategy == policy.Never || rules.ReadOnly(res)
			if strategy == policy.OnAppUpdate {
				versioned = append(versioned, e)
			} else {
				root = append(root, e)
			}
		}
	}
	return versioned, root, nil
}

// componentTypes maps component names to their types.
func componentTypes(app *v1beta1.Application) map[string]string {
	out := make(map[string]string, len(app.Spec.Components))
	for _, c := range app.Spec.Components {
		out[c.Name] = c.Type
	}
	return out
}

// resourceOf describes an entry for policy selectors.
func resourceOf(e v1beta1.ManagedResource, types map[string]string) policy.Resource {
	return policy.Resource{Component: e.Component, ComponentType: types[e.Component], Trait: e.Trait, Kind: e.Kind, Name: e.Name}
}

// scopeFunc says whether an object's kind is namespaced in the cluster
// it goes to.
type scopeFunc func(cluster string, obj *unstructured.Unstructured) (bool, error)

// namespacedIn returns the scopeFunc of a pass. The scope of a kind
// decides the object's key in the trackers, so it is never guessed: a kind
// of a Kubernetes API group (no dot in the group, or a *.k8s.io group) has
// the same scope in every cluster and comes from the hub's discovery;
// any other kind comes from the discovery of the cluster the object goes
// to (its client's RESTMapper, cached). A kind that cluster does not serve
// is an error with reason KindNotFound, and nothing is recorded until it
// is served.
func (r *ApplicationReconciler) namespacedIn(ctx context.Context) scopeFunc {
	return func(clusterName string, obj *unstructured.Unstructured) (bool, error) {
		gvk := obj.GroupVersionKind()
		mapper := r.Mapper
		if !builtinGroup(gvk.Group) {
			c, err := r.Clusters.GetClient(ctx, clusterName)
			if err != nil {
				return false, &reasonError{reason: v1beta1.ReasonClusterUnreachable, err: err}
			}
			mapper = c.RESTMapper()
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			where := "the cluster"
			if !cluster.IsLocal(clusterName) {
				where = fmt.Sprintf("cluster %q", clusterName)
			}
			return false, &reasonError{reason: v1beta1.ReasonKindNotFound,
				err: fmt.Errorf("kind %s %q is not served by %s: install the CustomResourceDefinition that serves the kind (%w)", gvk.Kind, gvk.GroupVersion(), where, err)}
		}
		if err != nil {
			err = fmt.Errorf("finding the scope of kind %s %q: %w", gvk.Kind, gvk.GroupVersion(), err)
			if isUnreachable(err) {
				err = &reasonError{reason: v1beta1.ReasonClusterUnreachable, err: err}
			}
			return false, err
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
}

// scopeError is a failure to learn a kind's scope: a kind not served yet,
// or a cluster not reachable. Either may pass by itself, so the pass is
// retried with back-off.
type scopeError struct{ err error }

func (e *scopeError) Error() string { return e.err.Error() }
func (e *scopeError) Unwrap() error { return e.err }

// builtinGroup reports API groups only Kubernetes itself serves: a
// CustomResourceDefinition's group needs a dot, and *.k8s.io groups are
// reserved.
func builtinGroup(group string) bool {
	return !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

// orderByDependencies returns components so that each comes after the
// components it depends on; otherwise the declared order is kept. A cycle
// keeps the declared order for the components in it.
func orderByDependencies(comps []render.Component) []render.Component {
	done := make(map[string]bool, len(comps))
	byName := make(map[string]render.Component, len(comps))
	for _, c := range comps {
		byName[c.Name] = c
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
				visit(d)
			}
		}
		visiting[c.Name] = false
		done[c.Name] = true
		out = append(out, c)
	}
	for _, c := range comps {
		visit(c)
	}
	return out
}

// revisionName is the name of the revision being rendered, as KubeVela
// names it: "<app>-v<generation>", or "<app>-<publishVersion>".
func revisionName(app *v1beta1.Application, gen int64) string {
	if pv := app.Annotations[v1beta1.AnnotationPublishVersion]; pv != "" {
		return app.Name + "-" + pv
	}
	return fmt.Sprintf("%s-v%d", app.Name, gen)
}

// describeSource names where an object comes from, for messages.
func describeSource(component, trait string) string {
	if trait == "" {
		return fmt.Sprintf("component %q", component)
	}
	return fmt.Sprintf("component %q trait %q", component, trait)
}
