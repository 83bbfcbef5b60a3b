package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/tracker"
)

// A step changes the model and says what to do to the cluster. Steps are
// chosen from the seed and the model; only the publishVersion rollback and
// tracker deletion read the cluster (which trackers exist), and only at a
// quiet moment.
type step struct {
	desc string
	do   func(ctx context.Context, h *harness) error
	// last ends the iteration: what a new publishVersion records is the
	// spec the controller first sees with it, so no other change may
	// follow it before a quiet period, or the model could not tell which
	// spec the version holds.
	last bool
}

// nextStep picks one change at random among those that make sense now.
// Steps that read the cluster (a rollback checks which trackers exist, a
// tracker deletion picks one) come only first in an iteration, at a quiet
// moment.
func (h *harness) nextStep(ctx context.Context, first bool) (step, error) {
	w := h.world
	app := w.Apps[appNames[h.rng.IntN(len(appNames))]]
	if !app.Exists {
		return h.createApp(app), nil
	}
	type choice struct {
		weight int
		make   func() (step, bool, error)
	}
	choices := []choice{
		{6, func() (step, bool, error) { return h.addComponent(app) }},
		{4, func() (step, bool, error) { return h.removeComponent(app) }},
		{6, func() (step, bool, error) { return h.changeValue(app) }},
		{4, func() (step, bool, error) {
			if !first {
				return step{}, false, nil
			}
			return h.publishVersion(ctx, app)
		}},
		{4, func() (step, bool, error) { return h.gcRule(app) }},
		{2, func() (step, bool, error) { return h.readOnlyRule(app) }},
		{2, func() (step, bool, error) { return h.applyOnceRule(app) }},
		{2, func() (step, bool, error) { return h.takeOver(app) }},
		{2, func() (step, bool, error) { return h.drift(app) }},
		{2, func() (step, bool, error) { return h.clientSideApplied(app) }},
		{3, func() (step, bool, error) {
			if !first {
				return step{}, false, nil
			}
			return h.deleteTracker(ctx, app)
		}},
		{2, func() (step, bool, error) { return h.deleteApp(app) }},
		{6, func() (step, bool, error) { return h.budgetStep(), true, nil }},
		{5, func() (step, bool, error) { return h.flowStep(), true, nil }},
	}
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	for range 20 {
		n := h.rng.IntN(total)
		for _, c := range choices {
			if n -= c.weight; n < 0 {
				s, ok, err := c.make()
				if err != nil || ok {
					return s, err
				}
				break
			}
		}
	}
	return h.changeValue2(app), nil
}

func (h *harness) newComponent(app *appModel, web bool) component {
	n := h.world.fresh()
	if web {
		return component{Name: fmt.Sprintf("%s-web-%d", app.Name, n), Web: true, Value: fmt.Sprintf("nginx:1.%d", n)}
	}
	return component{Name: fmt.Sprintf("%s-cm-%d", app.Name, n), Value: fmt.Sprintf("v%d", n)}
}

func (h *harness) writeApp(app *appModel) func(context.Context, *harness) error {
	return func(ctx context.Context, h *harness) error { return h.applyApp(ctx, app) }
}

func (h *harness) createApp(app *appModel) step {
	app.Exists = true
	app.Incarnation++
	app.Spec, app.PV, app.PVSpec = newSpec(), "", map[string]spec{}
	for range 1 + h.rng.IntN(2) {
		c := h.newComponent(app, h.rng.IntN(4) == 0)
		app.Spec.Components[c.Name] = c
	}
	h.world.settle(app, false)
	return step{desc: fmt.Sprintf("create app %s (incarnation %d) with %v", app.Name, app.Incarnation, sortedKeys(app.Spec.Components)),
		do: h.writeApp(app)}
}

func (h *harness) addComponent(app *appModel) (step, bool, error) {
	if len(app.Spec.Components) >= 4 {
		return step{}, false, nil
	}
	c := h.newComponent(app, h.rng.IntN(3) == 0)
	app.Spec.Components[c.Name] = c
	h.world.settle(app, false)
	return step{desc: fmt.Sprintf("app %s: add component %s (%s %s)", app.Name, c.Name, c.kind(), c.Value), do: h.writeApp(app)}, true, nil
}

func (h *harness) removeComponent(app *appModel) (step, bool, error) {
	names := sortedKeys(app.Spec.Components)
	if len(names) < 2 {
		return step{}, false, nil
	}
	name := names[h.rng.IntN(len(names))]
	delete(app.Spec.Components, name)
	h.world.settle(app, false)
	return step{desc: fmt.Sprintf("app %s: remove component %s", app.Name, name), do: h.writeApp(app)}, true, nil
}

