package chaos

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The workflow Application (issue 30): a component's ConfigMap, then a
// custom step of a WorkflowStepDefinition of the tenant's namespace whose
// vela/kube action applies a second ConfigMap with the same value. What
// the step applies is recorded before it is applied, so it is kept,
// replaced on a new version and deleted with the Application like the
// component's object, through controller kills and API server restarts.
const (
	flowApp     = "flow"
	flowCM      = "flow-cm"
	flowOut     = "flow-out"
	flowStepDef = "chaos-export"
)

// flowModel is what the suite expects of the workflow Application.
type flowModel struct {
	Exists bool
	Value  string
}

// installFlowStep creates the step definition in the tenant's namespace.
func installFlowStep(ctx context.Context, c client.Client) error {
	def := &v1beta1.WorkflowStepDefinition{}
	def.Name, def.Namespace = flowStepDef, chaosNS
	def.Spec.Schematic = &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: `import "vela/kube"
apply: kube.#Apply & {$params: value: {
	apiVersion: "v1"
	kind:       "ConfigMap"
	metadata: name: parameter.name
	data: v: parameter.value
}}
parameter: {
	name:  string
	value: string
}
`}}
	return c.Create(ctx, def)
}

// flowStep creates, changes or deletes the workflow Application. It ends
// the iteration.
func (h *harness) flowStep() step {
	m := h.world.Flow
	n := h.world.fresh()
	if !m.Exists || h.rng.IntN(4) != 0 {
		m.Exists, m.Value = true, fmt.Sprintf("f%d", n)
		return step{desc: fmt.Sprintf("app %s: value %s (a custom step applies %s)", flowApp, m.Value, flowOut), do: writeFlow, last: true}
	}
	m.Exists = false
	return step{desc: "delete app " + flowApp, last: true, do: func(ctx context.Context, h *harness) error {
		a := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: flowApp, Namespace: chaosNS}}
		return client.IgnoreNotFound(h.c.Delete(ctx, a))
	}}
}

// writeFlow writes the workflow Application from the model.
func writeFlow(ctx context.Context, h *harness) error {
	m := h.world.Flow
	return h.writeSpec(ctx, flowApp, map[string]any{
		"components": []any{map[string]any{"name": flowCM, "type": "k8s-objects", "properties": map[string]any{"objects": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": flowCM}, "data": map[string]any{"v": m.Value}},
		}}}},
		"workflow": map[string]any{"steps": []any{
			map[string]any{"name": "apply", "type": "apply-component", "properties": map[string]any{"component": flowCM}},
			map[string]any{"name": "export", "type": flowStepDef, "properties": map[string]any{"name": flowOut, "value": m.Value}},
		}},
	})
}

// flowNotQuiet says what the workflow Application still waits for: gone
// when deleted; else settled at its generation with its run succeeded.
func (h *harness) flowNotQuiet(ctx context.Context) []violation {
	m := h.world.Flow
	app, err := h.getApp(ctx, flowApp)
	v := func(format string, args ...any) []violation {
		return []violation{{Kind: kindNotSettled, Subject: "app " + flowApp, Detail: fmt.Sprintf(format, args...), App: flowApp}}
	}
	switch {
	case err != nil:
		return v("reading it: %v", err)
	case !m.Exists && app != nil:
		return []violation{{Kind: kindDeleteStuck, Subject: "app " + flowApp, App: flowApp,
			Detail: fmt.Sprintf("deleted but still there (finalizers %v)", app.Finalizers)}}
	case !m.Exists:
		return nil
	case app == nil:
		return v("missing")
	}
	if msg := settledMessage(app, &appModel{}); msg != "" {
		return v("%s", msg)
	}
	w := app.Status.Workflow
	if w == nil || !w.Finished || w.Phase != v1beta1.WorkflowPhaseSucceeded || w.AppRevision != fmt.Sprintf("%s-v%d", flowApp, app.Generation) {
		return v("waiting for the run of generation %d to succeed: %+v", app.Generation, w)
	}
	return nil
}

// flowInvariants: while the app exists, both ConfigMaps hold its value;
// once it is gone, nothing labelled for it is left, nor a tracker; never
// any other object labelled for it.
func (h *harness) flowInvariants(ctx context.Context, live map[string]liveObj) []violation {
	m := h.world.Flow
	var out []violation
	add := func(kind, subject, format string, args ...any) {
		out = append(out, violation{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...), App: flowApp})
	}
	for _, name := range []string{flowCM, flowOut} {
		cm, ok := live[objKey("ConfigMap", name)]
		switch {
		case m.Exists && !ok:
			add(kindMissing, "ConfigMap "+chaosNS+"/"+name, "does not exist; app %s has value %s", flowApp, m.Value)
		case m.Exists && cm.value != m.Value:
			add(kindContent, "ConfigMap "+chaosNS+"/"+name, "has %q, want %q", cm.value, m.Value)
		case !m.Exists && ok && cm.labels[v1beta1.LabelAppName] == flowApp:
			add(kindOrphan, "ConfigMap "+chaosNS+"/"+name, "app %s was deleted, its object is left", flowApp)
		}
	}
	for _, k := range sortedKeys(live) {
		l := live[k]
		if l.labels[v1beta1.LabelAppName] == flowApp && k != objKey("ConfigMap", flowCM) && k != objKey("ConfigMap", flowOut) {
			add(kindOrphan, l.kind+" "+chaosNS+"/"+l.name, "labelled for app %s, which applies only %s and %s", flowApp, flowCM, flowOut)
		}
	}
	if !m.Exists {
		rts, err := h.trackers(ctx, flowApp)
		if err != nil {
			return append(out, violation{Kind: kindNotSettled, Subject: "trackers of " + flowApp, Detail: err.Error(), App: flowApp})
		}
		for _, rt := range rts {
			add(kindTrackerStale, "resource tracker "+rt.Name, "app %s was deleted, its tracker is left", flowApp)
		}
	}
	return out
}
