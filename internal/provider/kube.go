package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// KubeApp is what vela/kube's actions need of the Application whose step
// runs them; the controller implements it for one step of one pass.
// Every request an action sends goes through it, as the Application:
// the actions hold each object and namespace to env.Boundary first.
type KubeApp interface {
	// Client reaches a cluster ("" or "local" for the hub) as the
	// Application acts there: through its ServiceAccount when it has one.
	Client(ctx context.Context, cluster string) (client.Client, error)
	// Namespaced reports whether obj's kind is namespaced in cluster.
	Namespaced(ctx context.Context, cluster string, obj *unstructured.Unstructured) (bool, error)
	// Manages reports whether the Application's trackers record obj in
	// cluster: a step never deletes such an object (StateKeep would only
	// create it again).
	Manages(cluster string, obj *unstructured.Unstructured) bool
	// Apply records obj in the version's tracker, under the step,
	// before anything applies it; the controller applies it in a later
	// pass. It returns the live object once obj is recorded as it is
	// and applied, an error wrapping ErrPending until then, and a
	// *RefusedError for an object another part of the Application
	// applies.
	Apply(ctx context.Context, cluster string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Kube returns the `vela/kube` actions of one step, acting as app:
// "kube.read", "kube.list", "kube.delete", "kube.apply",
// "kube.apply-in-parallel" and "kube.patch". Reads, lists and deletes
// go to the cluster at once, bounded by env's result bound; applies and
// patches are recorded before they are applied (KubeApp.Apply).
func Kube(app KubeApp) Registry {
	k := kube{app: app}
	return Registry{
		"kube.read":              k.read,
		"kube.list":              k.list,
		"kube.delete":            k.delete,
		"kube.apply":             k.apply,
		"kube.apply-in-parallel": k.applyInParallel,
		"kube.patch":             k.patch,
	}
}

// kube carries out vela/kube's actions for one step.
type kube struct{ app KubeApp }

// kubeFilter selects the objects of a kind a list or delete names.
type kubeFilter struct {
	Namespace      string            `json:"namespace"`
	MatchingLabels map[string]string `json:"matchingLabels"`
}

// read reads one object ($returns.value); one missing, or that the
// Application may not read, comes back as it was asked for, with err.
func (k kube) read(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cluster string                     `json:"cluster"`
		Value   *unstructured.Unstructured `json:"value"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Value == nil {
		return nil, fmt.Errorf("parameters: want value, an object to read (%v)", err)
	}
	c, err := k.app.Client(ctx, p.Cluster)
	if err != nil {
		return nil, err
	}
	obj := p.Value
	if err := k.scoped(ctx, env, p.Cluster, obj, "default"); err != nil {
		return nil, err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return json.Marshal(map[string]any{"value": p.Value.Object, "err": err.Error()})
		}
		return nil, err
	}
	return json.Marshal(map[string]any{"value": obj.Object})
}

// list lists the objects of a kind in a namespace ($returns.values),
// page by page, within env's result bound.
func (k kube) list(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cluster  string `json:"cluster"`
		Resource struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		} `json:"resource"`
		Filter kubeFilter `json:"filter"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	c, err := k.app.Client(ctx, p.Cluster)
	if err != nil {
		return nil, err
	}
	kind := &unstructured.Unstructured{}
	kind.SetAPIVersion(p.Resource.APIVersion)
	kind.SetKind(p.Resource.Kind)
	if err := k.listBoundary(ctx, env, p.Cluster, kind, p.Filter.Namespace); err != nil {
		return nil, err
	}
	newList := listOf(p.Resource.APIVersion, p.Resource.Kind)
	out := newList().(*unstructured.UnstructuredList)
	budget := resultBudget{what: fmt.Sprintf("the list of %s in %q", p.Resource.Kind, p.Filter.Namespace), limit: env.maxResult()}
	err = listPages(ctx, c, newList, func(l client.ObjectList) error {
		for _, item := range l.(*unstructured.UnstructuredList).Items {
			if err := budget.add(item.Object); err != nil {
				return err
			}
			out.Items = append(out.Items, item)
		}
		return nil
	}, client.InNamespace(p.Filter.Namespace), client.MatchingLabels(p.Filter.MatchingLabels))
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, err
	}
	if err != nil {
		return json.Marshal(map[string]any{"values": out.UnstructuredContent(), "err": err.Error()})
	}
	return json.Marshal(map[string]any{"values": out.UnstructuredContent()})
}

// delete deletes one object, or, with a filter, the objects of its kind
// the filter selects; never one the Application manages, nor one another
// Application owns.
func (k kube) delete(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cluster string                     `json:"cluster"`
		Value   *unstructured.Unstructured `json:"value"`
		Filter  *kubeFilter                `json:"filter"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Value == nil {
		return nil, fmt.Errorf("parameters: want value, the object (or kind) to delete (%v)", err)
	}
	c, err := k.app.Client(ctx, p.Cluster)
	if err != nil {
		return nil, err
	}
	obj := p.Value
	if p.Filter != nil {
		if err := k.listBoundary(ctx, env, p.Cluster, obj, p.Filter.Namespace); err != nil {
			return nil, err
		}
		return nil, k.deleteMatching(ctx, env, c, p.Cluster, obj, *p.Filter)
	}
	if err := k.scoped(ctx, env, p.Cluster, obj, "default"); err != nil {
		return nil, err
	}
	if err := k.deleteOne(ctx, env, c, p.Cluster, obj); err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return nil, err
		}
		return json.Marshal(map[string]any{"value": obj.Object, "err": err.Error()})
	}
	return nil, nil
}

// apply applies one object, with a merge patch over it when given
// ($returns.value: the live object once applied).
func (k kube) apply(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
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
	live, err := k.app.Apply(ctx, p.Cluster, obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"value": live.Object})
}

// applyInParallel applies a list of objects: each is recorded in the
// same pass, and the action is pending until every one is applied.
func (k kube) applyInParallel(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
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
		live, err := k.app.Apply(ctx, p.Cluster, &unstructured.Unstructured{Object: v})
		if errors.Is(err, ErrPending) {
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
}

// patch reads an object (in the Application's namespace when it names
// none), merges the patch into it and applies the result
// ($returns.result).
func (k kube) patch(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Cluster string                     `json:"cluster"`
		Value   *unstructured.Unstructured `json:"value"`
		Patch   json.RawMessage            `json:"patch"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Value == nil {
		return nil, fmt.Errorf("parameters: want value and patch (%v)", err)
	}
	c, err := k.app.Client(ctx, p.Cluster)
	if err != nil {
		return nil, err
	}
	obj := p.Value
	if err := k.scoped(ctx, env, p.Cluster, obj, env.Namespace); err != nil {
		return nil, err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return nil, err
	}
	patched, err := mergeInto(cleanLive(obj.Object), p.Patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	live, err := k.app.Apply(ctx, p.Cluster, &unstructured.Unstructured{Object: patched})
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"result": live.Object})
}

