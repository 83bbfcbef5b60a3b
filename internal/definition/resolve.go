package definition

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

// Resolve returns the definition of every component, trait and policy type
// the Application uses, each looked up in the Application's namespace,
// then in systemNamespace.
func Resolve(ctx context.Context, c client.Reader, app *v1beta1.Application, systemNamespace string) (render.Definitions, error) {
	defs := render.Definitions{
		Components: map[string]*v1beta1.ComponentDefinition{},
		Traits:     map[string]*v1beta1.TraitDefinition{},
		Policies:   map[string]*v1beta1.PolicyDefinition{},
	}
	l := lookup{c: c, namespaces: []string{app.Namespace, systemNamespace}}
	for _, comp := range app.Spec.Components {
		if err := find(ctx, l, comp.Type, defs.Components); err != nil {
			return defs, err
		}
		for _, t := range comp.Traits {
			if err := find(ctx, l, t.Type, defs.Traits); err != nil {
				return defs, err
			}
		}
	}
	for _, p := range app.Spec.Policies {
		if err := find(ctx, l, p.Type, defs.Policies); err != nil {
			return defs, err
		}
	}
	return defs, nil
}

// ResolveSteps returns the WorkflowStepDefinition of every step and
// sub-step type the Application's workflow names, by type, each looked up
// in the Application's namespace, then in systemNamespace. Native step
// types (v1beta1.IsNativeWorkflowStep: deploy, suspend, step-group, ...)
// are not looked up: they keep their built-in behaviour even when a
// definition of that name is installed. A type found in neither namespace
// is absent from the map.
func ResolveSteps(ctx context.Context, c client.Reader, app *v1beta1.Application, systemNamespace string) (map[string]*v1beta1.WorkflowStepDefinition, error) {
	steps := map[string]*v1beta1.WorkflowStepDefinition{}
	if app.Spec.Workflow == nil {
		return steps, nil
	}
	l := lookup{c: c, namespaces: []string{app.Namespace, systemNamespace}}
	if app.Namespace == systemNamespace {
		l.namespaces = l.namespaces[:1]
	}
	add := func(t string) error {
		if t == "" || v1beta1.IsNativeWorkflowStep(t) {
			return nil
		}
		return find(ctx, l, t, steps)
	}
	for _, s := range app.Spec.Workflow.Steps {
		if err := add(s.Type); err != nil {
			return steps, err
		}
		for _, sub := range s.SubSteps {
			if err := add(sub.Type); err != nil {
				return steps, err
			}
		}
	}
	return steps, nil
}

type lookup struct {
	c          client.Reader
	namespaces []string
}

// find adds the definition named name to into, unless it is there already
// or exists in none of the namespaces.
func find[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, l lookup, name string, into map[string]PT) error {
	if _, ok := into[name]; ok {
		return nil
	}
	for _, ns := range l.namespaces {
		obj := PT(new(T))
		err := l.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if err == nil {
			into[name] = obj
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading definition %s/%s: %w", ns, name, err)
		}
	}
	return nil
}
