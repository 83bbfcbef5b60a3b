package definition

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/definition"
)

// decisionLevel is the verbosity of decision logs: every revision
// written or dropped is one line at it, as every object write is in the
// Application reconciler.
const decisionLevel = 1

// IndexPinnedRevisions indexes Applications by the DefinitionRevisions
// they pin: "<DefinitionType>/<revision name>" (Component/webservice-v2).
const IndexPinnedRevisions = "steward.pinnedRevisions"

// IndexAutoUpdate indexes the Applications annotated app.oam.dev/autoUpdate
// by the definitions they use: "<DefinitionType>/<name>", a pinned type
// (webservice@v1.2) by its definition, whose new revisions may be in its
// range.
const IndexAutoUpdate = "steward.autoUpdateDefinitions"

// appTypes calls f with every definition type app names, and its kind.
func appTypes(app *v1beta1.Application, f func(t v1beta1.DefinitionType, typ string)) {
	for _, c := range app.Spec.Components {
		f(v1beta1.DefinitionTypeComponent, c.Type)
		for _, t := range c.Traits {
			f(v1beta1.DefinitionTypeTrait, t.Type)
		}
	}
	for _, p := range app.Spec.Policies {
		f(v1beta1.DefinitionTypePolicy, p.Type)
	}
	if app.Spec.Workflow != nil {
		for _, s := range app.Spec.Workflow.Steps {
			f(v1beta1.DefinitionTypeWorkflowStep, s.Type)
			for _, sub := range s.SubSteps {
				f(v1beta1.DefinitionTypeWorkflowStep, sub.Type)
			}
		}
	}
}

