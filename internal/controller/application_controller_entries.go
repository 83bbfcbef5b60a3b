package controller

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// entriesOf turns the objects a version delivers into tracker entries,
// in delivery order. Objects a garbage-collect rule keeps for the
// Application's lifetime (onAppDelete, never) go to the root tracker;
// never and read-only objects are marked skipGC so that Steward never
// deletes them.
func entriesOf(app *v1beta1.Application, objs []delivery.Object, rules *policy.Rules) (versioned, root []v1beta1.ManagedResource, err error) {
	types := componentTypes(app)
	gated := workflow.Gated(workflow.Of(app))
	for _, o := range objs {
		e, err := tracker.Entry(o.Cluster, o.Component, o.Trait, o.Object)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.Source(), err)
		}
		if gated {
			// Applied once the workflow reaches the step.
			e.Step = o.Step
		}
		res := resourceOf(e, types)
		strategy := rules.GCStrategy(res)
		e.SkipGC = strategy == policy.Never || rules.ReadOnly(res)
		if strategy == policy.OnAppUpdate {
			versioned = append(versioned, e)
		} else {
			root = append(root, e)
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
			if !v1beta1.IsLocalCluster(clusterName) {
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

// builtinGroup reports API groups only Kubernetes itself serves: a
// CustomResourceDefinition's group needs a dot, and *.k8s.io groups are
// reserved.
func builtinGroup(group string) bool {
	return !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

// describeSource names where an object comes from, for messages.
func describeSource(component, trait, step string) string {
	if component == "" && step != "" {
		return fmt.Sprintf("workflow step %q", step)
	}
	if trait == "" {
		return fmt.Sprintf("component %q", component)
	}
	return fmt.Sprintf("component %q trait %q", component, trait)
}
