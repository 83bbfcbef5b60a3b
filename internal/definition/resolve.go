package definition

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

// Resolver finds the definitions an Application uses: each in the
// Application's namespace, then in SystemNamespace. A pinned type
// (webservice@v2) is read from the DefinitionRevision it names
// (webservice-v2), found the same way; for an Application annotated
// app.oam.dev/autoUpdate: "true", from the newest revision in its range
// (NewestInRange: webservice@v1.2 reads webservice-v1.2.5).
type Resolver struct {
	Reader          client.Reader
	SystemNamespace string
	// NoRevisions leaves pinned types unresolved: definition revisions
	// are turned off, and render refuses them saying so.
	NoRevisions bool
	// NoCopy reads the cache's own objects, for a caller that only looks
	// at them (a fingerprint, health evaluation) and never changes them.
	NoCopy bool
}

// Resolve returns the definition of every component, trait and policy
// type app uses, keyed by type as the Application spells it. A type found
// nowhere is absent.
func Resolve(ctx context.Context, c client.Reader, app *v1beta1.Application, systemNamespace string) (render.Definitions, error) {
	return Resolver{Reader: c, SystemNamespace: systemNamespace}.Resolve(ctx, app)
}

// ResolveSteps returns the WorkflowStepDefinition of every step type app's
// workflow names (see Resolver.Steps).
func ResolveSteps(ctx context.Context, c client.Reader, app *v1beta1.Application, systemNamespace string) (map[string]*v1beta1.WorkflowStepDefinition, error) {
	return Resolver{Reader: c, SystemNamespace: systemNamespace}.Steps(ctx, app)
}

// Resolve returns the definition of every component, trait and policy
// type app uses, keyed by type as the Application spells it (pinned types
// included). A type found nowhere is absent.
func (r Resolver) Resolve(ctx context.Context, app *v1beta1.Application) (render.Definitions, error) {
	defs := render.Definitions{
		Components:  map[string]*v1beta1.ComponentDefinition{},
		Traits:      map[string]*v1beta1.TraitDefinition{},
		Policies:    map[string]*v1beta1.PolicyDefinition{},
		NoRevisions: r.NoRevisions,
	}
	l := r.lookup(app)
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

// Steps returns the WorkflowStepDefinition of every step and sub-step type
// app's workflow names, by type. Native step types
// (v1beta1.IsNativeWorkflowStep: deploy, suspend, step-group, ...) are not
// looked up: they keep their built-in behaviour even when a definition of
// that name is installed. A type found nowhere is absent from the map.
func (r Resolver) Steps(ctx context.Context, app *v1beta1.Application) (map[string]*v1beta1.WorkflowStepDefinition, error) {
	steps := map[string]*v1beta1.WorkflowStepDefinition{}
	if app.Spec.Workflow == nil {
		return steps, nil
	}
	l := r.lookup(app)
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

// Fingerprint identifies the definitions app renders with now (each
// type's object and generation, or its absence): it changes when one of
// them is edited, created or deleted; for a pinned type, whose revision
// does not change, only when its range (autoUpdate) resolves to another
// revision.
func (r Resolver) Fingerprint(ctx context.Context, app *v1beta1.Application) (string, error) {
	r.NoCopy = true
	defs, err := r.Resolve(ctx, app)
	if err != nil {
		return "", err
	}
	steps, err := r.Steps(ctx, app)
	if err != nil {
		return "", err
	}
	var parts []string
	add := func(kind, typ string, obj client.Object) {
		id := "-"
		if obj != nil {
			id = string(obj.GetUID()) + "/" + strconv.FormatInt(obj.GetGeneration(), 10)
		}
		parts = append(parts, kind+"/"+typ+"="+id)
	}
	for t, d := range defs.Components {
		add("c", t, nilIfNil(d))
	}
	for t, d := range defs.Traits {
		add("t", t, nilIfNil(d))
	}
	for t, d := range defs.Policies {
		add("p", t, nilIfNil(d))
	}
	for t, d := range steps {
		add("s", t, nilIfNil(d))
	}
	sort.Strings(parts)
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

func nilIfNil[T any, PT interface {
	*T
	client.Object
}](d PT) client.Object {
	if d == nil {
		return nil
	}
	return d
}

func (r Resolver) lookup(app *v1beta1.Application) lookup {
	l := lookup{Resolver: r, namespaces: []string{app.Namespace, r.SystemNamespace},
		autoUpdate: app.Annotations[v1beta1.AnnotationAutoUpdate] == "true"}
	if app.Namespace == r.SystemNamespace {
		l.namespaces = l.namespaces[:1]
	}
	return l
}

type lookup struct {
	Resolver
	namespaces []string
	// autoUpdate resolves a pinned type to the newest revision in its
	// range (NewestInRange), as KubeVela does for an Application
	// annotated app.oam.dev/autoUpdate: "true".
	autoUpdate bool
}

func (l lookup) get(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	if l.NoCopy {
		return l.Reader.Get(ctx, key, obj, client.UnsafeDisableDeepCopy)
	}
	return l.Reader.Get(ctx, key, obj)
}

// find adds the definition of type typ to into, unless it is there
// already or exists in none of the namespaces. A pinned type is read from
// its DefinitionRevision.
func find[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, l lookup, typ string, into map[string]PT) error {
	if _, ok := into[typ]; ok {
		return nil
	}
	if name, revName, pinned := Pin(typ); pinned {
		if l.NoRevisions || CheckPin(typ) != nil {
			return nil
		}
		for _, ns := range l.namespaces {
			rev, err := l.revision(ctx, ns, name, revName, TypeOf(PT(new(T))))
			if err != nil {
				return err
			}
			if rev == nil {
				continue
			}
			if d := FromRevision[T, PT](rev, typ); d != nil {
				into[typ] = d
				return nil
			}
		}
		return nil
	}
	for _, ns := range l.namespaces {
		obj := PT(new(T))
		err := l.get(ctx, client.ObjectKey{Namespace: ns, Name: typ}, obj)
		if err == nil {
			into[typ] = obj
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading definition %s/%s: %w", ns, typ, err)
		}
	}
	return nil
}

// revision reads the DefinitionRevision revName of definition name (of
// kind t) in ns, nil when there is none. For an autoUpdate Application it
// is the newest in the pinned range (NewestInRange), read from the
// definition's revisions.
func (l lookup) revision(ctx context.Context, ns, name, revName string, t v1beta1.DefinitionType) (*v1beta1.DefinitionRevision, error) {
	if !l.autoUpdate {
		rev := &v1beta1.DefinitionRevision{}
		err := l.get(ctx, client.ObjectKey{Namespace: ns, Name: revName}, rev)
		switch {
		case err == nil:
			return rev, nil
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			return nil, nil
		}
		return nil, fmt.Errorf("reading definition revision %s/%s: %w", ns, revName, err)
	}
	var list v1beta1.DefinitionRevisionList
	opts := []client.ListOption{client.InNamespace(ns), client.MatchingLabels{NameLabel(t): name}}
	if l.NoCopy {
		opts = append(opts, client.UnsafeDisableDeepCopy)
	}
	if err := l.Reader.List(ctx, &list, opts...); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing the revisions of definition %s/%s: %w", ns, name, err)
	}
	return NewestInRange(list.Items, t, name, revName), nil
}
