package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// loadTrackers finds the Application's trackers: root, the current
// versioned one and the older ones.
func (r *ApplicationReconciler) loadTrackers(ctx context.Context, s *scope) error {
	all, err := r.Trackers.List(ctx, tracker.RefOf(s.app))
	if err != nil {
		s.setRetry(err)
		return err
	}
	var versioned []v1beta1.ResourceTracker
	for i := range all {
		rt := all[i]
		switch rt.Spec.Type {
		case v1beta1.ResourceTrackerTypeRoot:
			s.root = &rt
		case v1beta1.ResourceTrackerTypeVersioned:
			versioned = append(versioned, rt)
		}
	}
	// The newest tracker of this Application (same UID) is current; every
	// other one, including those of an earlier Application with the same
	// name, is older.
	for i := len(versioned) - 1; i >= 0; i-- {
		if versioned[i].Labels[v1beta1.LabelAppUID] == string(s.app.UID) {
			s.current = &versioned[i]
			s.older = append(append(s.older, versioned[:i]...), versioned[i+1:]...)
			return nil
		}
	}
	s.older = versioned
	return nil
}

// renderAndRecord renders the Application's generation when its tracker
// does not exist yet and records every object before anything is applied.
// A render failure leaves the earlier version in place and kept.
func (r *ApplicationReconciler) renderAndRecord(ctx context.Context, s *scope) error {
	gen := s.app.Generation
	if s.current != nil && s.current.Spec.ApplicationGeneration == gen &&
		s.current.Name == tracker.Name(s.app.Name, s.app.Namespace, tracker.Versioned(gen)) {
		return nil
	}
	defs, err := r.resolveDefinitions(ctx, s.app)
	if err != nil {
		s.setRetry(err)
		return err
	}
	res, err := r.Renderer.Render(s.app, defs, render.AppContext{
		AppRevision:    revisionName(s.app.Name, gen),
		AppRevisionNum: gen,
		PublishVersion: s.app.Annotations[v1beta1.AnnotationPublishVersion],
		ClusterVersion: r.ClusterVersion,
	})
	if err != nil {
		s.renderErr = err
		return nil
	}
	entries, err := entriesOf(s.app, res, r.namespaced)
	if err != nil {
		s.renderErr = err
		return nil
	}
	rt, err := r.Trackers.Record(ctx, tracker.RefOf(s.app), tracker.Versioned(gen), gen, entries)
	if err != nil {
		s.recordErr = err
		s.setRetry(err)
		return nil
	}
	if s.current != nil && s.current.Name != rt.Name {
		s.older = append(s.older, *s.current)
	}
	s.current = rt
	s.fresh = true
	return nil
}

// resolveDefinitions finds the definition of every component and trait
// type: in the Application's namespace first, then the system namespace. A
// type with no definition is left out; render reports it.
func (r *ApplicationReconciler) resolveDefinitions(ctx context.Context, app *v1beta1.Application) (render.Definitions, error) {
	defs := render.Definitions{
		Components: map[string]*v1beta1.ComponentDefinition{},
		Traits:     map[string]*v1beta1.TraitDefinition{},
		Policies:   map[string]*v1beta1.PolicyDefinition{},
	}
	for _, comp := range app.Spec.Components {
		if _, ok := defs.Components[comp.Type]; !ok {
			d := &v1beta1.ComponentDefinition{}
			if found, err := r.lookup(ctx, app.Namespace, comp.Type, d); err != nil {
				return defs, err
			} else if found {
				defs.Components[comp.Type] = d
			}
		}
		for _, t := range comp.Traits {
			if _, ok := defs.Traits[t.Type]; ok {
				continue
			}
			d := &v1beta1.TraitDefinition{}
			if found, err := r.lookup(ctx, app.Namespace, t.Type, d); err != nil {
				return defs, err
			} else if found {
				defs.Traits[t.Type] = d
			}
		}
	}
	for _, p := range app.Spec.Policies {
		if _, ok := defs.Policies[p.Type]; ok {
			continue
		}
		d := &v1beta1.PolicyDefinition{}
		if found, err := r.lookup(ctx, app.Namespace, p.Type, d); err != nil {
			return defs, err
		} else if found {
			defs.Policies[p.Type] = d
		}
	}
	return defs, nil
}

func (r *ApplicationReconciler) lookup(ctx context.Context, namespace, name string, obj client.Object) (bool, error) {
	for _, ns := range []string{namespace, r.Options.SystemDefinitionNS} {
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if err == nil {
			return true, nil
		}
		if !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("reading definition %s/%s: %w", ns, name, err)
		}
	}
	return false, nil
}

// entriesOf turns a render result into tracker entries, components in
// dependency order, each object carrying the ownership labels.
func entriesOf(app *v1beta1.Application, res *render.Result, namespaced func(*unstructured.Unstructured) bool) ([]v1beta1.ManagedResource, error) {
	var entries []v1beta1.ManagedResource
	for _, comp := range orderByDependencies(res.Components) {
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
			switch {
			case !namespaced(obj):
				obj.SetNamespace("")
			case obj.GetNamespace() == "":
				obj.SetNamespace(app.Namespace)
			}
			labels := obj.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[v1beta1.LabelAppName] = app.Name
			labels[v1beta1.LabelAppNamespace] = app.Namespace
			labels[v1beta1.LabelAppComponent] = comp.Name
			obj.SetLabels(labels)
			e, err := tracker.Entry("", comp.Name, traits[i], obj)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", comp.Name, err)
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// namespaced reports whether obj's kind is namespaced, from the RESTMapper
// (discovery, cached). A kind the cluster does not serve yet counts as
// namespaced; applying it fails with a clear condition anyway.
func (r *ApplicationReconciler) namespaced(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return true
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace
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

// revisionName is the name of an application revision, as KubeVela names
// it: "<app>-v<generation>".
func revisionName(app string, gen int64) string { return fmt.Sprintf("%s-v%d", app, gen) }