func (h *harness) changeValue(app *appModel) (step, bool, error) {
	names := sortedKeys(app.Spec.Components)
	if len(names) == 0 {
		return step{}, false, nil
	}
	c := app.Spec.Components[names[h.rng.IntN(len(names))]]
	n := h.world.fresh()
	if c.Web {
		c.Value = fmt.Sprintf("nginx:1.%d", n)
	} else {
		c.Value = fmt.Sprintf("v%d", n)
	}
	app.Spec.Components[c.Name] = c
	h.world.settle(app, false)
	return step{desc: fmt.Sprintf("app %s: set %s of %s to %s", app.Name, map[bool]string{true: "image", false: "data.v"}[c.Web], c.Name, c.Value),
		do: h.writeApp(app)}, true, nil
}

// changeValue2 is the fallback when no other change applies: add a
// component.
func (h *harness) changeValue2(app *appModel) step {
	c := h.newComponent(app, false)
	app.Spec.Components[c.Name] = c
	h.world.settle(app, false)
	return step{desc: fmt.Sprintf("app %s: add component %s (%s %s)", app.Name, c.Name, c.kind(), c.Value), do: h.writeApp(app)}
}

// publishVersion sets a new publishVersion, goes back to an earlier one
// (a rollback when its tracker still exists), or removes the annotation.
func (h *harness) publishVersion(ctx context.Context, app *appModel) (step, bool, error) {
	var earlier []string
	for pv := range app.PVSpec {
		if pv != app.PV {
			earlier = append(earlier, pv)
		}
	}
	slices.Sort(earlier)
	r := h.rng.IntN(3)
	switch {
	case r == 0 && app.PV != "":
		app.PV = ""
		h.world.settle(app, false)
		return step{desc: fmt.Sprintf("app %s: remove publishVersion", app.Name), do: h.writeApp(app)}, true, nil
	case r == 1 && len(earlier) > 0:
		pv := earlier[h.rng.IntN(len(earlier))]
		exists, err := h.trackerExists(ctx, app, tracker.Published(pv))
		if err != nil {
			return step{}, false, err
		}
		desc := fmt.Sprintf("app %s: publishVersion back to %s (its tracker exists: rollback to %v)", app.Name, pv, sortedKeys(app.PVSpec[pv].Components))
		if !exists {
			app.PVSpec[pv] = app.Spec.clone()
			desc = fmt.Sprintf("app %s: publishVersion back to %s (its tracker is gone: renders the current spec)", app.Name, pv)
		}
		app.PV = pv
		h.world.settle(app, false)
		return step{desc: desc, do: h.writeApp(app), last: true}, true, nil
	default:
		pv := fmt.Sprintf("p%d", h.world.fresh())
		app.PV = pv
		app.PVSpec[pv] = app.Spec.clone()
		h.world.settle(app, false)
		return step{desc: fmt.Sprintf("app %s: publishVersion %s", app.Name, pv), do: h.writeApp(app), last: true}, true, nil
	}
}

// componentNames are the components a rule may select: those of the spec
// and those the app rendered before (their objects may be kept).
func (h *harness) componentNames(app *appModel) []string {
	set := map[string]bool{}
	for name := range app.Spec.Components {
		set[name] = true
	}
	for _, o := range h.world.Objects {
		if o.App == app.Name && !o.Untracked && o.State != absent {
			set[o.Comp] = true
		}
	}
	return sortedKeys(set)
}

func (h *harness) gcRule(app *appModel) (step, bool, error) {
	names := h.componentNames(app)
	if len(names) == 0 {
		return step{}, false, nil
	}
	name := names[h.rng.IntN(len(names))]
	strategy := []string{"never", "onAppDelete", ""}[h.rng.IntN(3)]
	if app.Spec.GC[name] == strategy {
		return step{}, false, nil
	}
	if strategy == "" {
		delete(app.Spec.GC, name)
	} else {
		app.Spec.GC[name] = strategy
	}
	h.world.settle(app, false)
	desc := fmt.Sprintf("app %s: garbage-collect %s for %s", app.Name, strategy, name)
	if strategy == "" {
		desc = fmt.Sprintf("app %s: remove the garbage-collect rule of %s", app.Name, name)
	}
	return step{desc: desc, do: h.writeApp(app)}, true, nil
}