// scoped gives an object a step names its namespace (none for a
// cluster-scoped kind, def when it has none) and holds it to the
// Application's boundary, as rendered objects are, before anything is
// read or sent.
func (k kube) scoped(ctx context.Context, env *Env, cluster string, obj *unstructured.Unstructured, def string) error {
	namespaced, err := k.app.Namespaced(ctx, cluster, obj)
	if err != nil {
		return err
	}
	switch {
	case !namespaced:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		obj.SetNamespace(def)
	}
	return Refused(env.Boundary.CheckObject(Describe(obj), namespaced, obj.GetNamespace()))
}

// listBoundary holds a step's list (or delete by filter) of a kind in a
// namespace to the Application's boundary: "" lists every namespace,
// which a confined Application may not.
func (k kube) listBoundary(ctx context.Context, env *Env, cluster string, kind *unstructured.Unstructured, namespace string) error {
	namespaced, err := k.app.Namespaced(ctx, cluster, kind)
	if err != nil {
		return err
	}
	b := env.Boundary
	what := fmt.Sprintf("the %s objects", kind.GetKind())
	switch {
	case !namespaced:
		return Refused(b.CheckClusterScoped(what))
	case namespace == "" && b.Confined:
		return Refused(b.CheckNamespace(what+" of every namespace", "*"))
	}
	return Refused(b.CheckNamespace(what, namespace))
}

// deleteOne deletes one object a step names, as the Application: never
// one this Application manages (StateKeep would only re-create it), nor
// one another Application owns.
func (k kube) deleteOne(ctx context.Context, env *Env, c client.Client, cluster string, obj *unstructured.Unstructured) error {
	desc := fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if k.app.Manages(cluster, obj) {
		return Refuse("%s is managed by this Application: a step does not delete it (remove it from the Application instead)", desc)
	}
	live := obj.DeepCopy()
	if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if owner := foreignOwner(env, live); owner != "" {
		return Refuse("%s belongs to Application %s: a step does not delete it", desc, owner)
	}
	err := c.Delete(ctx, live, client.Preconditions{UID: uidOf(live)}, client.PropagationPolicy("Background"))
	if apierrors.IsNotFound(err) {
		err = nil
	}
	env.Log.V(1).Info("Deleted by a workflow step", "object", desc, "cluster", v1beta1.ClusterKey(cluster), "error", errString(err))
	return err
}

// deleteMatching deletes, one by one, the objects of a kind a step's
// filter selects, leaving those this Application manages and those
// another Application owns. It lists page by page, so that a namespace of
// many objects is never held whole.
func (k kube) deleteMatching(ctx context.Context, env *Env, c client.Client, cluster string, kind *unstructured.Unstructured, f kubeFilter) error {
	return listPages(ctx, c, listOf(kind.GetAPIVersion(), kind.GetKind()), func(l client.ObjectList) error {
		list := l.(*unstructured.UnstructuredList)
		for i := range list.Items {
			item := &list.Items[i]
			desc := Describe(item)
			if k.app.Manages(cluster, item) || foreignOwner(env, item) != "" {
				env.Log.V(1).Info("Skipped by a workflow step's delete: managed by an Application", "object", desc)
				continue
			}
			err := c.Delete(ctx, item, client.Preconditions{UID: uidOf(item)}, client.PropagationPolicy("Background"))
			if apierrors.IsNotFound(err) {
				err = nil
			}
			env.Log.V(1).Info("Deleted by a workflow step (its filter)", "object", desc, "cluster", v1beta1.ClusterKey(cluster), "error", errString(err))
			if err != nil {
				return err
			}
		}
		return nil
	}, client.InNamespace(f.Namespace), client.MatchingLabels(f.MatchingLabels))
}

// foreignOwner names the Application ("namespace/name") whose ownership
// labels an object carries, when that is not env's; "" otherwise.
func foreignOwner(env *Env, obj *unstructured.Unstructured) string {
	l := obj.GetLabels()
	name, namespace := l[v1beta1.LabelAppName], l[v1beta1.LabelAppNamespace]
	if name == "" || (name == env.App && namespace == env.Namespace) {
		return ""
	}
	return namespace + "/" + name
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
