package chaos

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/sandbox/sandboxtest"
	"github.com/steward-oam/steward/internal/tracker"
)

// The tenant's Application: one ConfigMap and, now and then, a component
// of a definition of the tenant's own namespace whose template no
// evaluation budget affords (issue 27). While it has one, nothing of its
// spec renders: the version before stays applied and kept, and its
// deletion deletes what that version applied.
const (
	budgetApp  = "budget"
	budgetCM   = "budget-cm"
	busterType = "chaos-buster"
)

// budgetModel is what the suite expects of the tenant's Application.
type budgetModel struct {
	Exists bool
	// Value is the ConfigMap's data.v in the spec.
	Value string
	// Busted: the spec has the budget-busting component.
	Busted bool
	// Applied is the value of the last spec that rendered, "" when none
	// did (since the app was created).
	Applied string
}

// installBuster creates the busting definition in the tenant's namespace.
func installBuster(ctx context.Context, c client.Client) error {
	def := &v1beta1.ComponentDefinition{}
	def.Name, def.Namespace = busterType, chaosNS
	def.Spec.Schematic = &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: sandboxtest.Doubling(40)}}
	return c.Create(ctx, def)
}

// budgetStep changes the tenant's Application: creates it, deletes it,
// adds or removes the busting component, or changes the value. It ends
// the iteration: whether a spec that renders is applied before the next
// change is a race, and what stays after a busting change depends on it.
func (h *harness) budgetStep() step {
	m := h.world.Budget
	n := h.world.fresh()
	if !m.Exists {
		m.Exists, m.Value, m.Busted, m.Applied = true, fmt.Sprintf("b%d", n), h.rng.IntN(3) == 0, ""
		m.settle()
		return step{desc: fmt.Sprintf("create app %s (value %s, busting %v)", budgetApp, m.Value, m.Busted), do: writeBudget, last: true}
	}
	switch h.rng.IntN(5) {
	case 0:
		m.Exists, m.Applied = false, ""
		return step{desc: "delete app " + budgetApp, last: true, do: func(ctx context.Context, h *harness) error {
			a := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: budgetApp, Namespace: chaosNS}}
			return client.IgnoreNotFound(h.c.Delete(ctx, a))
		}}
	case 1, 2:
		m.Busted = !m.Busted
	default:
		m.Value = fmt.Sprintf("b%d", n)
	}
	m.settle()
	return step{desc: fmt.Sprintf("app %s: value %s, busting %v", budgetApp, m.Value, m.Busted), do: writeBudget, last: true}
}

// settle: a spec without the busting component renders.
func (m *budgetModel) settle() {
	if m.Exists && !m.Busted {
		m.Applied = m.Value
	}
}

// writeBudget writes the tenant's Application from the model, waiting for
// a deleted incarnation to go first.
func writeBudget(ctx context.Context, h *harness) error {
	m := h.world.Budget
	comps := []any{map[string]any{"name": budgetCM, "type": "k8s-objects", "properties": map[string]any{"objects": []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": budgetCM}, "data": map[string]any{"v": m.Value}},
	}}}}
	if m.Busted {
		comps = append(comps, map[string]any{"name": "buster", "type": busterType})
	}
	return h.writeSpec(ctx, budgetApp, map[string]any{"components": comps})
}

// budgetNotQuiet says what the tenant's Application is still waiting
// for: gone when deleted; else its generation seen, and either rendered,
// dispatched, kept and collected, or refused with reason
// EvaluationBudgetExceeded while it has the busting component.
func (h *harness) budgetNotQuiet(ctx context.Context) []violation {
	m := h.world.Budget
	app, err := h.getApp(ctx, budgetApp)
	v := func(format string, args ...any) []violation {
		return []violation{{Kind: kindNotSettled, Subject: "app " + budgetApp, Detail: fmt.Sprintf(format, args...), App: budgetApp}}
	}
	switch {
	case err != nil:
		return v("reading it: %v", err)
	case !m.Exists && app != nil:
		return []violation{{Kind: kindDeleteStuck, Subject: "app " + budgetApp, App: budgetApp,
			Detail: fmt.Sprintf("deleted but still there (finalizers %v)", app.Finalizers)}}
	case !m.Exists:
		return nil
	case app == nil:
		return v("missing")
	case !m.Busted:
		if msg := settledMessage(app, &appModel{}); msg != "" {
			return v("%s", msg)
		}
		return nil
	}
	gen := app.Generation
	c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionRendered)
	if app.Status.ObservedGeneration != gen || c == nil || c.ObservedGeneration != gen || c.Reason != v1beta1.ReasonEvaluationBudgetExceeded {
		return v("waiting for Rendered=False (EvaluationBudgetExceeded) at generation %d: %s", gen, condString(app, v1beta1.ConditionRendered))
	}
	return nil
}