// PinnedRevisionKeys are an Application's IndexPinnedRevisions values.
func PinnedRevisionKeys(obj client.Object) []string {
	app, ok := obj.(*v1beta1.Application)
	if !ok {
		return nil
	}
	var out []string
	appTypes(app, func(t v1beta1.DefinitionType, typ string) {
		if _, rev, ok := definition.Pin(typ); ok {
			out = append(out, string(t)+"/"+rev)
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// AutoUpdateKeys are an Application's IndexAutoUpdate values.
func AutoUpdateKeys(obj client.Object) []string {
	app, ok := obj.(*v1beta1.Application)
	if !ok || app.Annotations[v1beta1.AnnotationAutoUpdate] != "true" {
		return nil
	}
	var out []string
	appTypes(app, func(t v1beta1.DefinitionType, typ string) {
		if name, _, _ := definition.Pin(typ); name != "" {
			out = append(out, string(t)+"/"+name)
		}
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// revisionKeeper writes a DefinitionRevision for every change of a
// definition's spec, prunes the history beyond the limit, and deletes the
// revisions of a deleted definition, never one an Application pins.
type revisionKeeper struct {
	client client.Client
	// apps lists Applications by IndexPinnedRevisions: the cache, or,
	// with sharding on (the cache holds one shard's), the API server.
	apps   client.Reader
	direct bool
	// systemNamespace's revisions serve Applications of every namespace.
	systemNamespace string
	limit           int
	events          recorder.EventRecorder
}

// revisionsOf lists the revisions of the definition named name of kind t
// in namespace ns, oldest first.
func (k *revisionKeeper) revisionsOf(ctx context.Context, t v1beta1.DefinitionType, ns, name string) ([]v1beta1.DefinitionRevision, error) {
	var list v1beta1.DefinitionRevisionList
	if err := k.client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{definition.NameLabel(t): name}); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b v1beta1.DefinitionRevision) int { return int(a.Spec.Revision - b.Spec.Revision) })
	return list.Items, nil
}

// ensure records def's spec in a revision unless its latest revision
// holds it already, prunes the history, and returns the revision that
// holds the spec. A named revision (spec.version or the
// definitionrevision.oam.dev/name annotation) that exists with another
// spec is never overwritten: the error says so.
func (k *revisionKeeper) ensure(ctx context.Context, def client.Object) (*v1beta1.Revision, error) {
	log := ctrl.LoggerFrom(ctx)
	t := definition.TypeOf(def)
	revs, err := k.revisionsOf(ctx, t, def.GetNamespace(), def.GetName())
	if err != nil {
		return nil, fmt.Errorf("listing the definition's revisions: %w", err)
	}
	hash := definition.SpecHash(def)
	named, err := definition.NamedRevision(def)
	if err != nil {
		return nil, &revisionError{err}
	}
	var holding *v1beta1.DefinitionRevision
	next := int64(1)
	for i := range revs {
		if revs[i].Spec.Revision >= next {
			next = revs[i].Spec.Revision + 1
		}
	}
	switch {
	case named != "":
		for i := range revs {
			if revs[i].Name == named {
				if revs[i].Spec.RevisionHash != hash {
					return nil, &revisionError{fmt.Errorf("DefinitionRevision %s exists and holds another spec (hash %s, this spec %s): a revision never changes; name a new revision (%s or spec.version) to record this spec",
						named, revs[i].Spec.RevisionHash, hash, v1beta1.AnnotationDefinitionRevisionName)}
				}
				holding = &revs[i]
			}
		}
	case len(revs) > 0 && revs[len(revs)-1].Spec.RevisionHash == hash:
		holding = &revs[len(revs)-1]
	}
	if holding == nil {
		name := named
		if name == "" {
			name = fmt.Sprintf("%s-v%d", def.GetName(), next)
		}
		rev := definition.Snapshot(def, name, next)
		if err := k.client.Create(ctx, rev); err != nil {
			if apierrors.IsAlreadyExists(err) {
				// Written by another pass or replica the cache has not
				// seen yet: looked at again once it has.
				return nil, fmt.Errorf("DefinitionRevision %s/%s exists already; checking it again: %w", rev.Namespace, rev.Name, err)
			}
			return nil, fmt.Errorf("creating DefinitionRevision %s/%s: %w", rev.Namespace, rev.Name, err)
		}
		log.V(decisionLevel).Info("Created a DefinitionRevision", "definitionRevision", rev.Name, "revision", next, "hash", hash)
		revs = append(revs, *rev)
		holding = rev
	}
	out := &v1beta1.Revision{Name: holding.Name, Revision: holding.Spec.Revision, RevisionHash: holding.Spec.RevisionHash}
	k.prune(ctx, def.GetNamespace(), revs, holding.Name)
	return out, nil
}

// prune deletes the oldest revisions while more than the limit are not
// pinned by an Application (KubeVela's rule: the limit counts the unused
// ones); the one holding the current spec and pinned ones always stay.
func (k *revisionKeeper) prune(ctx context.Context, ns string, revs []v1beta1.DefinitionRevision, current string) {
	if len(revs) <= k.limit {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	lookup, err := k.pins(ctx, ns)
	if err != nil {
		log.Error(err, "Kept the DefinitionRevisions: who pins them cannot be read")
		return
	}
	var candidates []*v1beta1.DefinitionRevision
	unpinned := 0
	for i := range revs {
		rev := &revs[i]
		pinned, err := lookup(rev)
		if err != nil {
			log.Error(err, "Kept the DefinitionRevisions: who pins them cannot be read", "definitionRevision", rev.Name)
			return
		}
		if pinned != "" {
			log.V(decisionLevel).Info("Kept a DefinitionRevision: an Application pins it", "definitionRevision", rev.Name, "application", pinned)
			continue
		}
		unpinned++
		if rev.Name != current {
			candidates = append(candidates, rev)
		}
	}
	for _, rev := range candidates {
		if unpinned <= k.limit {
			return
		}
		if err := k.client.Delete(ctx, rev, client.Preconditions{UID: &rev.UID}); client.IgnoreNotFound(err) != nil {
			log.Error(err, "Deleting an old DefinitionRevision failed", "definitionRevision", rev.Name)
			return
		}
		log.V(decisionLevel).Info("Deleted a DefinitionRevision beyond the history limit", "definitionRevision", rev.Name, "limit", k.limit)
		unpinned--
	}
}

// pinned returns an Application (namespace/name) that pins rev, or "".
// Revisions of the system namespace serve every namespace; others their
// own.
func (k *revisionKeeper) pinned(ctx context.Context, rev *v1beta1.DefinitionRevision) (string, error) {
	lookup, err := k.pins(ctx, rev.Namespace)
	if err != nil {
		return "", err
	}
	return lookup(rev)
}

// pins returns who pins a revision of namespace ns: through the cache's
// index, or, with sharding on (the cache holds one shard's Applications),
// from one list of the API server's made now.
func (k *revisionKeeper) pins(ctx context.Context, ns string) (func(*v1beta1.DefinitionRevision) (string, error), error) {
	scope := func(ns string) []client.ListOption {
		if ns != k.systemNamespace {
			return []client.ListOption{client.InNamespace(ns)}
		}
		return nil
	}
	find := func(apps []v1beta1.Application, key string) string {
		for i := range apps {
			if slices.Contains(PinnedRevisionKeys(&apps[i]), key) {
				return apps[i].Namespace + "/" + apps[i].Name
			}
		}
		return ""
	}
	if k.direct {
		var apps v1beta1.ApplicationList
		if err := k.apps.List(ctx, &apps, scope(ns)...); err != nil {
			return nil, err
		}
		return func(rev *v1beta1.DefinitionRevision) (string, error) {
			return find(apps.Items, string(rev.Spec.DefinitionType)+"/"+rev.Name), nil
		}, nil
	}
	return func(rev *v1beta1.DefinitionRevision) (string, error) {
		key := string(rev.Spec.DefinitionType) + "/" + rev.Name
		var apps v1beta1.ApplicationList
		opts := append(scope(rev.Namespace), client.MatchingFields{IndexPinnedRevisions: key}, client.UnsafeDisableDeepCopy)
		if err := k.apps.List(ctx, &apps, opts...); err != nil {
			return "", err
		}
		return find(apps.Items, key), nil
	}, nil
}

// forget deletes the revisions of a deleted definition that no
// Application pins; the others stay until none does (reconcileRevision).
func (k *revisionKeeper) forget(ctx context.Context, t v1beta1.DefinitionType, ns, name string) error {
	revs, err := k.revisionsOf(ctx, t, ns, name)
	if err != nil {
		return err
	}
	for i := range revs {
		if err := k.dropUnpinned(ctx, &revs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (k *revisionKeeper) dropUnpinned(ctx context.Context, rev *v1beta1.DefinitionRevision) error {
	pinned, err := k.pinned(ctx, rev)
	if err != nil {
		return err
	}
	if pinned != "" {
		ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Kept a DefinitionRevision of a deleted definition: an Application pins it", "definitionRevision", rev.Name, "application", pinned)
		return nil
	}
	if err := k.client.Delete(ctx, rev, client.Preconditions{UID: &rev.UID}); client.IgnoreNotFound(err) != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Deleted a DefinitionRevision of a deleted definition", "definitionRevision", rev.Name)
	return nil
}

// revisionError is a definition whose revision cannot be recorded as it
// stands (a named revision taken): the user's to fix, never retried.
type revisionError struct{ err error }

func (e *revisionError) Error() string { return e.err.Error() }
func (e *revisionError) Unwrap() error { return e.err }

// RevisionReconciler deletes a DefinitionRevision whose definition is gone
// once no Application pins it.
type RevisionReconciler struct {
	Client client.Client
	Keeper *revisionKeeper
}

// Reconcile looks at one revision.
func (r *RevisionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rev := &v1beta1.DefinitionRevision{}
	if err := r.Client.Get(ctx, req.NamespacedName, rev); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	name := rev.Labels[definition.NameLabel(rev.Spec.DefinitionType)]
	def := newDefinition(rev.Spec.DefinitionType)
	if name == "" || def == nil {
		return ctrl.Result{}, nil // not one of Steward's
	}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: rev.Namespace, Name: name}, def)
	if err == nil || !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Keeper.dropUnpinned(ctx, rev)
}

func newDefinition(t v1beta1.DefinitionType) client.Object {
	switch t {
	case v1beta1.DefinitionTypeComponent:
		return &v1beta1.ComponentDefinition{}
	case v1beta1.DefinitionTypeTrait:
		return &v1beta1.TraitDefinition{}
	case v1beta1.DefinitionTypePolicy:
		return &v1beta1.PolicyDefinition{}
	case v1beta1.DefinitionTypeWorkflowStep:
		return &v1beta1.WorkflowStepDefinition{}
	}
	return nil
}

// pinsToRevisions maps an Application to the revisions it pins, in its
// namespace and the system namespace: one it stops pinning, or that goes
// with it, may be the last pin of a deleted definition's revision.
func pinsToRevisions(systemNamespace string) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		var out []reconcile.Request
		for _, key := range PinnedRevisionKeys(obj) {
			_, name, _ := strings.Cut(key, "/")
			for _, ns := range []string{obj.GetNamespace(), systemNamespace} {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}})
			}
		}
		return out
	}
}

// revisionEvent reports a revision that cannot be recorded.
func (k *revisionKeeper) revisionEvent(def client.Object, err error) {
	if k.events != nil {
		k.events.Eventf(def, nil, corev1.EventTypeWarning, v1beta1.ReasonDefinitionRevisionFailed, "Record", "%s", err.Error())
	}
}
