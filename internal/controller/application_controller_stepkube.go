package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/tracker"
)

// kubeActions are the vela/kube actions of one step: reads, lists and
// deletes go straight to the cluster as the Application, held to its
// boundary and to the bound on what an action returns; applies and
// patches are recorded in the version's tracker, under the step, before
// keepState applies them.
func (r *ApplicationReconciler) kubeActions(s *scope, step string) provider.Registry {
	return provider.Registry{
		"kube.read": func(ctx context.Context, env *provider.Env, raw json.RawMessage) (json.RawMessage, error) {
			var p struct {
				Cluster string                     `json:"cluster"`
				Value   *unstructured.Unstructured `json:"value"`
			}
			if err := json.Unmarshal(raw, &p); err != nil || p.Value == nil {
				return nil, fmt.Errorf("parameters: want value, an object to read (%v)", err)
			}
			c, err := s.clients.GetClient(ctx, p.Cluster)
			if err != nil {
				return nil, err
			}
			obj := p.Value
			if err := r.scoped(ctx, s, p.Cluster, obj, "default"); err != nil {
				return nil, err
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
					return json.Marshal(map[string]any{"value": p.Value.Object, "err": err.Error()})
				}
				return nil, err
			}
			return json.Marshal(map[string]any{"value": obj.Object})
		},
		"kube.list": func(ctx context.Context, env *provider.Env, raw json.RawMessage) (json.RawMessage, error) {
			var p struct {
				Cluster  string `json:"cluster"`
				Resource struct {
					APIVersion string `json:"apiVersion"`
					Kind       string `json:"kind"`
				} `json:"resource"`
				Filter struct {
					Namespace      string            `json:"namespace"`
					MatchingLabels map[string]string `json:"matchingLabels"`
				} `json:"filter"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("parameters: %w", err)
			}
			c, err := s.clients.GetClient(ctx, p.Cluster)
			if err != nil {
				return nil, err
			}
			kind := &unstructured.Unstructured{}
			kind.SetAPIVersion(p.Resource.APIVersion)
			kind.SetKind(p.Resource.Kind)
			if err := r.listBoundary(ctx, s, p.Cluster, kind, p.Filter.Namespace); err != nil {
				return nil, err
			}
			newList := listOf(p.Resource.APIVersion, p.Resource.Kind)
			out := newList().(*unstructured.UnstructuredList)
			budget := provider.NewResultBudget(env, fmt.Sprintf("the list of %s in %q", p.Resource.Kind, p.Filter.Namespace))
			err = provider.ListPages(ctx, c, newList, func(l client.ObjectList) error {
				for _, item := range l.(*unstructured.UnstructuredList).Items {
					if err := budget.Add(item.Object); err != nil {
						return err
					}
					out.Items = append(out.Items, item)
				}
				return nil
			}, client.InNamespace(p.Filter.Namespace), client.MatchingLabels(p.Filter.MatchingLabels))
			var tooLarge *provider.TooLargeError
			if errors.As(err, &tooLarge) {
				return nil, err
			}
			if err != nil {
				return json.Marshal(map[string]any{"values": out.UnstructuredContent(), "err": err.Error()})
			}
			return json.Marshal(map[string]any{"values": out.UnstructuredContent()})
		},
		"kube.delete": func(ctx context.Context, env *provider.Env, raw json.RawMessage) (json.RawMessage, error) {
			var p struct {
				Cluster string                     `json:"cluster"`
				Value   *unstructured.Unstructured `json:"value"`
				Filter  *struct {
					Namespace      string            `json:"namespace"`
					MatchingLabels map[string]string `json:"matchingLabels"`
				} `json:"filter"`
			}
			if err := json.Unmarshal(raw, &p); err != nil || p.Value == nil {
				return nil, fmt.Errorf("parameters: want value, the object (or kind) to delete (%v)", err)
			}
			c, err := s.clients.GetClient(ctx, p.Cluster)
			if err != nil {
				return nil, err
			}
			obj := p.Value
			if p.Filter != nil {
				if err := r.listBoundary(ctx, s, p.Cluster, obj, p.Filter.Namespace); err != nil {
					return nil, err
				}
				return nil, r.deleteMatching(ctx, s, env, c, p.Cluster, obj, p.Filter.Namespace, p.Filter.MatchingLabels)
			}
			if err := r.scoped(ctx, s, p.Cluster, obj, "default"); err != nil {
				return nil, err
			}
			if err := r.deleteOne(ctx, s, env, c, p.Cluster, obj); err != nil {
				var refused *provider.RefusedError
				if errors.As(err, &refused) {
					return nil, err
				}
				return json.Marshal(map[string]any{"value": obj.Object, "err": err.Error()})
			}
			return nil, nil
		},
		"kube.apply": func(ctx context.Context, env *provider.Env, raw json.RawMessage) (json.RawMessage, error) {
			var p struct {
				Cluster string          `json:"cluster"`
				Value   map[string]any  `json:"value"`
				Patch   json.RawMessage `json:"patch"`
			}
			if err := json.Unmarshal(raw, &p); err != nil || p.Value == nil {
				return nil, fmt.Errorf("parameters: want value, the object to apply (%v)", err)
			}
			obj := &unstructured.Unstructured{Object: p.Value}
			if len(p.Patch) > 0 && string(p.Patch) != "null" {
				patched, err := mergeInto(obj.Object, p.Patch)
				if err != nil {
					return nil, fmt.Errorf("patch: %w", err)
				}
				obj.Object = patched
			}
			live, err := r.applyFromStep(ctx, s, step, p.Cluster, obj)
			if err != nil {
				return nil, err
			}
			return json.Marshal(map[string]any{"value": live.Object})
		},
		"kube.apply-in-parallel": func(ctx context.Context, env *provider.Env, raw json.RawMessage) (json.RawMessage, error) {
			var p struct {
				Cluster string           `json:"cluster"`
				Value   []map[string]any `json:"value"`
			}
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("parameters: %w", err)
			}
			var out []any
			var pending error
			for _, v := range p.Value {
				live, err := r.applyFromStep(ctx, s, step, p.Cluster, &unstructured.Unstructured{Object: v})
				if errors.Is(err, provider.ErrPending) {
					pending = err
					continue
				}
				if err != nil {
					return nil, err
				}
				out = append(out, live.Object)
			}
			if pending != nil {
				return nil, pending
			}
			return json.Marshal(map[string]any{"value": out})
		},
		"kube.patch": func(ctx context.Context, env *provider.Env, raw json.RawMessage) (json.RawMessage, error) {
			var p struct {
				Cluster string                     `json:"cluster"`
				Value   *unstructured.Unstructured `json:"value"`
				Patch   json.RawMessage            `json:"patch"`
			}
			if err := json.Unmarshal(raw, &p); err != nil || p.Value == nil {
				return nil, fmt.Errorf("parameters: want value and patch (%v)", err)
			}
			c, err := s.clients.GetClient(ctx, p.Cluster)
			if err != nil {
				return nil, err
			}
			obj := p.Value
			if err := r.scoped(ctx, s, p.Cluster, obj, s.app.Namespace); err != nil {
				return nil, err
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return nil, err
			}
			patched, err := mergeInto(cleanLive(obj.Object), p.Patch)
			if err != nil {
				return nil, fmt.Errorf("patch: %w", err)
			}
			live, err := r.applyFromStep(ctx, s, step, p.Cluster, &unstructured.Unstructured{Object: patched})
			if err != nil {
				return nil, err
			}
			return json.Marshal(map[string]any{"result": live.Object})
		},
	}
}

// applyFromStep records an object a step applies in the version's
// tracker, under the step; keepState applies it (in the next pass, as
// the step is reached). Once it is recorded as it is now and applied, it
// returns the live object; until then provider.ErrPending.
func (r *ApplicationReconciler) applyFromStep(ctx context.Context, s *scope, step, cluster string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if s.current == nil {
		return nil, errors.New("no version is recorded to record the object in")
	}
	if obj.GetName() == "" || obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, errors.New("the object to apply needs apiVersion, kind and metadata.name")
	}
	// Its namespace (the Application's when it has none, none for a
	// cluster-scoped kind) and ownership labels, as rendered objects.
	obj, err := delivery.Settle(s.app, cluster, step, obj, r.namespacedIn(ctx))
	if err != nil {
		return nil, err
	}
	e, err := tracker.Entry(cluster, "", "", obj)
	if err != nil {
		return nil, err
	}
	e.Step = step
	key := tracker.KeyOf(e)
	entries, err := tracker.Entries(s.current)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(entries, func(x v1beta1.ManagedResource) bool { return tracker.KeyOf(x) == key })
	if i >= 0 && !entries[i].Deleted && entries[i].Step == step && sameManifest(entries[i], obj) {
		// Recorded as it is: keepState applied it in this pass.
		for _, f := range s.keep.failures {
			if f.Key == key {
				return nil, fmt.Errorf("applying %s: %v", key, f.Err)
			}
		}
		c, err := s.clients.GetClient(ctx, cluster)
		if err != nil {
			return nil, err
		}
		live := obj.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%w: %s is recorded and not applied yet", provider.ErrPending, key)
			}
			return nil, err
		}
		return live, nil
	}
	if i >= 0 && entries[i].Step != step && !entries[i].Deleted {
		return nil, provider.Refuse("%s is applied by %s of this Application too: each object comes from one place", key, entrySource(entries[i]))
	}
	if s.root != nil {
		rootEntries, err := tracker.Entries(s.root)
		if err != nil {
			return nil, err
		}
		for _, x := range rootEntries {
			if tracker.KeyOf(x) == key && !x.Deleted {
				return nil, provider.Refuse("%s is applied by %s of this Application too: each object comes from one place", key, entrySource(x))
			}
		}
	}
	if i >= 0 {
		entries[i] = e
	} else {
		entries = append(entries, e)
	}
	if err := r.Trackers.Save(ctx, s.current, entries, 0); err != nil {
		return nil, err
	}
	decisionLog(ctx, key, decisionLevel).Info("Recorded: a workflow step applies it; it is applied next", "step", step)
	s.stepRecorded = true
	return nil, fmt.Errorf("%w: %s recorded, to be applied", provider.ErrPending, key)
}

// tracked reports whether an object is recorded in one of the
// Application's trackers.
func (r *ApplicationReconciler) tracked(s *scope, cluster string, obj *unstructured.Unstructured) bool {
	want := tracker.KeyOf(v1beta1.ManagedResource{ClusterObjectReference: v1beta1.ClusterObjectReference{
		Cluster: cluster, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}})
	for _, rt := range []*v1beta1.ResourceTracker{s.current, s.root} {
		if rt == nil {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			return true
		}
		for _, e := range entries {
			if !e.Deleted && tracker.KeyOf(e) == want {
				return true
			}
		}
	}
	return false
}

// mergeInto merges a JSON merge patch into obj.
func mergeInto(obj map[string]any, patch json.RawMessage) (map[string]any, error) {
	base, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	merged, err := jsonpatch.MergePatch(base, patch)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(merged, &out)
}

// cleanLive drops what the API server owns from a live object read to be
// patched and applied again.
func cleanLive(obj map[string]any) map[string]any {
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range []string{"resourceVersion", "uid", "generation", "creationTimestamp", "managedFields", "selfLink"} {
			delete(md, k)
		}
	}
	return obj
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sameManifest reports whether an entry records obj as it is.
func sameManifest(e v1beta1.ManagedResource, obj *unstructured.Unstructured) bool {
	recorded, err := tracker.Manifest(e)
	if err != nil || recorded == nil {
		return false
	}
	a, _ := json.Marshal(recorded.Object)
	b, _ := json.Marshal(obj.Object)
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return equality.Semantic.DeepEqual(x, y)
}

// entrySource names what records an entry, for messages.
func entrySource(e v1beta1.ManagedResource) string {
	switch {
	case e.Component != "":
		return fmt.Sprintf("component %q", e.Component)
	case e.Step != "":
		return fmt.Sprintf("step %q", e.Step)
	}
	return "the Application"
}

// scoped gives an object a step names its namespace (none for a
// cluster-scoped kind, def when it has none) and holds it to the
// Application's boundary, as rendered objects are.
func (r *ApplicationReconciler) scoped(ctx context.Context, s *scope, cluster string, obj *unstructured.Unstructured, def string) error {
	namespaced, err := r.namespacedIn(ctx)(cluster, obj)
	if err != nil {
		return err
	}
	switch {
	case !namespaced:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		obj.SetNamespace(def)
	}
	return provider.Refused(r.boundary(s).CheckObject(provider.Describe(obj), namespaced, obj.GetNamespace()))
}

// listBoundary holds a step's list (or delete by filter) of a kind in a
// namespace to the Application's boundary: "" lists every namespace,
// which a confined Application may not.
func (r *ApplicationReconciler) listBoundary(ctx context.Context, s *scope, cluster string, kind *unstructured.Unstructured, namespace string) error {
	namespaced, err := r.namespacedIn(ctx)(cluster, kind)
	if err != nil {
		return err
	}
	b := r.boundary(s)
	what := fmt.Sprintf("the %s objects", kind.GetKind())
	switch {
	case !namespaced:
		return provider.Refused(b.CheckClusterScoped(what))
	case namespace == "" && b.Confined:
		return provider.Refused(b.CheckNamespace(what+" of every namespace", "*"))
	}
	return provider.Refused(b.CheckNamespace(what, namespace))
}

// listOf makes empty lists of a kind, one per page a list reads.
func listOf(apiVersion, kind string) func() client.ObjectList {
	return func() client.ObjectList {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(apiVersion)
		list.SetKind(kind + "List")
		return list
	}
}

// deleteOne deletes one object a step names, as the Application: never
// one this Application manages (StateKeep would only re-create it), nor
// one another Application owns.
func (r *ApplicationReconciler) deleteOne(ctx context.Context, s *scope, env *provider.Env, c client.Client, cluster string, obj *unstructured.Unstructured) error {
	desc := fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if r.tracked(s, cluster, obj) {
		return provider.Refuse("%s is managed by this Application: a step does not delete it (remove it from the Application instead)", desc)
	}
	live := obj.DeepCopy()
	if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if owner := foreignOwner(s.app, live); owner != "" {
		return provider.Refuse("%s belongs to Application %s: a step does not delete it", desc, owner)
	}
	err := c.Delete(ctx, live, client.Preconditions{UID: uidPtr(live.GetUID())}, client.PropagationPolicy("Background"))
	if apierrors.IsNotFound(err) {
		err = nil
	}
	env.Log.V(decisionLevel).Info("Deleted by a workflow step", "object", desc, "cluster", v1beta1.ClusterKey(cluster), "error", errString(err))
	return err
}

// deleteMatching deletes, one by one, the objects of a kind a step's
// filter selects, leaving those this Application manages and those
// another Application owns. It lists page by page, so that a namespace of
// many objects is never held whole.
func (r *ApplicationReconciler) deleteMatching(ctx context.Context, s *scope, env *provider.Env, c client.Client, cluster string, kind *unstructured.Unstructured, namespace string, labels map[string]string) error {
	return provider.ListPages(ctx, c, listOf(kind.GetAPIVersion(), kind.GetKind()), func(l client.ObjectList) error {
		list := l.(*unstructured.UnstructuredList)
		for i := range list.Items {
			item := &list.Items[i]
			desc := provider.Describe(item)
			if r.tracked(s, cluster, item) || foreignOwner(s.app, item) != "" {
				env.Log.V(decisionLevel).Info("Skipped by a workflow step's delete: managed by an Application", "object", desc)
				continue
			}
			err := c.Delete(ctx, item, client.Preconditions{UID: uidPtr(item.GetUID())}, client.PropagationPolicy("Background"))
			if apierrors.IsNotFound(err) {
				err = nil
			}
			env.Log.V(decisionLevel).Info("Deleted by a workflow step (its filter)", "object", desc, "cluster", v1beta1.ClusterKey(cluster), "error", errString(err))
			if err != nil {
				return err
			}
		}
		return nil
	}, client.InNamespace(namespace), client.MatchingLabels(labels))
}

// foreignOwner names the Application ("namespace/name") whose ownership
// labels an object carries, when that is not app; "" otherwise.
func foreignOwner(app *v1beta1.Application, obj *unstructured.Unstructured) string {
	l := obj.GetLabels()
	owner := apply.Applier{Owner: apply.Owner{Name: app.Name, Namespace: app.Namespace}}
	if l[v1beta1.LabelAppName] == "" || owner.Owns(obj) {
		return ""
	}
	return l[v1beta1.LabelAppNamespace] + "/" + l[v1beta1.LabelAppName]
}

func uidPtr(uid types.UID) *types.UID { return &uid }