func (h *harness) readOnlyRule(app *appModel) (step, bool, error) {
	if len(app.Spec.ReadOnly) > 0 && h.rng.IntN(2) == 0 {
		names := sortedKeys(app.Spec.ReadOnly)
		name := names[h.rng.IntN(len(names))]
		delete(app.Spec.ReadOnly, name)
		h.world.settle(app, false)
		return step{desc: fmt.Sprintf("app %s: remove read-only of %s", app.Name, name), do: h.writeApp(app)}, true, nil
	}
	// Only an object that exists may be made read-only: a missing one
	// fails the dispatch (ResourceMissing), which is not what this tests.
	// The model says what will exist once the controller has caught up,
	// so the step waits for the object to be there: a component added in
	// the same iteration may not be applied yet.
	objs := map[string]*object{}
	for _, o := range h.world.Objects {
		if o.App == app.Name && o.State == present && !o.Untracked && !app.Spec.ReadOnly[o.Comp] {
			objs[o.Comp] = o
		}
	}
	if len(objs) == 0 {
		return step{}, false, nil
	}
	names := sortedKeys(objs)
	name := names[h.rng.IntN(len(names))]
	o := objs[name]
	app.Spec.ReadOnly[name] = true
	h.world.settle(app, false)
	write := h.writeApp(app)
	return step{desc: fmt.Sprintf("app %s: read-only %s", app.Name, name), do: func(ctx context.Context, h *harness) error {
		if err := h.waitExists(ctx, o, 2*time.Minute); err != nil {
			return err
		}
		return write(ctx, h)
	}}, true, nil
}

// waitExists waits until the model object o is on the API server.
func (h *harness) waitExists(ctx context.Context, o *object, timeout time.Duration) error {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	if o.Kind == "Deployment" {
		u.SetAPIVersion("apps/v1")
	}
	u.SetKind(o.Kind)
	deadline := time.Now().Add(timeout)
	for {
		err := h.c.Get(ctx, client.ObjectKey{Namespace: chaosNS, Name: o.Name}, u)
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s/%s: not created after %s, cannot make it read-only", o.Kind, chaosNS, o.Name, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (h *harness) applyOnceRule(app *appModel) (step, bool, error) {
	names := h.componentNames(app)
	if len(names) == 0 {
		return step{}, false, nil
	}
	name := names[h.rng.IntN(len(names))]
	desc := fmt.Sprintf("app %s: apply-once (onStateKeep) for %s", app.Name, name)
	if app.Spec.ApplyOnce[name] {
		delete(app.Spec.ApplyOnce, name)
		desc = fmt.Sprintf("app %s: remove apply-once of %s", app.Name, name)
	} else {
		app.Spec.ApplyOnce[name] = true
	}
	h.world.settle(app, false)
	return step{desc: desc, do: h.writeApp(app)}, true, nil
}

// takeOver creates a ConfigMap no Application owns and a component, with
// a take-over rule, that renders it; or drops the rule of a component
// already adopted.
func (h *harness) takeOver(app *appModel) (step, bool, error) {
	for _, name := range sortedKeys(app.Spec.TakeOver) {
		if o := h.world.Objects[objKey("ConfigMap", name)]; o != nil && o.State == present && app.PV == "" && h.rng.IntN(2) == 0 {
			delete(app.Spec.TakeOver, name)
			h.world.settle(app, false)
			return step{desc: fmt.Sprintf("app %s: remove the take-over rule of %s (already adopted)", app.Name, name), do: h.writeApp(app)}, true, nil
		}
	}
	if len(app.Spec.Components) >= 4 {
		return step{}, false, nil
	}
	n := h.world.fresh()
	c := component{Name: fmt.Sprintf("%s-adopt-%d", app.Name, n), Value: fmt.Sprintf("v%d", n)}
	app.Spec.Components[c.Name] = c
	app.Spec.TakeOver[c.Name] = true
	h.world.settle(app, false)
	return step{desc: fmt.Sprintf("app %s: create unowned ConfigMap %s, then add it as component with a take-over rule", app.Name, c.Name),
		do: func(ctx context.Context, h *harness) error {
			cm := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": c.Name, "namespace": chaosNS},
				"data":     map[string]any{"v": "unowned"},
			}}
			if err := h.c.Create(ctx, cm); err != nil {
				return fmt.Errorf("creating unowned ConfigMap %s: %w", c.Name, err)
			}
			return h.applyApp(ctx, app)
		}}, true, nil
}

