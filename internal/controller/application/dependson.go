package application

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
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
func (r *Reconciler) unhealthyDependency(ctx context.Context, s *facts.Pass, p *facts.ClusterShare, c client.Client, entries []v1beta1.ManagedResource,
	e v1beta1.ManagedResource, deps []string, memo map[string]*facts.ComponentHealth) (string, string) {
	step := s.HealthStep(e)
	for _, d := range deps {
		k := facts.HealthKey(d, e.Cluster, step)
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
func (r *Reconciler) dependencyHealth(ctx context.Context, s *facts.Pass, p *facts.ClusterShare, c client.Client, entries []v1beta1.ManagedResource, name, step string) *facts.ComponentHealth {
	i := slices.IndexFunc(s.App.Spec.Components, func(c v1beta1.ApplicationComponent) bool { return c.Name == name })
	if i < 0 {
		return nil
	}
	var mine []v1beta1.ManagedResource
	var live []*unstructured.Unstructured
	for _, e := range entries {
		if e.Component != name || e.Deleted || e.Data == nil || s.GatedEntry(e) || s.HealthStep(e) != step {
			continue
		}
		obj := p.Keep.Live[tracker.KeyOf(e)]
		if obj == nil {
			// Not read in this pass: read it now (nil when it is gone).
			got, err := getLive(ctx, c, e)
			if err != nil && !apierrors.IsNotFound(err) {
				return &facts.ComponentHealth{Health: render.Health{Message: err.Error()}}
			}
			obj = got
		}
		mine = append(mine, e)
		live = append(live, obj)
	}
	manifests := facts.ComponentManifests(mine, name)
	if len(manifests) == 0 || len(manifests) != len(live) {
		return nil
	}
	defs, err := r.resolveDefinitions(ctx, s.App)
	if err != nil {
		return &facts.ComponentHealth{Health: render.Health{Message: err.Error()}}
	}
	key := facts.HealthKey(name, mine[0].Cluster, step)
	pending := func(trait string) (bool, string) { return pendingTrait(s, defs, key, trait) }
	h, err := r.healthOf(s, defs, s.App.Spec.Components[i], r.healthContext(s), manifests, live, pending)
	if err != nil {
		// No evaluator: the dependency is not known healthy; it waits.
		return &facts.ComponentHealth{Health: render.Health{Message: err.Error()}}
	}
	return &h
}
