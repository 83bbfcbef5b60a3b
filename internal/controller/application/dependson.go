package application

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// unhealthyDependency returns the first of deps (the dependencies of the
// entry e) this cluster's pass has applied that is not healthy by its
// definition's health policy, with a message saying why (": ready 0/2"),
// or "" when all are. A dependency with no object in this cluster (and,
// in a workflow run step by step, in e's step) is not judged here. Health
// is evaluated once per pass, component and step (memo), over the live
// objects this pass applied; an object it did not read (watch mode found
// it unchanged) is read with c.
func (r *Reconciler) unhealthyDependency(ctx context.Context, s *scope, p *clusterShare, c client.Client, entries []v1beta1.ManagedResource,
	e v1beta1.ManagedResource, deps []string, memo map[string]*componentHealth) (string, string) {
	step := s.healthStep(e)
	for _, d := range deps {
		k := healthKey(d, e.Cluster, step)
		h, ok := memo[k]
		if !ok {
			h = r.dependencyHealth(ctx, s, p, c, entries, d, step)
			memo[k] = h
		}
		if h != nil && !h.Healthy {
			why := ""
			if h.Message != "" {
				why = ": " + h.Message
			}
			return d, why
		}
	}
	return "", ""
}

// dependencyHealth evaluates one component from its objects of one step
// in one cluster; nil when it has none there.
func (r *Reconciler) dependencyHealth(ctx context.Context, s *scope, p *clusterShare, c client.Client, entries []v1beta1.ManagedResource, name, step string) *componentHealth {
	i := slices.IndexFunc(s.app.Spec.Components, func(c v1beta1.ApplicationComponent) bool { return c.Name == name })
	if i < 0 {
		return nil
	}
	var mine []v1beta1.ManagedResource
	var live []*unstructured.Unstructured
	for _, e := range entries {
		if e.Component != name || e.Deleted || e.Data == nil || s.gatedEntry(e) || s.healthStep(e) != step {
			continue
		}
		obj := p.keep.live[tracker.KeyOf(e)]
		if obj == nil {
			// Not read in this pass: read it now (nil when it is gone).
			got, err := getLive(ctx, c, e)
			if err != nil && !apierrors.IsNotFound(err) {
				return &componentHealth{Health: render.Health{Message: err.Error()}}
			}
			obj = got
		}
		mine = append(mine, e)
		live = append(live, obj)
	}
	manifests := componentManifests(mine, name)
	if len(manifests) == 0 || len(manifests) != len(live) {
		return nil
	}
	defs, err := r.resolveDefinitions(ctx, s.app)
	if err != nil {
		return &componentHealth{Health: render.Health{Message: err.Error()}}
	}
	key := healthKey(name, mine[0].Cluster, step)
	pending := func(trait string) (bool, string) { return s.pendingTrait(defs, key, trait) }
	h, err := r.healthOf(s, defs, s.app.Spec.Components[i], r.healthContext(s), manifests, live, pending)
	if err != nil {
		// No evaluator: the dependency is not known healthy; it waits.
		return &componentHealth{Health: render.Health{Message: err.Error()}}
	}
	return &h
}

// inDependencyOrder orders the entries of several trackers so that each
// component's objects come after those of the components it depends on
// (deps, from the Application's spec); otherwise components keep the order
// in which they first appear, and entries of one component their recorded
// order, except that Namespaces and CustomResourceDefinitions go first
// (the rest of the component may live in them). A cycle is broken where
// it is first entered, as when the version was rendered.
func inDependencyOrder(entries []v1beta1.ManagedResource, deps map[string][]string) []v1beta1.ManagedResource {
	present := map[string]bool{}
	var names []string
	for _, e := range entries {
		if !present[e.Component] {
			present[e.Component] = true
			names = append(names, e.Component)
		}
	}
	rank := make(map[string]int, len(names))
	visiting := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if _, done := rank[name]; done || visiting[name] {
			return
		}
		visiting[name] = true
		for _, d := range deps[name] {
			if present[d] {
				visit(d)
			}
		}
		visiting[name] = false
		rank[name] = len(rank)
	}
	for _, n := range names {
		visit(n)
	}
	container := func(e v1beta1.ManagedResource) int {
		if kindClass(e.Kind) == lastClass {
			return 0
		}
		return 1
	}
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b v1beta1.ManagedResource) int {
		if ra, rb := rank[a.Component], rank[b.Component]; ra != rb {
			return ra - rb
		}
		return container(a) - container(b)
	})
	return out
}

// dependencies maps each component to the components it depends on.
func dependencies(app *v1beta1.Application) map[string][]string {
	out := make(map[string][]string, len(app.Spec.Components))
	for _, c := range app.Spec.Components {
		out[c.Name] = c.DependsOn
	}
	return out
}

func failedDependency(deps []string, failed map[string]bool) string {
	for _, d := range deps {
		if failed[d] {
			return d
		}
	}
	return ""
}

func appendOnce(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}