// drift edits data.v of a ConfigMap the app manages by hand: StateKeep
// sets it back, unless an apply-once rule (or read-only) lets it stay.
// pickConfigMap picks one of the app's present ConfigMaps whose content
// the checks compare; nil when there is none.
func (h *harness) pickConfigMap(app *appModel) *object {
	var objs []*object
	for _, k := range sortedKeys(h.world.Objects) {
		if o := h.world.Objects[k]; o.App == app.Name && o.Kind == "ConfigMap" && o.State == present && o.CheckContent {
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 {
		return nil
	}
	return objs[h.rng.IntN(len(objs))]
}

func (h *harness) drift(app *appModel) (step, bool, error) {
	o := h.pickConfigMap(app)
	if o == nil {
		return step{}, false, nil
	}
	value := fmt.Sprintf("drift-%d", h.world.fresh())
	return step{desc: fmt.Sprintf("edit data.v of ConfigMap %s by hand to %s", o.Name, value),
		do: func(ctx context.Context, h *harness) error {
			cm := &unstructured.Unstructured{}
			cm.SetAPIVersion("v1")
			cm.SetKind("ConfigMap")
			cm.SetNamespace(chaosNS)
			cm.SetName(o.Name)
			patch := []byte(fmt.Sprintf(`{"data":{"v":%q}}`, value))
			err := h.c.Patch(ctx, cm, client.RawPatch("application/merge-patch+json", patch))
			if apierrors.IsNotFound(err) {
				return nil // a violation the checks report
			}
			return err
		}}, true, nil
}

// staleKey is the field clientSideApplied adds to a ConfigMap and to its
// last-applied annotation: one the manifest does not have, which the
// upgrade to server-side apply must remove.
const staleKey = "stale"

// clientSideApplied rewrites one of the app's ConfigMaps as KubeVela (or
// a client-side Steward) would have left it: its last-applied annotation
// holds the manifest plus a field the manifest does not have, set live
// too, by KubeVela's field manager. Steward must upgrade it in place: the
// field and the annotation go, the UID stays.
func (h *harness) clientSideApplied(app *appModel) (step, bool, error) {
	o := h.pickConfigMap(app)
	if o == nil {
		return step{}, false, nil
	}
	return step{desc: fmt.Sprintf("make ConfigMap %s look client-side applied by KubeVela, with data.%s", o.Name, staleKey),
		do: func(ctx context.Context, h *harness) error {
			err := controllertest.MakeClientSideApplied(ctx, h.c, chaosNS, o.Name, staleKey)
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				return nil // gone (a violation the checks report), or changed meanwhile: nothing was written
			}
			return err
		}}, true, nil
}

// deleteTracker deletes one of the app's trackers by hand: the current
// version's, the root or an older one.
func (h *harness) deleteTracker(ctx context.Context, app *appModel) (step, bool, error) {
	live, err := h.getApp(ctx, app.Name)
	if err != nil || live == nil {
		return step{}, false, err
	}
	rts, err := h.trackers(ctx, app.Name)
	if err != nil {
		return step{}, false, err
	}
	var names []string
	for _, rt := range rts {
		if rt.Spec.Type != v1beta1.ResourceTrackerTypeComponentRevision && rt.Labels[v1beta1.LabelAppUID] == string(live.UID) {
			names = append(names, rt.Name)
		}
	}
	if len(names) == 0 {
		return step{}, false, nil
	}
	slices.Sort(names)
	name := names[h.rng.IntN(len(names))]
	// Steward re-creates a tracker deleted by hand as a copy of itself
	// (docs/concepts.md): the version it records, and a rollback to it,
	// are unchanged.
	h.world.settle(app, false)
	return step{desc: fmt.Sprintf("delete resource tracker %s by hand", name),
		do: func(ctx context.Context, h *harness) error {
			rt := &v1beta1.ResourceTracker{}
			rt.Name = name
			return client.IgnoreNotFound(h.c.Delete(ctx, rt))
		}}, true, nil
}

func (h *harness) deleteApp(app *appModel) (step, bool, error) {
	h.world.settle(app, true)
	app.Exists = false
	app.Spec, app.PV, app.PVSpec = newSpec(), "", map[string]spec{}
	return step{desc: fmt.Sprintf("delete app %s", app.Name),
		do: func(ctx context.Context, h *harness) error {
			a := &v1beta1.Application{}
			a.Name, a.Namespace = app.Name, chaosNS
			return client.IgnoreNotFound(h.c.Delete(ctx, a))
		}}, true, nil
}

// applyApp writes the Application from the model: created when missing,
// else spec and publishVersion updated (finalizers and status left alone).
func (h *harness) applyApp(ctx context.Context, app *appModel) error {
	desired := appObject(app)
	// A re-creation waits for the previous incarnation to go: writing the
	// spec of an Application being deleted is not re-creating it.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		live, err := h.getApp(ctx, app.Name)
		if err != nil {
			return err
		}
		if live == nil || live.DeletionTimestamp.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("app %s: the deleted incarnation is still there after 2m (finalizers %v); cannot re-create it", app.Name, live.Finalizers)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(desired.GroupVersionKind())
		err := h.c.Get(ctx, client.ObjectKeyFromObject(desired), live)
		if apierrors.IsNotFound(err) {
			return h.c.Create(ctx, desired.DeepCopy())
		}
		if err != nil {
			return err
		}
		live.Object["spec"] = desired.Object["spec"]
		ann := live.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		if app.PV == "" {
			delete(ann, v1beta1.AnnotationPublishVersion)
		} else {
			ann[v1beta1.AnnotationPublishVersion] = app.PV
		}
		live.SetAnnotations(ann)
		return h.c.Update(ctx, live)
	})
}