// budgetInvariants: the ConfigMap holds the value of the last spec that
// rendered (none when none did, or the app is gone), nothing else is
// labelled for the app, and no version of a busting spec was recorded.
func (h *harness) budgetInvariants(ctx context.Context, live map[string]liveObj) []violation {
	m := h.world.Budget
	var out []violation
	add := func(kind, subject, format string, args ...any) {
		out = append(out, violation{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...), App: budgetApp})
	}
	cm, ok := live[objKey("ConfigMap", budgetCM)]
	switch {
	case m.Applied != "" && !ok:
		add(kindMissing, "ConfigMap "+chaosNS+"/"+budgetCM, "does not exist; the version of value %s is the live one (busting %v)", m.Applied, m.Busted)
	case m.Applied != "" && cm.value != m.Applied:
		add(kindContent, "ConfigMap "+chaosNS+"/"+budgetCM, "has %q, want %q: a spec that did not render was applied, or the live version was not kept (busting %v)", cm.value, m.Applied, m.Busted)
	case m.Applied == "" && ok && cm.labels[v1beta1.LabelAppName] == budgetApp:
		add(kindOrphan, "ConfigMap "+chaosNS+"/"+budgetCM, "exists, but no version of app %s rendered (exists %v, busting %v)", budgetApp, m.Exists, m.Busted)
	}
	for _, k := range sortedKeys(live) {
		l := live[k]
		if l.labels[v1beta1.LabelAppName] == budgetApp && k != objKey("ConfigMap", budgetCM) {
			add(kindOrphan, l.kind+" "+chaosNS+"/"+l.name, "labelled for app %s, which renders only %s", budgetApp, budgetCM)
		}
	}
	rts, err := h.trackers(ctx, budgetApp)
	if err != nil {
		return append(out, violation{Kind: kindNotSettled, Subject: "trackers of " + budgetApp, Detail: err.Error(), App: budgetApp})
	}
	if !m.Exists {
		for _, rt := range rts {
			add(kindTrackerStale, "resource tracker "+rt.Name, "app %s was deleted, its tracker is left", budgetApp)
		}
		return out
	}
	if m.Busted {
		app, err := h.getApp(ctx, budgetApp)
		if err != nil || app == nil {
			return out
		}
		busted := tracker.Name(budgetApp, chaosNS, tracker.VersionOf(app))
		for _, rt := range rts {
			if rt.Name == busted {
				add(kindBustedRecorded, "resource tracker "+rt.Name, "records generation %d, whose spec did not render", app.Generation)
			}
		}
	}
	return out
}

// writeSpec creates an Application of the chaos namespace with spec, or
// sets the spec of the one there, waiting for a deleted incarnation to go
// first (writing the spec of an Application being deleted is not
// re-creating it).
func (h *harness) writeSpec(ctx context.Context, name string, spec map[string]any) error {
	desired := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta1.GroupVersion.String(), "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": chaosNS},
		"spec":     spec,
	}}
	if err := h.waitGone(ctx, name); err != nil {
		return err
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
		return h.c.Update(ctx, live)
	})
}

// waitGone waits, at most two minutes, for a deleted incarnation of an
// app to go: writing the spec of an Application being deleted is not
// re-creating it.
func (h *harness) waitGone(ctx context.Context, name string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		app, err := h.getApp(ctx, name)
		if err != nil {
			return err
		}
		if app == nil || app.DeletionTimestamp.IsZero() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("app %s: the deleted incarnation is still there after 2m (finalizers %v)", name, app.Finalizers)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