// appObject renders the model of an app as an Application.
func appObject(app *appModel) *unstructured.Unstructured {
	s := app.Spec
	var comps []any
	for _, name := range sortedKeys(s.Components) {
		c := s.Components[name]
		if c.Web {
			comps = append(comps, map[string]any{"name": name, "type": "webservice",
				"properties": map[string]any{"image": c.Value}})
			continue
		}
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"v": c.Value}}
		comps = append(comps, map[string]any{"name": name, "type": "k8s-objects",
			"properties": map[string]any{"objects": []any{cm}}})
	}
	var policies []any
	selector := func(names ...string) map[string]any {
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = n
		}
		return map[string]any{"componentNames": list}
	}
	if len(s.GC) > 0 {
		var rules []any
		for _, name := range sortedKeys(s.GC) {
			rules = append(rules, map[string]any{"selector": selector(name), "strategy": s.GC[name]})
		}
		policies = append(policies, map[string]any{"name": "gc", "type": "garbage-collect", "properties": map[string]any{"rules": rules}})
	}
	if len(s.ReadOnly) > 0 {
		policies = append(policies, map[string]any{"name": "read-only", "type": "read-only",
			"properties": map[string]any{"rules": []any{map[string]any{"selector": selector(sortedKeys(s.ReadOnly)...)}}}})
	}
	if len(s.ApplyOnce) > 0 {
		policies = append(policies, map[string]any{"name": "apply-once", "type": "apply-once",
			"properties": map[string]any{"enable": true, "rules": []any{map[string]any{
				"selector": selector(sortedKeys(s.ApplyOnce)...),
				"strategy": map[string]any{"path": []any{"data.v"}, "affect": "onStateKeep"}}}}})
	}
	if len(s.TakeOver) > 0 {
		policies = append(policies, map[string]any{"name": "take-over", "type": "take-over",
			"properties": map[string]any{"rules": []any{map[string]any{"selector": selector(sortedKeys(s.TakeOver)...)}}}})
	}
	specObj := map[string]any{"components": comps}
	if comps == nil {
		specObj["components"] = []any{}
	}
	if len(policies) > 0 {
		specObj["policies"] = policies
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta1.GroupVersion.String(), "kind": "Application",
		"metadata": map[string]any{"name": app.Name, "namespace": chaosNS},
		"spec":     specObj,
	}}
	if app.PV != "" {
		u.SetAnnotations(map[string]string{v1beta1.AnnotationPublishVersion: app.PV})
	}
	return u
}

func (h *harness) getApp(ctx context.Context, name string) (*v1beta1.Application, error) {
	app := &v1beta1.Application{}
	err := h.c.Get(ctx, client.ObjectKey{Namespace: chaosNS, Name: name}, app)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return app, err
}

func (h *harness) trackers(ctx context.Context, app string) ([]v1beta1.ResourceTracker, error) {
	var list v1beta1.ResourceTrackerList
	err := h.c.List(ctx, &list, client.MatchingLabels{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: chaosNS})
	return list.Items, err
}

func (h *harness) trackerExists(ctx context.Context, app *appModel, k tracker.Kind) (bool, error) {
	live, err := h.getApp(ctx, app.Name)
	if err != nil || live == nil {
		return false, err
	}
	rt := &v1beta1.ResourceTracker{}
	err = h.c.Get(ctx, client.ObjectKey{Name: tracker.Name(app.Name, chaosNS, k)}, rt)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return rt.Labels[v1beta1.LabelAppUID] == string(live.UID), nil
}
